/**
 * The storage the configuration names: a SQLite file (its directory created first) or a Postgres
 * database, migrated when the layer starts, with the sandbox bank's registered accounts beside
 * the engine's repositories (and the reconciliation's cursors). A failure to open or migrate it is
 * a `StorageError` with a sentence an operator can act on.
 */
import type { Engine, ReconciliationCursor, SandboxAccountRepository, StorageHealth } from "@cobro/core"
import {
  Migrations,
  SqlReconciliationCursor,
  SqlSandboxAccountRepository,
  SqlStorageHealth
} from "@cobro/sql"
import type { SqlClient } from "@effect/sql"
import * as SqlClientTag from "@effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
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
          ? import("@cobro/sql-sqlite").then(({ SqliteStorage }) => ({
              client: SqliteStorage.client({ filename: database.filename }),
              layer: SqliteStorage.layer({ filename: database.filename })
            }))
          : import("@cobro/sql-pg").then(({ PgStorage }) => ({
              client: PgStorage.client({ url: database.url }),
              layer: PgStorage.layer({ url: database.url })
            })),
      catch: failure(database, "load the driver of")
    })
  )

/** The SQL client alone (no migrations). */
export const client = (database: Database): Layer.Layer<SqlClient.SqlClient, StorageError> =>
  Layer.unwrapEffect(Effect.map(driver(database), (d) => d.client)).pipe(
    Layer.catchAll((cause) =>
      Layer.fail(cause instanceof StorageError ? cause : failure(database, "open")(cause))
    )
  )

/**
 * Every storage port (the sandbox's test clocks among them), migrated; the sandbox bank's
 * registered accounts and the readiness check too.
 */
export const layer = (database: Database): Layer.Layer<Services, StorageError> =>
  Layer.unwrapEffect(Effect.map(driver(database), (d) => d.layer)).pipe(
    Layer.catchAll((cause) =>
      Layer.fail(cause instanceof StorageError ? cause : failure(database, "open or migrate")(cause))
    ),
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

/** Runs the migrations that are not applied yet; the ids and names of those it applied. */
export const migrate = (
  database: Database
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, StorageError> =>
  Migrations.run.pipe(
    Effect.mapError(failure(database, "migrate")),
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
    : Effect.gen(function* () {
        const sql = yield* SqlClientTag.SqlClient
        const rows = yield* sql.onDialectOrElse({
          sqlite: () =>
            sql`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'cobro_migrations'`,
          orElse: () =>
            sql`SELECT 1 AS found FROM information_schema.tables
                WHERE table_name = 'cobro_migrations' AND table_schema = current_schema()`
        })
        return rows.length > 0
      }).pipe(Effect.mapError(failure(database, "read")), Effect.provide(client(database)), Effect.scoped)
