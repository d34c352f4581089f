/**
 * The storage the configuration names: a SQLite file (its directory created first) or a Postgres
 * database, migrated when the layer starts, with the sandbox clock's offset beside the engine's
 * repositories. A failure to open or migrate it is a `StorageError` with a sentence an operator
 * can act on.
 */
import type { ClockOffsetRepository, Engine } from "@cobro/core"
import { Migrations, SqlClockOffsetRepository } from "@cobro/sql"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { type Database, describeDatabase, sqlitePath } from "./ServerConfig.js"

/** The database could not be opened, created or migrated. */
export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export type Services = Engine.Storage | ClockOffsetRepository.ClockOffsetRepository | SqlClient.SqlClient

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

/** The SQL client alone (no migrations). */
export const client = (database: Database): Layer.Layer<SqlClient.SqlClient, StorageError> =>
  Layer.unwrapEffect(
    Effect.as(
      ensureDirectory(database),
      database._tag === "Sqlite"
        ? SqliteStorage.client({ filename: database.filename })
        : PgStorage.client({ url: database.url })
    )
  ).pipe(
    Layer.catchAll((cause) =>
      Layer.fail(cause instanceof StorageError ? cause : failure(database, "open")(cause))
    )
  )

/** Every storage port, migrated; the sandbox clock's offset too. */
export const layer = (database: Database): Layer.Layer<Services, StorageError> =>
  Layer.unwrapEffect(
    Effect.as(
      ensureDirectory(database),
      database._tag === "Sqlite"
        ? SqliteStorage.layer({ filename: database.filename })
        : PgStorage.layer({ url: database.url })
    )
  ).pipe(
    Layer.catchAll((cause) =>
      Layer.fail(cause instanceof StorageError ? cause : failure(database, "open or migrate")(cause))
    ),
    (storage) => Layer.provideMerge(SqlClockOffsetRepository.layer, storage)
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
