/**
 * Where the server's rate limits count (`@cobro/http`'s `RateLimitStore`): in Redis when
 * `COBRO_REDIS_URL` is set; else in the Postgres database the server runs on (table
 * `cobro_rate_limits`, through a pool of its own of at most 4 connections); else, on SQLite (a
 * single instance), in this process. Every instance on the same Redis or Postgres shares the
 * counts. The clients open with the server (Redis must answer, or the server does not start) and
 * close after it.
 */
import { RateLimitStore } from "@cobro/http"
import { Effect, Layer, Option, Redacted, Runtime } from "effect"
import { variables } from "./internal/configVariables.js"
import type { ServerConfig } from "./ServerConfig.js"
import { StorageError } from "./Storage.js"

/** How long Redis may take to answer its first PING at start. */
const REDIS_CONNECT_TIMEOUT = 5_000

/** A Redis URL without its password, for messages. */
export const describeRedis = (url: URL): string => {
  const shown = new URL(url.href)
  if (shown.password !== "") shown.password = "***"
  return shown.href.replace(/\/$/, "")
}

/** Where the limits count, for the start banner. */
export const describe = (config: ServerConfig): string => {
  if (!config.rateLimits) return `off (${variables.rateLimits}=false)`
  if (Option.isSome(config.redisUrl)) {
    return `shared by every instance, in Redis ${describeRedis(Redacted.value(config.redisUrl.value))}`
  }
  return config.database._tag === "Postgres"
    ? "shared by every instance, in Postgres (table cobro_rate_limits)"
    : `in this process (SQLite: one instance; set ${variables.redisUrl} to share them)`
}

const reasonOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** An `ioredis` client of `url`, answering PING, closed with the scope. */
const redisClient = (url: URL) =>
  Effect.gen(function* () {
    const { Redis } = yield* Effect.promise(() => import("ioredis"))
    const runtime = yield* Effect.runtime<never>()
    // The connection's own error (`connect ECONNREFUSED …`) says more than `connect()`'s rejection.
    let lastError: string | undefined
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = new Redis(url.href, {
          lazyConnect: true,
          // A command while disconnected fails at once (the count is kept in this process
          // meanwhile) rather than waiting in a queue for the connection to come back.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: 1_000,
          connectTimeout: REDIS_CONNECT_TIMEOUT
        })
        // It reconnects by itself; each failed attempt is an `error` event.
        client.on("error", (error: Error) => {
          lastError = error.message
          Runtime.runFork(runtime)(
            Effect.logDebug("Redis connection error").pipe(Effect.annotateLogs({ cause: error.message }))
          )
        })
        return client
      }),
      (client) => Effect.sync(() => client.disconnect())
    )
    yield* Effect.tryPromise({
      try: () => client.connect().then(() => client.ping()),
      catch: (cause) =>
        new StorageError({
          message: `cannot reach Redis at ${describeRedis(url)} (${variables.redisUrl}): ${lastError ?? reasonOf(cause)}`,
          cause
        })
    })
    return client
  })

/** A `pg` Pool of the server's Postgres database, ended with the scope. */
const pgPool = (url: Redacted.Redacted) =>
  Effect.gen(function* () {
    const { default: Pg } = yield* Effect.promise(() => import("pg"))
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(url),
          max: 4,
          connectionTimeoutMillis: 1_000,
          application_name: "cobro rate limits"
        })
        // An idle connection's error (the server closed it) is not a query's: the pool drops it.
        pool.on("error", () => {})
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1_000))
    )
  })

/** The store of `config` (the in-process one when the limits are off: nothing counts in it). */
export const layer = (config: ServerConfig): Layer.Layer<RateLimitStore.RateLimitStore, StorageError> => {
  if (!config.rateLimits) return RateLimitStore.layerMemory
  if (Option.isSome(config.redisUrl)) {
    const url = Redacted.value(config.redisUrl.value)
    return Layer.scoped(RateLimitStore.RateLimitStore, Effect.map(redisClient(url), RateLimitStore.makeRedis))
  }
  const database = config.database
  return database._tag === "Postgres"
    ? Layer.scoped(
        RateLimitStore.RateLimitStore,
        Effect.map(pgPool(database.url), RateLimitStore.makePostgres)
      )
    : RateLimitStore.layerMemory
}
