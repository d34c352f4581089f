/**
 * cobro's storage on a SQLite file: WAL journal, synced at every commit, a busy timeout, foreign
 * keys on, then the migrations. One connection serialises every unit of work, which is SQLite's
 * own model.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlStorage } from "@cobro/sql"
import { Config, Effect, Layer } from "effect"
import * as Checkpointer from "./internal/checkpointer.js"

export interface Options {
  /** The database file (created if missing). */
  readonly filename: string
  /** How long a writer waits for another process's lock, in milliseconds. */
  readonly busyTimeoutMillis?: number
}

/** How often the checkpointing worker copies the WAL into the database file. */
const checkpointEveryMillis = 100

/**
 * The server's connection's own automatic checkpoint, in WAL pages (4 KiB each): a backstop
 * behind the worker's (see `internal/checkpointer.ts`), ten times SQLite's default of 1000.
 */
const backstopPages = 10_000

/** A database in memory has no WAL to checkpoint. */
const inMemory = (filename: string) => filename === ":memory:" || filename === ""

/**
 * `synchronous = FULL`: a commit returns once its WAL frames are on disk, so what was answered
 * (a payment created, a transfer credited, a payout recorded as sent) survives a power loss or an
 * operating-system crash. With `NORMAL` (WAL's speed setting) the last commits before such a crash
 * may roll back; a process killed (kill -9) loses nothing either way. Units of work that arrive
 * together share a commit (group commit), so they share the sync too (docs/decisions.md).
 */
const pragmas = (busyTimeoutMillis: number, checkpointsInWorker: boolean) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMillis)}`)
      yield* sql.unsafe("PRAGMA foreign_keys = ON")
      yield* sql.unsafe("PRAGMA synchronous = FULL")
      if (checkpointsInWorker) yield* sql.unsafe(`PRAGMA wal_autocheckpoint = ${backstopPages}`)
    })
  )

/**
 * The SQLite client alone (WAL and pragmas applied), with WAL checkpoints on a worker thread of
 * its own while it lives.
 */
export const client = (options: Options) => {
  const checkpointsInWorker = !inMemory(options.filename)
  return Layer.provideMerge(
    Layer.merge(
      pragmas(options.busyTimeoutMillis ?? 5_000, checkpointsInWorker),
      checkpointsInWorker
        ? Checkpointer.layer({ filename: options.filename, everyMillis: checkpointEveryMillis })
        : Layer.empty
    ),
    SqliteClient.layer({ filename: options.filename, disableWAL: false })
  )
}

/** Every storage port of cobro on a SQLite file, migrated. */
export const layer = (options: Options) => SqlStorage.layer.pipe(Layer.provideMerge(client(options)))

/** `layer` with the file path from configuration (e.g. `Config.string("COBRO_SQLITE_FILE")`). */
export const layerConfig = (filename: Config.Config<string>) =>
  Layer.unwrapEffect(Effect.map(filename, (f) => layer({ filename: f })))
