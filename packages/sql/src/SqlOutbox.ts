/**
 * `Outbox` over `SqlClient`: events are rows written in the same transaction as their change.
 */
import { SqlClient } from "@effect/sql"
import { Outbox as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { decodeJson, encodeJson, millis } from "./internal/sql.js"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(Port.OutboxEvent)
  const decode = decodeJson(Port.OutboxEvent)
  return Port.Outbox.of({
    append: (event) =>
      sql`INSERT INTO cobro_outbox ${sql.insert({
        event_id: event.event_id,
        type: event.type,
        user_id: event.user_id,
        doc: encode(event),
        created_ms: millis(event.created_at)
      })}`.pipe(Effect.asVoid, Effect.orDie),
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
