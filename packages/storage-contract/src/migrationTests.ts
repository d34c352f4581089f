/**
 * For migration tests: a database as an older schema left it. A bare client (not migrated) on a
 * fresh SQLite file or a fresh Postgres database, and the migrations up to a version.
 */
import { Migrations } from "@cobro/sql"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { Migrator, type SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freshPgUrl } from "./backends.js"

/** Runs the migrations up to `version` (`8` for `0008_…`) and no further. */
export const migrateTo = (version: number) =>
  Migrator.make({})({
    loader: Effect.map(Migrations.loader, (all) => all.filter(([id]) => id <= version)),
    table: "cobro_migrations"
  })

/** A SQLite client on a fresh file in the temp folder, removed with the layer. */
export const bareSqlite: Layer.Layer<SqlClient.SqlClient, unknown> = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-migration-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    ),
    (dir) => SqliteStorage.client({ filename: path.join(dir, "cobro.db") })
  )
)

/** A Postgres client on a fresh database, dropped with the layer. */
export const barePostgres: Layer.Layer<SqlClient.SqlClient, SqlError> = Layer.unwrapScoped(
  Effect.map(freshPgUrl, (url) => PgStorage.client({ url: Redacted.make(url), maxConnections: 2 }))
)
