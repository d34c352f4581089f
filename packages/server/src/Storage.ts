/**
 * The storage the configuration names: a SQLite file (its directory created first) or a Postgres
 * database, checked against the configured mode and bank (`DatabaseMode`: before anything is
 * written), migrated and, on its first start, recorded; with the sandbox bank's registered
 * accounts beside the engine's repositories (and the reconciliation's cursors). A failure to open
 * or migrate it, or a database of another mode, is a `StorageError` with a sentence an operator
 * can act on.
 */
import type { Engine } from "@cobro/core"
import { type ReconciliationCursor, type StorageHealth } from "@cobro/core/ports"
import { type SandboxAccountRepository } from "@cobro/bank-sandbox"
import {
  Migrations,
  SqlDatabaseMode,
  SqlReconciliationCursor,
  SqlSandboxAccountRepository,
  SqlStorage,
  SqlStorageHealth
} from "@cobro/sql"
import type { SqlClient } from "@effect/sql"
import { Console, DateTime, Effect, Layer, Option, Schema } from "effect"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as DatabaseMode from "./DatabaseMode.js"
import { type Database, describeDatabase, sqlitePath } from "./ServerConfig.js"

/** The database could not be opened, created or migrated. */
export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export type Services =
  | Engine.Storage
  | ReconciliationCursor.ReconciliationCursor
  | SandboxAccountRepository.SandboxAccountRepository
  | StorageHealth.StorageHealth
  | SqlClient.SqlClient

const reason = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    return inner instanceof Error && inner.message !== cause.message
      ? `${cause.message}: ${inner.message}`
      : cause.message
  }
  return String(cause)
}

const failure = (database: Database, doing: string) => (cause: unknown) =>
  new StorageError({ message: `cannot ${doing} ${describeDatabase(database)}: ${reason(cause)}`, cause })

/** Creates the directory of a SQLite file (e.g. `./.cobro`) if it is missing. */
const ensureDirectory = (database: Database): Effect.Effect<void, StorageError> =>
  database._tag === "Sqlite" && database.filename !== ":memory:"
    ? Effect.tryPromise({
        try: () => Fs.mkdir(Path.dirname(sqlitePath(database.filename)), { recursive: true }),
        catch: failure(database, "create the directory of")
      }).pipe(Effect.asVoid)
    : Effect.void

/**
 * The driver package of `database`, loaded when first needed: a SQLite server never loads
 * node-postgres and `@effect/sql-pg` (a good part of an idle process), nor a Postgres one SQLite's.
 */
const driver = (database: Database) =>
  Effect.zipRight(
    ensureDirectory(database),
    Effect.tryPromise({
      try: () =>
        database._tag === "Sqlite"
          ? import("@cobro/sql-sqlite").then(({ SqliteStorage }) =>
              SqliteStorage.client({ filename: database.filename })
            )
          : import("@cobro/sql-pg").then(({ PgStorage }) => PgStorage.client({ url: database.url })),
      catch: failure(database, "load the driver of")
    })
  )

/** The SQL client alone (no migrations). */
export const client = (database: Database): Layer.Layer<SqlClient.SqlClient, StorageError> =>
  Layer.unwrapEffect(driver(database)).pipe(
    Layer.catchAll((cause) =>
      Layer.fail(cause instanceof StorageError ? cause : failure(database, "open")(cause))
    )
  )

/**
 * Records `wanted` on a migrated database, unless another instance recorded first: then the record
 * that stands decides, and another mode or bank is refused.
 */
const recordAs = (where: string, wanted: DatabaseMode.Wanted, recordedBy: string) =>
  Effect.gen(function* () {
    const stored = yield* SqlDatabaseMode.record(wanted, recordedBy, yield* DateTime.now)
    const refused = DatabaseMode.mismatch(where, stored, wanted)
    if (Option.isSome(refused)) return yield* new StorageError({ message: refused.value })
    return stored
  })

/**
 * Opens `database` for `wanted`: refused (a `StorageError`, nothing written) when it is of another
 * mode or bank, or is an older database whose contents do not agree with `wanted`; otherwise
 * migrated and, unless it was already, recorded. The migrations applied.
 */
export const open = (
  database: Database,
  wanted: DatabaseMode.Wanted
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, StorageError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const where = describeDatabase(database)
    const recorded = yield* SqlDatabaseMode.read
    const decision = DatabaseMode.decide(
      where,
      wanted,
      Option.isSome(recorded) ? { recorded: recorded.value } : { evidence: yield* SqlDatabaseMode.evidence }
    )
    if (decision._tag === "Refuse") return yield* new StorageError({ message: decision.reason })
    const applied = yield* Migrations.run
    if (decision._tag === "Record") {
      const stored = yield* recordAs(where, wanted, decision.recordedBy)
      // An older database's record is news to its operator (on stderr: a command's stdout may be JSON).
      if (stored.recordedBy !== DatabaseMode.firstStart)
        yield* Console.error(
          `${where}: recorded as a ${stored.mode} database on ${DatabaseMode.bankName(stored.bank)} (${stored.recordedBy})`
        )
    }
    return applied
  }).pipe(
    Effect.catchTags({
      SqlError: failure(database, "open or migrate"),
      MigrationError: failure(database, "migrate")
    })
  )

/**
 * Every storage port (the sandbox's test clocks among them) over `database`, opened for `wanted`
 * (`open`); the sandbox bank's registered accounts and the readiness check too.
 */
export const layer = (database: Database, wanted: DatabaseMode.Wanted): Layer.Layer<Services, StorageError> =>
  Layer.provide(SqlStorage.repositories, Layer.effectDiscard(open(database, wanted))).pipe(
    Layer.provideMerge(client(database)),
    (storage) =>
      Layer.provideMerge(
        Layer.mergeAll(
          SqlReconciliationCursor.layer,
          SqlSandboxAccountRepository.layer,
          SqlStorageHealth.layer
        ),
        storage
      )
  )

/** Opens `database` for `wanted` (`open`) and closes it: the migrations applied. */
export const migrate = (
  database: Database,
  wanted: DatabaseMode.Wanted
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, StorageError> =>
  open(database, wanted).pipe(Effect.provide(client(database)), Effect.scoped)

/**
 * Records that `database` is `wanted`, as an operator says (`cobro database record`): for a
 * database from before the record whose contents do not tell. Refused when it records another
 * mode or bank already (a database does not change mode) or when its contents contradict
 * `wanted` (`DatabaseMode.recordProblem`). The record, and whether it was there already.
 */
export const record = (
  database: Database,
  wanted: DatabaseMode.Wanted
): Effect.Effect<{ readonly recorded: SqlDatabaseMode.Recorded; readonly already: boolean }, StorageError> =>
  Effect.gen(function* () {
    const where = describeDatabase(database)
    const existing = yield* SqlDatabaseMode.read
    if (Option.isSome(existing)) {
      const refused = DatabaseMode.mismatch(where, existing.value, wanted)
      if (Option.isSome(refused)) return yield* new StorageError({ message: refused.value })
      return { recorded: existing.value, already: true }
    }
    const problem = DatabaseMode.recordProblem(wanted, yield* SqlDatabaseMode.evidence)
    if (Option.isSome(problem))
      return yield* new StorageError({
        message: `${where} cannot be recorded as ${wanted.mode} on ${DatabaseMode.bankName(wanted.bank)}: ${problem.value}. Nothing was changed`
      })
    yield* Migrations.run
    return { recorded: yield* recordAs(where, wanted, DatabaseMode.byCommand), already: false }
  }).pipe(
    Effect.catchTags({
      SqlError: failure(database, "open or migrate"),
      MigrationError: failure(database, "migrate")
    }),
    Effect.provide(client(database)),
    Effect.scoped
  )

/**
 * Whether `database` exists and holds cobro's schema (its migrations table), without creating
 * anything: a missing SQLite file is not opened (that would create it), and nothing is migrated.
 */
export const hasSchema = (database: Database): Effect.Effect<boolean, StorageError> =>
  database._tag === "Sqlite" && database.filename !== ":memory:" && !existsSync(sqlitePath(database.filename))
    ? Effect.succeed(false)
    : SqlDatabaseMode.tableExists("cobro_migrations").pipe(
        Effect.mapError(failure(database, "read")),
        Effect.provide(client(database)),
        Effect.scoped
      )
