/**
 * `PaymentRepository` over `SqlClient`: one implementation for Postgres and SQLite.
 */
import { SqlClient } from "@effect/sql"
import { Errors, Payment as P, PaymentRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { decodeJson, encodeJson, isUniqueViolation, millis, recoverable } from "./internal/sql.js"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(P.Payment)
  const decode = decodeJson(P.Payment)
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })
  const skipLocked = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE SKIP LOCKED`, orElse: () => sql`` })

  const one = (rows: ReadonlyArray<{ doc: unknown }>) =>
    Option.map(Option.fromNullable(rows[0]), (r) => decode(r.doc))
  const many = (rows: ReadonlyArray<{ doc: unknown }>) => rows.map((r) => decode(r.doc))

  const row = (p: P.Payment) => ({
    id: p.id,
    user_id: p.user_id,
    external_id: p.external_id,
    cvu: p.cvu,
    team_id: p.team_id,
    created_ms: millis(p.creation_timestamp),
    expires_ms: millis(p.expiration_timestamp),
    cvu_released: p.cvu_released ? 1 : 0,
    doc: encode(p)
  })

  return Port.PaymentRepository.of({
    insert: (payment) =>
      recoverable(sql)(sql`INSERT INTO cobro_payments ${sql.insert(row(payment))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", (e) =>
          isUniqueViolation(e)
            ? Effect.fail(
                new Errors.Conflict({
                  key: "payment.external_id.taken",
                  message: "a payment with this id or CVU already exists"
                })
              )
            : Effect.die(e)
        )
      ),
    update: (payment) => {
      const { id: _, ...fields } = row(payment)
      return sql`UPDATE cobro_payments SET ${sql.update(fields)} WHERE id = ${payment.id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    },
    findById: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE id = ${id}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByIdForUpdate: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE id = ${id}${forUpdate}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    claimDue: (id, now) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_payments
        WHERE id = ${id} AND cvu_released = 0 AND expires_ms <= ${millis(now)}${skipLocked}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByExternalId: (user, ext) =>
      sql<{
        doc: unknown
      }>`SELECT doc FROM cobro_payments WHERE user_id = ${user} AND external_id = ${ext}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByCvu: (cvu) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE cvu = ${cvu}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByCvuForUpdate: (cvu) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE cvu = ${cvu}${forUpdate}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByCvusForUpdate: (cvus) =>
      cvus.length === 0
        ? Effect.succeed([])
        : sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE ${sql.in("cvu", [...new Set(cvus)])}
            ORDER BY id${forUpdate}`.pipe(Effect.map(many), Effect.orDie),
    page: (query, cursor, limit) => {
      const conditions = [
        sql`user_id = ${query.user_id}`,
        ...(query.team_id !== undefined ? [sql`team_id = ${query.team_id}`] : []),
        ...(query.start_date !== undefined ? [sql`created_ms >= ${millis(query.start_date)}`] : []),
        ...(query.end_date !== undefined ? [sql`created_ms <= ${millis(query.end_date)}`] : []),
        ...Option.match(cursor, {
          onNone: () => [],
          onSome: (c) => [sql`(created_ms, id) > (${millis(c.creation_timestamp)}, ${c.id})`]
        })
      ]
      return sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE ${sql.and(conditions)}
        ORDER BY created_ms, id LIMIT ${limit}`.pipe(Effect.map(many), Effect.orDie)
    },
    findDue: (now, limit) =>
      sql<{
        doc: unknown
      }>`SELECT doc FROM cobro_payments WHERE cvu_released = 0 AND expires_ms <= ${millis(now)}
        ORDER BY expires_ms, id LIMIT ${limit}`.pipe(Effect.map(many), Effect.orDie)
  })
})

export const layer: Layer.Layer<Port.PaymentRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.PaymentRepository,
  make
)
