/**
 * `IdempotencyRepository` over `SqlClient`. The primary key (scope, idempotency_key) makes
 * `begin` an atomic insert-if-absent across instances; every later write is a conditional
 * statement fenced on the version the caller read (state, lock, creation time), so of two
 * requests racing for a lapsed or expired key exactly one takes it over.
 */
import { SqlClient } from "@effect/sql"
import { IdempotencyRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { millis, toDateTime } from "./internal/sql.js"

interface Row {
  readonly scope: string
  readonly idempotency_key: string
  readonly fingerprint: string
  readonly state: string
  readonly locked_until_ms: unknown
  readonly response_status: unknown
  readonly response_body: string | null
  readonly created_ms: unknown
}

const fromRow = (r: Row) =>
  new Port.IdempotencyRecord({
    scope: r.scope,
    key: r.idempotency_key,
    fingerprint: r.fingerprint,
    state: r.state as Port.IdempotencyState,
    locked_until: toDateTime(r.locked_until_ms),
    response_status: r.response_status === null ? null : Number(r.response_status),
    response_body: r.response_body,
    created_at: toDateTime(r.created_ms)
  })

const fields = (record: Port.IdempotencyRecord) => ({
  fingerprint: record.fingerprint,
  state: record.state,
  locked_until_ms: millis(record.locked_until),
  response_status: record.response_status,
  response_body: record.response_body,
  created_ms: millis(record.created_at)
})

/** How often `begin` retries when the row it collided with disappeared before it could read it. */
const MAX_BEGIN_ATTEMPTS = 5

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** The row of `record`'s (scope, key) if it is still the version `record` holds. */
  const isVersion = (record: Port.IdempotencyRecord) =>
    sql.and([
      sql`scope = ${record.scope}`,
      sql`idempotency_key = ${record.key}`,
      sql`state = ${record.state}`,
      sql`locked_until_ms = ${millis(record.locked_until)}`,
      sql`created_ms = ${millis(record.created_at)}`
    ])

  const find = (scope: string, key: string) =>
    sql<Row>`SELECT * FROM cobro_idempotency_keys WHERE scope = ${scope} AND idempotency_key = ${key}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
      Effect.orDie
    )

  const begin = (
    record: Port.IdempotencyRecord,
    attempt: number
  ): Effect.Effect<Option.Option<Port.IdempotencyRecord>> =>
    Effect.gen(function* () {
      const inserted = yield* sql`INSERT INTO cobro_idempotency_keys ${sql.insert({
        scope: record.scope,
        idempotency_key: record.key,
        ...fields(record)
      })} ON CONFLICT (scope, idempotency_key) DO NOTHING RETURNING scope`
      if (inserted.length === 1) return Option.none()
      const existing = yield* find(record.scope, record.key)
      if (Option.isSome(existing)) return existing
      // Released or purged between the two statements: the key is free again.
      if (attempt + 1 >= MAX_BEGIN_ATTEMPTS) {
        return yield* Effect.dieMessage(`idempotency key ${record.scope}/${record.key} keeps changing`)
      }
      return yield* begin(record, attempt + 1)
    }).pipe(Effect.orDie)

  return Port.IdempotencyRepository.of({
    begin: (record) => begin(record, 0),
    find,
    takeOver: (previous, next) =>
      sql`UPDATE cobro_idempotency_keys SET ${sql.update(fields(next))}
        WHERE ${isVersion(previous)} RETURNING scope`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      ),
    complete: (record, response) =>
      record.state !== "in_flight"
        ? Effect.succeed(false)
        : sql`UPDATE cobro_idempotency_keys SET ${sql.update({
            state: "completed",
            response_status: response.status,
            response_body: response.body
          })} WHERE ${isVersion(record)} RETURNING scope`.pipe(
            Effect.map((rows) => rows.length === 1),
            Effect.orDie
          ),
    release: (record) =>
      record.state !== "in_flight"
        ? Effect.succeed(false)
        : sql`DELETE FROM cobro_idempotency_keys WHERE ${isVersion(record)} RETURNING scope`.pipe(
            Effect.map((rows) => rows.length === 1),
            Effect.orDie
          ),
    purgeBefore: (time) =>
      sql`DELETE FROM cobro_idempotency_keys WHERE created_ms < ${millis(time)} RETURNING scope`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.IdempotencyRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.IdempotencyRepository,
  make
)
