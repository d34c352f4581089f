/**
 * `StorageHealth` (what a readiness probe asks) on memory, SQLite and Postgres: current after the
 * migrations; behind when the newest migration is missing; unavailable when the database does not
 * answer (Postgres: connections to the test's database refused and the open ones terminated), and
 * current again once it answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { StorageHealth } from "@cobro/core/ports"
import { Migrations, SqlStorageHealth } from "@cobro/sql"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const check = Effect.flatMap(StorageHealth.StorageHealth, (health) => health.check)

const admin = PgClient.layer({ url: Redacted.make(pgAdminUrl), maxConnections: 1 })

/** Runs `sql` on the admin database (not the one under test). */
const asAdmin = (statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(admin),
    Effect.orDie
  )

describe("StorageHealth", () => {
  it.effect("memory: always current", () =>
    Effect.gen(function* () {
      const version = yield* check
      expect(StorageHealth.isCurrent(version)).toBe(true)
    }).pipe(Effect.provide(StorageHealth.layerMemory))
  )

  it.scoped(
    "SQLite: current after the migrations, behind without the newest, unavailable without the table",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-health-"))),
          (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
        )
        const storage = SqliteStorage.layer({ filename: path.join(dir, "cobro.db") })
        yield* Effect.gen(function* () {
          const latest = yield* Migrations.latest
          expect(latest).toBeGreaterThanOrEqual(8)
          expect(yield* check).toEqual({ applied: latest, required: latest })

          const sql = yield* SqlClient.SqlClient
          yield* sql`DELETE FROM cobro_migrations WHERE migration_id = ${latest}`
          const behind = yield* check
          // The newest id below it (ids are not always contiguous: each issue has its numbers).
          const previous = Math.max(
            ...(yield* Effect.orDie(Migrations.loader)).map(([id]) => id).filter((id) => id < latest)
          )
          expect(behind).toEqual({ applied: previous, required: latest })
          expect(StorageHealth.isCurrent(behind)).toBe(false)

          yield* sql`ALTER TABLE cobro_migrations RENAME TO cobro_migrations_gone`
          const failed = yield* Effect.exit(check)
          expect(Exit.isFailure(failed)).toBe(true)
          expect(String(failed)).toContain("StorageUnavailable")
        }).pipe(Effect.provide(Layer.provideMerge(SqlStorageHealth.layer, storage)))
      })
  )

  it.scoped.skipIf(!available)(
    "Postgres: unavailable while the database refuses connections, current again once it accepts them",
    () =>
      Effect.gen(function* () {
        const url = yield* freshPgUrl
        const name = new URL(url).pathname.slice(1)
        // However the test ends, the database accepts connections again (so it can be dropped).
        yield* Effect.addFinalizer(() => asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`))
        const storage = PgStorage.layer({ url: Redacted.make(url), maxConnections: 2 })
        yield* Effect.gen(function* () {
          const latest = yield* Migrations.latest
          expect(yield* check).toEqual({ applied: latest, required: latest })

          yield* asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
          yield* asAdmin(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`
          )
          const down = yield* Effect.exit(check)
          expect(Exit.isFailure(down)).toBe(true)
          expect(String(down)).toContain("StorageUnavailable")

          yield* asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
          expect(yield* check).toEqual({ applied: latest, required: latest })
        }).pipe(Effect.provide(Layer.provideMerge(SqlStorageHealth.layer, storage)))
      }),
    60_000
  )
})
