/**
 * What a cobro database is: the mode and the bank it was first started with (table
 * `cobro_database`, migration 0020), and what an older database's contents say of them. Every
 * read here is read-only and works on a database at any schema version (a table that does not
 * exist yet reads as empty), so that a host can decide whether to open a database before it
 * migrates or writes anything.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Option, Schema } from "effect"

export const Mode = Schema.Literal("sandbox", "production")
export type Mode = typeof Mode.Type

/** A database's mode and bank (`sandbox`, `bind`, …). */
export interface Identity {
  readonly mode: Mode
  readonly bank: string
}

/** The identity as recorded: when, and how (the first start, an inference, an operator's command). */
export interface Recorded extends Identity {
  readonly recordedAt: DateTime.Utc
  readonly recordedBy: string
}

const Row = Schema.Struct({
  mode: Mode,
  bank: Schema.String,
  recorded_ms: Schema.Union(Schema.Number, Schema.NumberFromString),
  recorded_by: Schema.String
})

const decodeRow = Schema.decodeUnknown(Row)

/** Whether `table` exists in the database (the current schema on Postgres); creates nothing. */
export const tableExists = (table: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql
      .onDialectOrElse({
        sqlite: () => sql`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${table}`,
        orElse: () =>
          sql`SELECT 1 AS found FROM information_schema.tables
              WHERE table_name = ${table} AND table_schema = current_schema()`
      })
      .pipe(Effect.map((rows) => rows.length > 0))
  )

/** The recorded identity; none when nothing is recorded (a new database, or one from before 0020). */
export const read: Effect.Effect<Option.Option<Recorded>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    if (!(yield* tableExists("cobro_database"))) return Option.none()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT mode, bank, recorded_ms, recorded_by FROM cobro_database WHERE id = 1`
    if (rows.length === 0) return Option.none()
    const row = yield* Effect.orDie(decodeRow(rows[0]))
    return Option.some({
      mode: row.mode,
      bank: row.bank,
      recordedAt: DateTime.unsafeMake(row.recorded_ms),
      recordedBy: row.recorded_by
    })
  }
)

/** What an unrecorded database holds that tells its mode or bank. */
export interface Evidence {
  /** Whether it holds cobro's schema at all (its migrations table). */
  readonly schema: boolean
  /** Merchants and partners: zero in a database nothing was ever created in. */
  readonly accounts: number
  /** The collecting accounts reconciled with a real bank's statement (`bind:<client id>`). */
  readonly realBankAccounts: ReadonlyArray<string>
  /** Merchants whose sandbox test clock was moved (test clocks exist only in sandbox mode). */
  readonly movedTestClocks: number
  /** Bank accounts registered at the sandbox bank (only the sandbox bank has them). */
  readonly sandboxBankAccounts: number
}

const count = (table: string, where = "") =>
  Effect.gen(function* () {
    if (!(yield* tableExists(table))) return 0
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ readonly n: unknown }>(`SELECT COUNT(*) AS n FROM ${table} ${where}`)
    return Number(rows[0]?.n ?? 0)
  })

/** The evidence of an unrecorded database, read only. */
export const evidence: Effect.Effect<Evidence, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const schema = yield* tableExists("cobro_migrations")
  const realBankAccounts = (yield* tableExists("cobro_bank_reconciliation"))
    ? (yield* sql<{ readonly account: string }>`SELECT account FROM cobro_bank_reconciliation
        WHERE account <> 'sandbox' ORDER BY account`).map((row) => row.account)
    : []
  return {
    schema,
    accounts: (yield* count("cobro_users")) + (yield* count("cobro_partners")),
    realBankAccounts,
    movedTestClocks:
      (yield* count("cobro_test_clocks", "WHERE offset_ms > 0")) +
      (yield* count("cobro_sandbox_clock", "WHERE offset_ms > 0")),
    sandboxBankAccounts: yield* count("cobro_sandbox_bank_accounts")
  }
})

/**
 * Records `identity` unless one is recorded already (another instance may have been first); the
 * identity recorded after it, which is the one to compare with. The database must be migrated.
 */
export const record = (
  identity: Identity,
  recordedBy: string,
  at: DateTime.Utc
): Effect.Effect<Recorded, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO cobro_database (id, mode, bank, recorded_ms, recorded_by)
      VALUES (1, ${identity.mode}, ${identity.bank}, ${DateTime.toEpochMillis(at)}, ${recordedBy})
      ON CONFLICT (id) DO NOTHING`
    return Option.getOrThrow(yield* read)
  })
