/**
 * The storage backends the contract suite runs on. Each scenario gets fresh storage: a new
 * in-memory store, a new SQLite file, or a new Postgres database (dropped afterwards).
 */
import { Engine } from "@cobro/core"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { randomUUID } from "node:crypto"

export interface Backend {
  readonly name: string
  /** Fresh, migrated storage for one scenario. */
  readonly storage: () => Layer.Layer<Engine.Storage, unknown>
}

/** A SQL backend also exposes its `SqlClient` (for tests that write rows in bulk). */
export interface SqlBackend extends Backend {
  readonly storage: () => Layer.Layer<Engine.Storage | SqlClient.SqlClient, unknown>
}

export const memory: Backend = { name: "memory", storage: () => Engine.layerMemoryStorage }

export const sqlite: SqlBackend = {
  name: "sqlite",
  storage: () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-contract-"))
    return Layer.merge(
      SqliteStorage.layer({ filename: path.join(dir, "cobro.db") }),
      Layer.scopedDiscard(
        Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      )
    )
  }
}

/** The server to create test databases on (trust auth on this machine and in CI). */
export const pgAdminUrl: string = Effect.runSync(
  Config.string("COBRO_TEST_PG_URL").pipe(Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres"))
)

const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

const admin = PgClient.layer({ url: Redacted.make(pgAdminUrl), maxConnections: 1 })

/** Whether the Postgres server answers. */
export const pgAvailable: Effect.Effect<boolean> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SELECT 1`
  return true
}).pipe(
  Effect.provide(admin),
  Effect.timeout("3 seconds"),
  Effect.orElseSucceed(() => false)
)

/** A fresh database for the scenario, dropped when it ends. */
export const freshDatabase = Effect.acquireRelease(
  Effect.gen(function* () {
    const name = `cobro_test_${randomUUID().replaceAll("-", "")}`
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE DATABASE ${name}`)
    return name
  }).pipe(Effect.provide(admin), Effect.orDie),
  (name) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    ).pipe(Effect.provide(admin), Effect.ignore)
)

/** The URL of a fresh database, dropped when the scope ends. */
export const freshPgUrl = Effect.map(freshDatabase, (name) => withDatabase(pgAdminUrl, name))

export const postgres: SqlBackend = {
  name: "postgres",
  storage: () =>
    Layer.unwrapScoped(
      Effect.map(freshDatabase, (name) =>
        PgStorage.layer({ url: Redacted.make(withDatabase(pgAdminUrl, name)), maxConnections: 8 })
      )
    )
}
