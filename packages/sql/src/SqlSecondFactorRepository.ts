/**
 * `SecondFactorRepository` over `SqlClient`: `cobro_second_factors` (one row per merchant and
 * status) and `cobro_second_factor_codes` (one row per subject). Each write is one upsert that
 * replaces the row of its key; reads for update lock the row (`FOR UPDATE` on Postgres; SQLite
 * has one writer at a time).
 */
import { SqlClient } from "@effect/sql"
import { Ids, Spans } from "@cobro/core"
import { SecondFactorRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import { Millis, NullableMillis, findOne, forUpdate, write } from "./internal/sql.js"

/** An INTEGER/BIGINT column (text on Postgres for BIGINT) as a number. */
const Int = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))

const FactorRow = Schema.transform(
  Schema.Struct({
    user_id: Ids.UserId,
    status: Port.FactorStatus,
    kind: Port.FactorKind,
    secret_sealed: Schema.NullOr(Schema.String),
    last_step: Schema.NullOr(Int),
    failures: Int,
    locked_until_ms: NullableMillis,
    created_ms: Millis,
    expires_ms: NullableMillis,
    confirmed_ms: NullableMillis
  }),
  Schema.typeSchema(Port.StoredFactor),
  {
    strict: true,
    decode: ({ confirmed_ms, created_ms, expires_ms, locked_until_ms, ...r }) =>
      new Port.StoredFactor({
        ...r,
        locked_until: locked_until_ms,
        creation_timestamp: created_ms,
        exp_timestamp: expires_ms,
        confirmed_timestamp: confirmed_ms
      }),
    encode: (f) => ({
      user_id: f.user_id,
      status: f.status,
      kind: f.kind,
      secret_sealed: f.secret_sealed,
      last_step: f.last_step,
      failures: f.failures,
      locked_until_ms: f.locked_until,
      created_ms: f.creation_timestamp,
      expires_ms: f.exp_timestamp,
      confirmed_ms: f.confirmed_timestamp
    })
  }
)

const CodeRow = Schema.transform(
  Schema.Struct({
    subject: Schema.String,
    user_id: Ids.UserId,
    code_hash: Schema.String,
    attempts: Int,
    created_ms: Millis,
    expires_ms: Millis,
    used_ms: NullableMillis
  }),
  Schema.typeSchema(Port.OneTimeCode),
  {
    strict: true,
    decode: ({ created_ms, expires_ms, used_ms, ...r }) =>
      new Port.OneTimeCode({
        ...r,
        creation_timestamp: created_ms,
        exp_timestamp: expires_ms,
        used_timestamp: used_ms
      }),
    encode: (c) => ({
      subject: c.subject,
      user_id: c.user_id,
      code_hash: c.code_hash,
      attempts: c.attempts,
      created_ms: c.creation_timestamp,
      expires_ms: c.exp_timestamp,
      used_ms: c.used_timestamp
    })
  }
)

const FactorKey = Schema.Struct({ user: Schema.String, status: Port.FactorStatus, lock: Schema.Boolean })
const CodeKey = Schema.Struct({ subject: Schema.String, lock: Schema.Boolean })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const lockIf = (lock: boolean) => (lock ? forUpdate(sql) : sql``)

  const findFactor = findOne({
    Request: FactorKey,
    Result: FactorRow,
    execute: ({ lock, status, user }) =>
      sql`SELECT * FROM cobro_second_factors WHERE user_id = ${user} AND status = ${status}${lockIf(lock)}`
  })
  const putFactor = write({
    Request: FactorRow,
    execute: ({ status, user_id, ...fields }) =>
      sql`INSERT INTO cobro_second_factors ${sql.insert({ user_id, status, ...fields })}
        ON CONFLICT (user_id, status) DO UPDATE SET ${sql.update(fields)}`
  })
  const removeFactor = write({
    Request: Schema.Struct({ user: Schema.String, status: Port.FactorStatus }),
    execute: ({ status, user }) =>
      sql`DELETE FROM cobro_second_factors WHERE user_id = ${user} AND status = ${status}`
  })
  const findCode = findOne({
    Request: CodeKey,
    Result: CodeRow,
    execute: ({ lock, subject }) =>
      sql`SELECT * FROM cobro_second_factor_codes WHERE subject = ${subject}${lockIf(lock)}`
  })
  const putCode = write({
    Request: CodeRow,
    execute: ({ subject, ...fields }) =>
      sql`INSERT INTO cobro_second_factor_codes ${sql.insert({ subject, ...fields })}
        ON CONFLICT (subject) DO UPDATE SET ${sql.update(fields)}`
  })

  return Port.SecondFactorRepository.of({
    findFactor: (user, status, lock) =>
      findFactor({ user, status, lock }).pipe(Spans.span("SecondFactorRepository.findFactor")),
    putFactor: (factor) => putFactor(factor).pipe(Spans.span("SecondFactorRepository.putFactor")),
    removeFactor: (user, status) =>
      removeFactor({ user, status }).pipe(Spans.span("SecondFactorRepository.removeFactor")),
    findCode: (subject, lock) =>
      findCode({ subject, lock }).pipe(Spans.span("SecondFactorRepository.findCode")),
    putCode: (code) => putCode(code).pipe(Spans.span("SecondFactorRepository.putCode"))
  })
})

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.SecondFactorRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.SecondFactorRepository,
  make
)
