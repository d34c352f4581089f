/**
 * SQLite's WAL checkpoints run on a worker thread of the storage's own (`internal/checkpointer.ts`
 * of `@cobro/sql-sqlite`): committed pages reach the database file without the server's
 * connection checkpointing them inside a request's commit, and closing the storage closes the
 * worker's connection too.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { SqlClient } from "@effect/sql"
import { Effect, Schedule } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-checkpoints-"))),
  (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
)

/** About 2 MB in one commit: 500 pages, below SQLite's default automatic checkpoint (1000). */
const writeTwoMegabytes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)`
  yield* sql.withTransaction(
    Effect.forEach(
      Array.from({ length: 500 }, (_, i) => i),
      (i) => sql`INSERT INTO filler (id, body) VALUES (${i}, ${new Uint8Array(4000).fill(i % 251)})`
    )
  )
})

/**
 * Writes about 2 MB, then answers by how much the database file grew once it has grown that much
 * (or after 5 s): neither the commit nor the server's connection's own checkpoint (at 10,000
 * pages) copies those pages; only the worker can, within a few of its rounds (100 ms each).
 */
const checkpointedGrowth = (file: string) =>
  Effect.gen(function* () {
    const before = fs.statSync(file).size
    yield* writeTwoMegabytes
    const grown = Effect.sync(() => fs.statSync(file).size - before)
    return yield* grown.pipe(
      Effect.filterOrFail((bytes) => bytes >= 2_000_000),
      Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("5 seconds"))),
      Effect.orElse(() => grown)
    )
  })

describe("SQLite checkpoints", () => {
  it.scopedLive(
    "a worker copies committed pages into the database file; the server's connection only backs it up",
    () =>
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "cobro.db")
        const { growth, setting } = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const [setting] = yield* sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`
          return { setting: setting?.wal_autocheckpoint, growth: yield* checkpointedGrowth(file) }
        }).pipe(Effect.provide(SqliteStorage.layer({ filename: file })))
        expect(setting).toBe(10_000)
        expect(growth).toBeGreaterThanOrEqual(2_000_000)
      })
  )

  it.scopedLive("closing the storage closes the worker's connection: the last one out removes the WAL", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "cobro.db")
      // Once the worker has checkpointed, its connection has the WAL open.
      const growth = yield* checkpointedGrowth(file).pipe(
        Effect.provide(SqliteStorage.layer({ filename: file }))
      )
      expect(growth).toBeGreaterThanOrEqual(2_000_000)
      // SQLite deletes the WAL when its last connection closes; a worker still holding one
      // would leave it there.
      expect(fs.existsSync(`${file}-wal`)).toBe(false)
    })
  )
})
