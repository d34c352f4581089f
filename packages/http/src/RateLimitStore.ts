/**
 * Where the API's rate limits count, through `rate-limiter-flexible`: in this process
 * (`layerMemory`, what `CobroHttp.layer` uses when the host provides no store), or in a store every
 * instance behind one address shares: Postgres (`layerPostgres`, a `pg` Pool on a database with
 * cobro's migrations, table `cobro_rate_limits`) or Redis (`layerRedis`, an `ioredis` client).
 *
 * Windows are fixed and on real time (the store's clock): a key's window starts at its first
 * count. A shared store that fails or answers late does not fail the request: that count is kept
 * in this process instead (logged), until the store answers again.
 */
import { Context, Duration, Effect, Layer } from "effect"
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  type RateLimiterRes
} from "rate-limiter-flexible"
import type { Limit } from "./HttpConfig.js"

/** The table of `layerPostgres` (created by cobro's migrations). */
export const POSTGRES_TABLE = "cobro_rate_limits"

/** A limit's count for one key: what the window holds and when it ends. */
export interface Count {
  readonly count: number
  /** Milliseconds until the window ends. */
  readonly msLeft: number
}

/** One limit's counters, a key each (an address, a user id…). */
export interface Counter {
  /** Counts one for `key`; the count after it. */
  readonly add: (key: string) => Effect.Effect<Count>
  /** The count of `key`'s window, without counting (zero when it has none). */
  readonly read: (key: string) => Effect.Effect<Count>
}

export interface RateLimitStoreShape {
  /** Where the counts live, for the operator: `memory`, `postgres` or `redis`. */
  readonly kind: "memory" | "postgres" | "redis"
  /** The counters of `limit`, under `name` (unique per limit: the keys' prefix). */
  readonly counter: (name: string, limit: Limit) => Counter
}

export class RateLimitStore extends Context.Tag("@cobro/http/RateLimitStore")<
  RateLimitStore,
  RateLimitStoreShape
>() {}

/** The window in whole seconds, at least one (Redis keeps whole seconds). */
const seconds = (limit: Limit) => Math.max(1, Math.ceil(Duration.toSeconds(Duration.decode(limit.window))))

/** How long a shared store may take before the count is kept in this process. */
const STORE_TIMEOUT = Duration.seconds(1)

const zero: Count = { count: 0, msLeft: 0 }

/** A window that ended (the memory store drops it a moment later) counts nothing. */
const countOf = (res: RateLimiterRes | null): Count =>
  res === null || res.msBeforeNext <= 0 ? zero : { count: res.consumedPoints, msLeft: res.msBeforeNext }

/** Whether a shared store is failing: logged once when it starts failing and once when it recovers. */
interface Health {
  failing: boolean
}

/**
 * `limiter`'s counters; with `fallback` (a shared store's), a failed or late call is made on it
 * instead.
 */
const counterOf = (
  name: string,
  limiter: RateLimiterAbstract,
  fallback?: { readonly limiter: RateLimiterAbstract; readonly health: Health }
): Counter => {
  const call = (run: (l: RateLimiterAbstract) => Promise<RateLimiterRes | null>): Effect.Effect<Count> => {
    // `penalty` and `get` resolve with a count; a rejection is the store's failure.
    const on = (l: RateLimiterAbstract) => Effect.tryPromise({ try: () => run(l), catch: (cause) => cause })
    if (fallback === undefined) return Effect.map(Effect.orDie(on(limiter)), countOf)
    const { health } = fallback
    return on(limiter).pipe(
      Effect.timeoutFail({ duration: STORE_TIMEOUT, onTimeout: () => "no answer within 1 second" }),
      Effect.tap(() =>
        health.failing
          ? Effect.zipRight(
              Effect.sync(() => (health.failing = false)),
              Effect.logInfo("rate limit store answers again: counting in it")
            )
          : Effect.void
      ),
      Effect.catchAll((cause) =>
        Effect.zipRight(
          health.failing
            ? Effect.void
            : Effect.zipRight(
                Effect.sync(() => (health.failing = true)),
                Effect.logWarning("rate limit store unavailable: counting in this process meanwhile").pipe(
                  Effect.annotateLogs({ limit: name, cause: String(cause) })
                )
              ),
          Effect.orDie(on(fallback.limiter))
        )
      ),
      Effect.map(countOf)
    )
  }
  return {
    add: (key) => call((l) => l.penalty(key, 1)),
    read: (key) => call((l) => l.get(key))
  }
}

const memoryLimiter = (name: string, limit: Limit) =>
  new RateLimiterMemory({ keyPrefix: name, points: limit.limit, duration: seconds(limit) })

/** Counts in this process: right for a single instance (and the reference server on SQLite). */
export const makeMemory = (): RateLimitStoreShape => ({
  kind: "memory",
  counter: (name, limit) => counterOf(name, memoryLimiter(name, limit))
})

export const layerMemory: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, makeMemory)

/**
 * Counts in Postgres, table `cobro_rate_limits` (cobro's migrations create it), through `pool`
 * (a `pg` Pool the host owns and ends). Expired rows are deleted every 5 minutes.
 */
export const makePostgres = (pool: unknown): RateLimitStoreShape => {
  let cleaning = false
  const health: Health = { failing: false }
  return {
    kind: "postgres",
    counter: (name, limit) => {
      // One limiter of the table deletes the expired rows of all of them.
      const clearExpiredByTimeout = !cleaning
      cleaning = true
      const shared = new RateLimiterPostgres({
        storeClient: pool,
        storeType: "pool",
        tableName: POSTGRES_TABLE,
        tableCreated: true,
        clearExpiredByTimeout,
        keyPrefix: name,
        points: limit.limit,
        duration: seconds(limit)
      })
      return counterOf(name, shared, { limiter: memoryLimiter(name, limit), health })
    }
  }
}

export const layerPostgres = (pool: unknown): Layer.Layer<RateLimitStore> =>
  Layer.sync(RateLimitStore, () => makePostgres(pool))

/**
 * Counts in Redis through `client` (an `ioredis` client the host owns and closes; create it with
 * `enableOfflineQueue: false`, so that a call while it is disconnected fails at once and is
 * counted in this process). Keys are `cobro:rl:<limit>:<key>`, expiring with their window.
 */
export const makeRedis = (client: unknown): RateLimitStoreShape => {
  const health: Health = { failing: false }
  return {
    kind: "redis",
    counter: (name, limit) =>
      counterOf(
        name,
        new RateLimiterRedis({
          storeClient: client,
          keyPrefix: `cobro:rl:${name}`,
          points: limit.limit,
          duration: seconds(limit)
        }),
        { limiter: memoryLimiter(name, limit), health }
      )
  }
}

export const layerRedis = (client: unknown): Layer.Layer<RateLimitStore> =>
  Layer.sync(RateLimitStore, () => makeRedis(client))
