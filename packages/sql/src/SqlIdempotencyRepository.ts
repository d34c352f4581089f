/**
 * `IdempotencyRepository` over `SqlClient`. The primary key (scope, idempotency_key) makes
 * `begin` an atomic insert-if-absent across instances; every later write is a conditional
 * statement: a takeover fenced on the version the caller read (state, lease, creation time), so
 * of two requests racing for a lapsed or expired key exactly one takes it over; the owner's
 * renewals, completion and release on its claim (the creation time), so a renewal never fences
 * the owner out of its own key. `complete` runs in the caller's unit of work when there is one
 * (the operation's own, which records its answer with it).
 *
 * The record's `result` (JSON text of the operation's encoded result) is the `response_body`
 * column. `response_status` is a column of the previous version's record (an HTTP status, always
 * 200): it is never read, and a completed row still carries 200 there because the table's check
 * asks for it and because an instance of the previous version, still running during a rolling
 * upgrade, replays such rows (migrations only add).
 */
import { SqlClient } from "@effect/sql"
import { IdempotencyRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import { findOne, Millis, millis, orDie } from "./internal/sql.js"

/** What the previous version's reader expects in `response_status` of a completed row. */
const LEGACY_STATUS = 200
const legacyStatus = (result: string | null) => (result === null ? null : LEGACY_STATUS)

/** A row of `cobro_idempotency_keys`, decoded to the record and encoded from it. */
const Row = Schema.transform(
  Schema.Struct({
    scope: Schema.String,
    idempotency_key: Schema.String,
    fingerprint: Schema.String,
    state: Port.IdempotencyState,
    locked_until_ms: Millis,
    // Written for the previous version, never read (see above). Postgres and SQLite answer
    // INTEGER as a number; text is tolerated as for every number.
    response_status: Schema.NullOr(Schema.Union(Schema.Int, Schema.NumberFromString)),
    response_body: Schema.NullOr(Schema.String),
    created_ms: Millis
  }),
  Schema.typeSchema(Port.IdempotencyRecord),
  {
    strict: true,
    decode: (r) =>
      new Port.IdempotencyRecord({
        scope: r.scope,
        key: r.idempotency_key,
        fingerprint: r.fingerprint,
        state: r.state,
        locked_until: r.locked_until_ms,
        result: r.response_body,
        created_at: r.created_ms
      }),
    encode: (record) => ({
      scope: record.scope,
      idempotency_key: record.key,
      fingerprint: record.fingerprint,
      state: record.state,
      locked_until_ms: record.locked_until,
      response_status: legacyStatus(record.result),
      response_body: record.result,
      created_ms: record.created_at
    })
  }
)

const encodeRow = Schema.encode(Row)

/** How often `begin` retries when the row it collided with disappeared before it could read it. */
const MAX_BEGIN_ATTEMPTS = 5

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** The row of `record`'s (scope, key) if it is still `record`'s claim. */
  const isClaim = (record: Port.IdempotencyRecord) =>
    sql.and([
      sql`scope = ${record.scope}`,
      sql`idempotency_key = ${record.key}`,
      sql`created_ms = ${millis(record.created_at)}`
    ])
  /** … and still in flight. */
  const isClaimInFlight = (record: Port.IdempotencyRecord) =>
    sql.and([isClaim(record), sql`state = 'in_flight'`])
  /** The row of `record`'s (scope, key) if it is still the version `record` holds. */
  const isVersion = (record: Port.IdempotencyRecord) =>
    sql.and([
      isClaim(record),
      sql`state = ${record.state}`,
      sql`locked_until_ms = ${millis(record.locked_until)}`
    ])

  const findRow = findOne({
    Request: Schema.Struct({ scope: Schema.String, key: Schema.String }),
    Result: Row,
    execute: ({ key, scope }) =>
      sql`SELECT * FROM cobro_idempotency_keys WHERE scope = ${scope} AND idempotency_key = ${key}`
  })
  const find = (scope: string, key: string) => findRow({ scope, key })

  /** Runs a conditional write; whether it changed the one row it aims at. */
  const changedOne = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    Effect.map(Effect.orDie(statement), (rows) => rows.length === 1)

  const begin = (
    record: Port.IdempotencyRecord,
    attempt: number
  ): Effect.Effect<Option.Option<Port.IdempotencyRecord>> =>
    Effect.gen(function* () {
      const row = yield* orDie(encodeRow(record))
      const inserted = yield* sql`INSERT INTO cobro_idempotency_keys ${sql.insert(row)}
        ON CONFLICT (scope, idempotency_key) DO NOTHING RETURNING scope`.pipe(Effect.orDie)
      if (inserted.length === 1) return Option.none()
      const existing = yield* find(record.scope, record.key)
      if (Option.isSome(existing)) return existing
      // Released or purged between the two statements: the key is free again.
      if (attempt + 1 >= MAX_BEGIN_ATTEMPTS) {
        return yield* Effect.dieMessage(`idempotency key ${record.scope}/${record.key} keeps changing`)
      }
      return yield* begin(record, attempt + 1)
    })

  return Port.IdempotencyRepository.of({
    begin: (record) => begin(record, 0),
    find,
    takeOver: (previous, next) =>
      Effect.flatMap(orDie(encodeRow(next)), ({ idempotency_key: _, scope: __, ...fields }) =>
        changedOne(
          sql`UPDATE cobro_idempotency_keys SET ${sql.update(fields)} WHERE ${isVersion(previous)} RETURNING scope`
        )
      ),
    renew: (record, lockedUntil) =>
      changedOne(
        sql`UPDATE cobro_idempotency_keys SET locked_until_ms = ${millis(lockedUntil)}
          WHERE ${isClaimInFlight(record)} RETURNING scope`
      ),
    complete: (record, result) =>
      changedOne(
        sql`UPDATE cobro_idempotency_keys SET ${sql.update({
          state: "completed",
          response_status: legacyStatus(result),
          response_body: result
        })} WHERE ${isClaim(record)} RETURNING scope`
      ),
    release: (record) =>
      changedOne(sql`DELETE FROM cobro_idempotency_keys WHERE ${isClaimInFlight(record)} RETURNING scope`),
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
