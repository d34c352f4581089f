/**
 * cobro's storage on Postgres: a connection pool, then the migrations. Units of work lock the
 * rows they change (`SELECT … FOR UPDATE`), so several instances can share one database.
 *
 * The pool is made here rather than by `PgClient.layer` (with the same settings) so that its
 * counts can be read: `SqlMonitoring.ConnectionPool` beside the client.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { SqlMonitoring, SqlStorage } from "@cobro/sql"
import { Config, Context, Duration, Effect, Layer, Redacted } from "effect"
import * as Pg from "pg"

export interface Options {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number
}

/** How long the first connection may take before the layer fails (`PgClient.make`'s default). */
const connectTimeout = Duration.seconds(5)

/**
 * A pool as `PgClient.make` makes one from a URL and a maximum (pg's defaults for the rest),
 * checked with a first query, and ended when the scope closes (also when that query fails).
 */
const pool = (options: Options) =>
  Effect.gen(function* () {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(options.url),
          max: options.maxConnections ?? 10,
          application_name: "@effect/sql-pg"
        })
        // An idle connection's error (the server closed it) is not a query's: the pool drops it.
        pool.on("error", () => {})
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    )
    yield* Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(
      Effect.timeoutFail({
        duration: connectTimeout,
        onTimeout: () =>
          new SqlError({
            cause: new Error("Connection timed out"),
            message: "PgClient: Connection timed out"
          })
      })
    )
    return pool
  })

/** The Postgres client alone, and its pool's counts. */
export const client = (
  options: Options
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | SqlMonitoring.ConnectionPool, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const pg = yield* pool(options)
      const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pg) })
      const stats = Effect.sync((): SqlMonitoring.PoolStats => ({
        total: pg.totalCount,
        idle: pg.idleCount,
        waiting: pg.waitingCount,
        max: pg.options.max
      }))
      return Context.make(PgClient.PgClient, client).pipe(
        Context.add(SqlClient.SqlClient, client),
        Context.add(SqlMonitoring.ConnectionPool, { stats })
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/** Every storage port of cobro on Postgres, migrated. */
export const layer = (options: Options) => SqlStorage.layer.pipe(Layer.provideMerge(client(options)))

/** `layer` with the URL from configuration (e.g. `Config.redacted("COBRO_DATABASE_URL")`). */
export const layerConfig = (url: Config.Config<Redacted.Redacted>) =>
  Layer.unwrapEffect(Effect.map(url, (u) => layer({ url: u })))
