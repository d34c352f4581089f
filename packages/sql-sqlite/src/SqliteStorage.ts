/**
 * cobro's storage on a SQLite file: WAL journal, synced at every commit, a busy timeout, foreign
 * keys on, then the migrations. One connection serialises every unit of work, which is SQLite's
 * own model.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlStorage } from "@cobro/sql"
import { Config, Effect, Layer } from "effect"

export interface Options {
  /** The database file (created if missing). */
  readonly filename: string
  /** How long a writer waits for another process's lock, in milliseconds. */
  readonly busyTimeoutMillis?: number
}

/**
 * `synchronous = FULL`: a commit returns once its WAL frames are on disk, so what was answered
 * (a payment created, a transfer credited, a payout recorded as sent) survives a power loss or an
 * operating-system crash. With `NORMAL` (WAL's speed setting) the last commits before such a crash
 * may roll back; a process killed (kill -9) loses nothing either way. Units of work that arrive
 * together share a commit (group commit), so they share the sync too (docs/decisions/0011-sql-storage.md).
 */
const pragmas = (busyTimeoutMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMillis)}`)
      yield* sql.unsafe("PRAGMA foreign_keys = ON")
      yield* sql.unsafe("PRAGMA synchronous = FULL")
    })
  )

/** The SQLite client alone (WAL and pragmas applied). */
export const client = (options: Options) =>
  Layer.provideMerge(
    pragmas(options.busyTimeoutMillis ?? 5_000),
    SqliteClient.layer({ filename: options.filename, disableWAL: false })
  )

/** Every storage port of cobro on a SQLite file, migrated. */
export const layer = (options: Options) => SqlStorage.layer.pipe(Layer.provideMerge(client(options)))

/** `layer` with the file path from configuration (e.g. `Config.string("COBRO_SQLITE_FILE")`). */
export const layerConfig = (filename: Config.Config<string>) =>
  Layer.unwrapEffect(Effect.map(filename, (f) => layer({ filename: f })))
