/**
 * The SQLite storage's durability settings: a WAL journal synced at every commit
 * (`synchronous = FULL`), so that what the engine answered survives a power loss, not only a
 * killed process (`SqliteStorage.ts`, docs/decisions/0011-sql-storage.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

describe("SQLite durability", () => {
  it.scoped("the file is a WAL journal synced at every commit, foreign keys on", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-durability-"))),
        (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
      )
      const settings = yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [journal] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
        const [synchronous] = yield* sql<{ synchronous: number }>`PRAGMA synchronous`
        const [foreignKeys] = yield* sql<{ foreign_keys: number }>`PRAGMA foreign_keys`
        return {
          journal: journal?.journal_mode,
          synchronous: synchronous?.synchronous,
          foreignKeys: foreignKeys?.foreign_keys
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: path.join(dir, "cobro.db") })))
      // 2 is FULL (0 OFF, 1 NORMAL, 3 EXTRA).
      expect(settings).toEqual({ journal: "wal", synchronous: 2, foreignKeys: 1 })
    })
  )
})
