/**
 * Events waiting to be delivered as webhooks. An event is appended in the same unit of work as
 * the change it reports, so a committed change always has its event and a rolled-back one never
 * does; the append also stores the event's delivery rows (`WebhookDelivery.deliveriesOf`), so an
 * event is never written without the work of delivering it. Delivery (retries, signatures) is
 * `@cobro/webhooks`'s work.
 */
import { Chunk, Context, Effect, HashMap, Layer, type Option } from "effect"
import type { EventId } from "../Ids.js"
import { logAfter, makeRef, MemoryDb } from "../internal/memoryDb.js"
import { webhookTables } from "./memoryTables.js"
import type { OutboxEvent } from "./OutboxEvent.js"
import { deliveriesOf } from "./WebhookDelivery.js"

export { EventType, makeEvent, OutboxEvent, paymentUpdatedMessage } from "./OutboxEvent.js"

export class Outbox extends Context.Tag("@cobro/core/Outbox")<
  Outbox,
  {
    /** Stores the event and its delivery rows, as one. */
    readonly append: (event: OutboxEvent) => Effect.Effect<void>
    /** `append` of several events, in order, as one: all or none. */
    readonly appendAll: (events: ReadonlyArray<OutboxEvent>) => Effect.Effect<void>
    readonly findById: (id: EventId) => Effect.Effect<Option.Option<OutboxEvent>>
    /** Events in append order after `position` (0 = from the start). */
    readonly list: (
      after: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<{ readonly position: number; readonly event: OutboxEvent }>>
  }
>() {}

export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const tables = yield* webhookTables
  const state = yield* makeRef({
    log: Chunk.empty<OutboxEvent>(),
    byId: HashMap.empty<EventId, OutboxEvent>()
  })
  const appendAll = (events: ReadonlyArray<OutboxEvent>) => {
    const deliveries = deliveriesOf(events)
    const appendEvents = state.update((s) => ({
      log: Chunk.appendAll(s.log, Chunk.fromIterable(events)),
      byId: events.reduce((byId, event) => HashMap.set(byId, event.event_id, event), s.byId)
    }))
    return deliveries.length === 0
      ? appendEvents
      : db.transaction(
          Effect.zipRight(
            appendEvents,
            tables.update((t) => ({
              ...t,
              deliveries: deliveries.reduce((all, d) => HashMap.set(all, d.event_id, d), t.deliveries)
            }))
          )
        )
  }
  return Outbox.of({
    append: (event) => appendAll([event]),
    appendAll,
    findById: (id) => Effect.map(state.get, (s) => HashMap.get(s.byId, id)),
    list: (after, limit) =>
      Effect.map(state.get, (s) => logAfter(s.log, after, limit, (event, position) => ({ position, event })))
  })
})

export const layerMemory: Layer.Layer<Outbox, never, MemoryDb> = Layer.effect(Outbox, makeMemory)
