/**
 * Events waiting to be delivered as webhooks. An event is appended in the same unit of work as
 * the change it reports, so a committed change always has its event and a rolled-back one never
 * does. Delivery (retries, signatures) is `@cobro/webhooks`'s work.
 */
import { Chunk, Context, DateTime, Effect, HashMap, Layer, Option, Schema } from "effect"
import { EventId, UserId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export const EventType = Schema.Literal(
  "payment.updated",
  "customer.payment_received",
  "account.activated",
  "split.funds_received",
  "split.payouts_result"
)
export type EventType = typeof EventType.Type

export class OutboxEvent extends Class<OutboxEvent>("OutboxEvent")({
  event_id: EventId,
  type: EventType,
  /** The account whose client secret signs the delivery. */
  user_id: UserId,
  /** Where to deliver; null when the resource has no webhook URL (kept for the record). */
  webhook_url: Schema.NullOr(Schema.String),
  /** The body, exactly as SPEC's Events table. */
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Timestamp
}) {}

export class Outbox extends Context.Tag("@cobro/core/Outbox")<
  Outbox,
  {
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

/** SPEC's fixed text of "Payment updated" events. */
export const paymentUpdatedMessage = "Payment updated"

/** Builds an event stamped with a fresh id and the current time. */
export const makeEvent = (input: {
  readonly type: EventType
  readonly user_id: UserId
  readonly webhook_url: string | null
  readonly payload: Record<string, unknown>
}) =>
  Effect.gen(function* () {
    return new OutboxEvent({
      ...input,
      event_id: EventId.make(yield* newId("evt")),
      created_at: yield* DateTime.now
    })
  })

export const makeMemory = Effect.gen(function* () {
  const state = yield* makeRef({
    log: Chunk.empty<OutboxEvent>(),
    byId: HashMap.empty<EventId, OutboxEvent>()
  })
  const appendAll = (events: ReadonlyArray<OutboxEvent>) =>
    state.update((s) => ({
      log: Chunk.appendAll(s.log, Chunk.fromIterable(events)),
      byId: events.reduce((byId, event) => HashMap.set(byId, event.event_id, event), s.byId)
    }))
  return Outbox.of({
    append: (event) => appendAll([event]),
    appendAll,
    findById: (id) => Effect.map(state.get, (s) => HashMap.get(s.byId, id)),
    list: (after, limit) =>
      Effect.map(state.get, (s) =>
        Chunk.toReadonlyArray(
          Chunk.map(Chunk.take(Chunk.drop(s.log, after), limit), (event, i) => ({
            position: after + i + 1,
            event
          }))
        )
      )
  })
})

export const layerMemory: Layer.Layer<Outbox, never, MemoryDb> = Layer.effect(Outbox, makeMemory)
