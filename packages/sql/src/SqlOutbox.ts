/**
 * `Outbox` over `SqlClient`: events are rows written in the same transaction as their change,
 * and with them the delivery rows core's `deliveriesOf` decides (`cobro_webhook_deliveries`), so
 * an event is never written without the work of delivering it.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Outbox as Port } from "@cobro/core"
import { WebhookDeliveryRepository } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import { encodedDelivery, insertDeliveries } from "./internal/deliveries.js"
import { encodedRow } from "./internal/outboxRow.js"
import {
  Doc,
  DocOnly,
  execute,
  findAll,
  findOne,
  orDie,
  statementsAreRoundTrips,
  together
} from "./internal/sql.js"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const insertEvents = (events: ReadonlyArray<Port.OutboxEvent>) =>
    orDie(execute(sql`INSERT INTO cobro_outbox ${sql.insert(events.map(encodedRow))}`))
  const storeDeliveries = insertDeliveries(sql)

  /**
   * Postgres: the events and their deliveries in one statement (a data-modifying CTE), one round
   * trip instead of two, atomic by itself.
   */
  const insertBoth = (
    events: ReadonlyArray<Port.OutboxEvent>,
    deliveries: ReadonlyArray<WebhookDeliveryRepository.WebhookDelivery>
  ) =>
    orDie(
      Effect.suspend(() =>
        execute(sql`WITH events AS (INSERT INTO cobro_outbox ${sql.insert(events.map(encodedRow))})
        INSERT INTO cobro_webhook_deliveries ${sql.insert(deliveries.map(encodedDelivery))}`)
      )
    )
  const atOnce = statementsAreRoundTrips(sql)

  /** Both tables or neither, also when called outside a unit of work. */
  const appendAll = (events: ReadonlyArray<Port.OutboxEvent>) => {
    if (events.length === 0) return Effect.void
    const deliveries = WebhookDeliveryRepository.deliveriesOf(events)
    if (deliveries.length === 0) return insertEvents(events)
    return atOnce
      ? insertBoth(events, deliveries)
      : orDie(together(sql)(Effect.zipRight(insertEvents(events), storeDeliveries(deliveries))))
  }

  const findById = findOne({
    Request: Ids.EventId,
    Result: DocOnly(Port.OutboxEvent),
    execute: (id) => sql`SELECT doc FROM cobro_outbox WHERE event_id = ${id}`
  })

  const list = findAll({
    Request: Schema.Struct({ after: Schema.Number, limit: Schema.Number }),
    Result: Schema.Struct({
      position: Schema.Union(Schema.Number, Schema.NumberFromString),
      doc: Doc(Port.OutboxEvent)
    }),
    execute: ({ after, limit }) =>
      sql`SELECT position, doc FROM cobro_outbox WHERE position > ${after} ORDER BY position LIMIT ${limit}`
  })

  return Port.Outbox.of({
    append: (event) => appendAll([event]),
    appendAll,
    findById,
    list: (after, limit) =>
      Effect.map(list({ after, limit }), (rows) =>
        rows.map(({ position, doc }) => ({ position, event: doc }))
      )
  })
})

export const layer: Layer.Layer<Port.Outbox, never, SqlClient.SqlClient> = Layer.effect(Port.Outbox, make)
