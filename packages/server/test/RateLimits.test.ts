/**
 * Rate limits shared by instances (issue 45, item 3): two servers, each on its own port over real
 * HTTP, count one merchant's wrong secrets and one address's together, on one Postgres database
 * and on one Redis (`COBRO_REDIS_URL`, with each instance on a SQLite file of its own, so that
 * Redis is all they share). A fleet's successful token requests are not limited. Windows of five
 * seconds, passed in real time. Redis must listen on 127.0.0.1:6379 (`.ci/run` starts it): without
 * it the Redis tests fail, saying so.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { Redis } from "ioredis"
import Pg from "pg"
import { Admin, Server } from "../src/index.js"
import { configOf, type Env, tempDb } from "./support.js"

const REDIS_URL = "redis://127.0.0.1:6379"
const WINDOW_MS = 5_000
const pg = await Effect.runPromise(pgAvailable)

/** Limits with short windows; the client address is the `X-Forwarded-For` the test sends. */
const limitsEnv: Env = {
  COBRO_TRUST_PROXY: "true",
  COBRO_JOB_INTERVAL: "1 hour",
  COBRO_RATE_LIMIT_FAILURES_PER_CLIENT: "4 per 5 seconds",
  COBRO_RATE_LIMIT_FAILURES_PER_ADDRESS: "6 per 5 seconds"
}

/** Names no other run on this Redis or database uses (the counts outlive a run by a window). */
const unique = () => randomBytes(4).toString("hex")
const addressOf = () => `10.${[...randomBytes(3)].join(".")}`

/** A whole server of `env` on a port of its own, stopped with the scope. */
const instance = (env: Env) =>
  Effect.gen(function* () {
    const config = yield* configOf(env)
    const context = yield* Layer.build(Server.layer(config, 0))
    const { address } = Context.get(context, HttpServer.HttpServer)
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("not a TCP server")
    return { context, base: `http://127.0.0.1:${address.port}` }
  })

type Instance = Effect.Effect.Success<ReturnType<typeof instance>>

/** POST /users/{user}/tokens on `server` from `address`: the status. */
const tokenRequest = (
  server: Instance,
  user: string,
  credentials: { readonly client_id: string; readonly client_secret: string },
  address: string
) =>
  Effect.promise(async () => {
    const response = await fetch(`${server.base}/users/${user}/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify(credentials)
    })
    const body = (await response.json()) as { message?: string }
    return {
      status: response.status,
      message: body.message,
      retryAfter: response.headers.get("retry-after")
    }
  })

const createMerchant = (server: Instance, user_id: string) =>
  Effect.provide(
    Admin.createUser({
      user_id,
      name: `Tienda ${user_id}`,
      email: `${user_id}@example.com`,
      cuit: "30712345671",
      status: "ACTIVE"
    }),
    server.context
  )

const windowPasses = Effect.sleep(WINDOW_MS + 300)

/**
 * What two instances `a` and `b` must share: a merchant's wrong secrets (locked on both, the right
 * secret too, until the window passes) and an address's; and what they must not limit: a fleet's
 * token requests. `a` and `b` may have a merchant each under one user id (on separate databases).
 */
const sharedLimits = (
  a: Instance,
  b: Instance,
  user: string,
  secrets: {
    readonly a: { client_id: string; client_secret: string }
    readonly b: { client_id: string; client_secret: string }
  }
) =>
  Effect.gen(function* () {
    // A fleet: 25 token requests at once, spread over both instances, all issued.
    const fleet = yield* Effect.all(
      Array.from({ length: 25 }, (_, i) =>
        i % 2 === 0
          ? tokenRequest(a, user, secrets.a, addressOf())
          : tokenRequest(b, user, secrets.b, addressOf())
      ),
      { concurrency: "unbounded" }
    )
    expect(fleet.map((r) => r.status)).toEqual(Array(25).fill(200))

    // Wrong secrets for one user: two on each instance, from four addresses.
    const wrong = (server: Instance, n: number) =>
      tokenRequest(server, user, { client_id: secrets.a.client_id, client_secret: `wrong-${n}` }, addressOf())
    for (const [server, n] of [
      [a, 1],
      [b, 2],
      [a, 3],
      [b, 4]
    ] as const) {
      const r = yield* wrong(server, n)
      expect(r.status).toBe(401)
      expect(r.message).toBe("auth.credentials.invalid")
    }
    // Locked on both instances, with the right secret too.
    const onA = yield* tokenRequest(a, user, secrets.a, addressOf())
    expect(onA.status).toBe(429)
    expect(onA.message).toBe("rate.limit.exceeded")
    expect(Number(onA.retryAfter)).toBeGreaterThanOrEqual(1)
    expect(Number(onA.retryAfter)).toBeLessThanOrEqual(5)
    expect((yield* tokenRequest(b, user, secrets.b, addressOf())).status).toBe(429)

    yield* windowPasses
    expect((yield* tokenRequest(b, user, secrets.b, addressOf())).status).toBe(200)
    expect((yield* tokenRequest(a, user, secrets.a, addressOf())).status).toBe(200)
  })

/** An address locked on `b` by wrong secrets sent to `a` (`secret`: `user`'s on `b`), within one window. */
const sharedAddress = (
  a: Instance,
  b: Instance,
  user: string,
  secret: { client_id: string; client_secret: string }
) =>
  Effect.gen(function* () {
    const address = addressOf()
    for (let i = 0; i < 6; i++) {
      expect((yield* tokenRequest(a, `nadie_${unique()}`, secret, address)).status).toBe(401)
    }
    expect((yield* tokenRequest(b, user, secret, address)).status).toBe(429)
    expect((yield* tokenRequest(b, user, secret, addressOf())).status).toBe(200)
  })

describe("two instances on one Postgres database", () => {
  it.scopedLive.skipIf(!pg)(
    "share the count of wrong secrets per user and per address; a fleet's token requests pass",
    () =>
      Effect.gen(function* () {
        const env = { ...limitsEnv, COBRO_DATABASE_URL: yield* freshPgUrl }
        const a = yield* instance(env)
        const b = yield* instance(env)
        const user = `tienda_${unique()}`
        const credentials = yield* createMerchant(a, user)
        const secret = { client_id: credentials.client_id, client_secret: credentials.client_secret }
        yield* sharedAddress(a, b, user, secret)
        yield* sharedLimits(a, b, user, { a: secret, b: secret })

        // The counts are Postgres rows (the table of migration 0021).
        const pool = new Pg.Pool({ connectionString: env.COBRO_DATABASE_URL, max: 1 })
        yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
        const rows = yield* Effect.promise(() =>
          pool.query<{ key: string }>("SELECT key FROM cobro_rate_limits WHERE key LIKE $1", [
            `%user:${user}`
          ])
        )
        expect(rows.rows.map((r) => r.key).sort()).toEqual([
          `failures-client:user:${user}`,
          `tokens-user:user:${user}`
        ])
      }),
    60_000
  )
})

describe("two instances on one Redis (COBRO_REDIS_URL)", () => {
  it.scopedLive(
    "share the count of wrong secrets per user and per address, with nothing else shared",
    () =>
      Effect.gen(function* () {
        const redis = new Redis(REDIS_URL, {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => redis.disconnect()))
        yield* Effect.tryPromise(() => redis.connect().then(() => redis.ping())).pipe(
          Effect.orDieWith(
            () =>
              new Error(
                `Redis is not listening at ${REDIS_URL}; start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no (.ci/run does)`
              )
          )
        )
        // Each instance on a SQLite file of its own, with a merchant of the same user id.
        const a = yield* instance({
          ...limitsEnv,
          COBRO_DATABASE_URL: yield* tempDb,
          COBRO_REDIS_URL: REDIS_URL
        })
        const b = yield* instance({
          ...limitsEnv,
          COBRO_DATABASE_URL: yield* tempDb,
          COBRO_REDIS_URL: REDIS_URL
        })
        const user = `tienda_${unique()}`
        const onA = yield* createMerchant(a, user)
        const onB = yield* createMerchant(b, user)
        const secrets = {
          a: { client_id: onA.client_id, client_secret: onA.client_secret },
          b: { client_id: onB.client_id, client_secret: onB.client_secret }
        }
        yield* sharedAddress(a, b, user, secrets.b)
        yield* sharedLimits(a, b, user, secrets)

        // The counts are Redis keys, expiring with their window.
        const key = `cobro:rl:tokens-user:user:${user}`
        expect(Number(yield* Effect.promise(() => redis.get(key)))).toBeGreaterThanOrEqual(2)
        const ttl = yield* Effect.promise(() => redis.pttl(key))
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(60_000)
      }),
    60_000
  )

  it.scopedLive("a server whose COBRO_REDIS_URL does not answer does not start, and says why", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        instance({ COBRO_DATABASE_URL: yield* tempDb, COBRO_REDIS_URL: "redis://:pw@127.0.0.1:1/0" })
      )
      expect(String((error as { message?: string }).message)).toMatch(
        /^cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0 \(COBRO_REDIS_URL\): connect ECONNREFUSED 127\.0\.0\.1:1$/
      )
    })
  )
})
