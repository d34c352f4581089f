/**
 * `Outbox` over `SqlClient`: events are rows written in the same transaction as their change.
 * An event with a webhook URL gets its pending delivery row (`cobro_webhook_deliveries`) in the
 * same transaction, so an event is never written without the work of delivering it.
 */
import { SqlClient } from "@effect/sql"
import { Outbox as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { insertPending } from "./internal/deliveries.js"
import { decodeJson, encodeJson, millis, together } from "./internal/sql.js"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(Port.OutboxEvent)
  const decode = decodeJson(Port.OutboxEvent)
  /** Both tables or neither, also when called outside a unit of work. */
  const appendAll = (events: ReadonlyArray<Port.OutboxEvent>) => {
    if (events.length === 0) return Effect.void
    const insert = sql`INSERT INTO cobro_outbox ${sql.insert(
      events.map((event) => ({
        event_id: event.event_id,
        type: event.type,
        user_id: event.user_id,
        doc: encode(event),
        created_ms: millis(event.created_at)
      }))
    )}`
    return (
      events.every((event) => event.webhook_url === null)
        ? Effect.asVoid(insert)
        : together(sql)(Effect.zipRight(insert, insertPending(sql, events)))
    ).pipe(Effect.orDie)
  }
  return Port.Outbox.of({
    append: (event) => appendAll([event]),
    appendAll,
    findById: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_outbox WHERE event_id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => decode(r.doc))),
        Effect.orDie
      ),
    list: (after, limit) =>
      sql<{
        position: unknown
        doc: unknown
      }>`SELECT position, doc FROM cobro_outbox WHERE position > ${after}
        ORDER BY position LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((r) => ({ position: Number(r.position), event: decode(r.doc) }))),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.Outbox, never, SqlClient.SqlClient> = Layer.effect(Port.Outbox, make)
