import { describe, expect, it } from "@effect/vitest"
import { Crypto } from "@cobro/core"
import { HttpConfig } from "@cobro/http"
import { Duration, Effect, Either, Encoding, LogLevel, Option, Redacted } from "effect"
import * as path from "node:path"
import { RateLimits, ServerConfig, Services } from "../src/index.js"
import { configOf } from "./support.js"

const secret = Encoding.encodeBase64(new Uint8Array(32).map((_, i) => (i * 7 + 3) % 256))

const problems = (env: Record<string, string>) => Effect.map(Effect.flip(configOf(env)), (e) => e.problems)

describe("ServerConfig", () => {
  it.effect("defaults: sandbox on ./.cobro/cobro.db, port 3000, the public sandbox key", () =>
    Effect.gen(function* () {
      const config = yield* configOf({})
      expect(config.mode).toBe("sandbox")
      expect(config.port).toBe(3000)
      expect(config.database).toEqual({ _tag: "Sqlite", filename: "./.cobro/cobro.db" })
      expect(config.sandboxKey).toBe(true)
      expect(Redacted.value(config.secretKey)).toEqual(Redacted.value(Crypto.sandboxKey))
      expect(config.publicUrl).toBe("http://localhost:3000")
      expect(Duration.toMillis(config.jobInterval)).toBe(5000)
      expect(config.trustProxy).toBe(false)
      expect(config.rateLimits).toBe(true)
      expect(config.logLevel).toBe(LogLevel.Info)
    })
  )

  it.effect("reads every variable", () =>
    Effect.gen(function* () {
      const config = yield* configOf({
        PORT: "8080",
        COBRO_MODE: "production",
        COBRO_DATABASE_URL: "postgresql://cobro:pw@db.internal:5432/cobro",
        COBRO_SECRET_KEY: secret,
        COBRO_PUBLIC_URL: "https://pay.example.com/",
        COBRO_JOB_INTERVAL: "2 seconds",
        COBRO_TRUST_PROXY: "true",
        COBRO_RATE_LIMITS: "off",
        COBRO_LOG_LEVEL: "debug"
      })
      expect(config.mode).toBe("production")
      expect(config.port).toBe(8080)
      expect(config.database._tag).toBe("Postgres")
      expect(ServerConfig.describeDatabase(config.database)).toBe(
        "Postgres postgresql://cobro:***@db.internal:5432/cobro"
      )
      expect(config.sandboxKey).toBe(false)
      expect(Encoding.encodeBase64(Redacted.value(config.secretKey))).toBe(secret)
      expect(config.publicUrl).toBe("https://pay.example.com")
      expect(Duration.toMillis(config.jobInterval)).toBe(2000)
      expect(config.trustProxy).toBe(true)
      expect(config.rateLimits).toBe(false)
      expect(config.logLevel).toBe(LogLevel.Debug)
    })
  )

  it.effect('rate limits: the defaults, COBRO_RATE_LIMIT_* as "N per DURATION", COBRO_REDIS_URL', () =>
    Effect.gen(function* () {
      const defaults = yield* configOf({})
      expect(defaults.limits).toEqual(HttpConfig.defaultRateLimits)
      expect(defaults.redisUrl).toEqual(Option.none())
      expect(RateLimits.describe(defaults)).toBe(
        "in this process (SQLite: one instance; set COBRO_REDIS_URL to share them)"
      )

      const config = yield* configOf({
        COBRO_DATABASE_URL: "postgres://127.0.0.1/cobro",
        COBRO_RATE_LIMIT_PUBLIC_PER_ADDRESS: "100 per 30 seconds",
        COBRO_RATE_LIMIT_PAYMENTS_PER_USER: "5000 per 1 minute",
        COBRO_RATE_LIMIT_TOKENS_PER_USER: "600 per 1 minute",
        COBRO_RATE_LIMIT_FAILURES_PER_CLIENT: "5 per 15 minutes",
        COBRO_RATE_LIMIT_FAILURES_PER_ADDRESS: "20 PER 5 minutes",
        COBRO_RATE_LIMIT_REPLAYS_PER_USER: "10 per 1 hour"
      })
      const seconds = (limit: HttpConfig.Limit) => Duration.toSeconds(Duration.decode(limit.window))
      expect(config.limits.publicPerAddress.limit).toBe(100)
      expect(seconds(config.limits.publicPerAddress)).toBe(30)
      expect(config.limits.publicPerUser.limit).toBe(5000)
      expect(config.limits.tokensPerUser.limit).toBe(600)
      expect([config.limits.failuresPerClient.limit, seconds(config.limits.failuresPerClient)]).toEqual([
        5, 900
      ])
      expect([config.limits.failuresPerAddress.limit, seconds(config.limits.failuresPerAddress)]).toEqual([
        20, 300
      ])
      expect(seconds(config.limits.replaysPerUser!)).toBe(3600)
      expect(RateLimits.describe(config)).toBe(
        "shared by every instance, in Postgres (table cobro_rate_limits)"
      )

      const redis = yield* configOf({ COBRO_REDIS_URL: "redis://:s3cret@cache.internal:6380/2" })
      expect(RateLimits.describe(redis)).toBe(
        "shared by every instance, in Redis redis://:***@cache.internal:6380/2"
      )
      expect(RateLimits.describe(yield* configOf({ COBRO_RATE_LIMITS: "off" }))).toBe(
        "off (COBRO_RATE_LIMITS=false)"
      )

      expect(yield* problems({ COBRO_RATE_LIMIT_FAILURES_PER_CLIENT: "10" })).toEqual([
        'COBRO_RATE_LIMIT_FAILURES_PER_CLIENT must be a count and a window of at least 1 second such as "10 per 1 minute", got "10"'
      ])
      expect(yield* problems({ COBRO_RATE_LIMIT_TOKENS_PER_USER: "0 per 1 minute" })).toHaveLength(1)
      expect(yield* problems({ COBRO_RATE_LIMIT_TOKENS_PER_USER: "10 per 500 millis" })).toHaveLength(1)
      expect(yield* problems({ COBRO_REDIS_URL: "http://:pw@cache.internal" })).toEqual([
        "COBRO_REDIS_URL must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379"
      ])
    })
  )

  it.effect("the default public URL follows PORT", () =>
    Effect.map(configOf({ PORT: "4321" }), (c) => expect(c.publicUrl).toBe("http://localhost:4321"))
  )

  it("parses database URLs", () => {
    const parse = ServerConfig.parseDatabaseUrl
    expect(parse("postgres://u@h/db")).toEqual(Either.right(expect.objectContaining({ _tag: "Postgres" })))
    expect(parse("postgresql://u@h:5433/db")).toEqual(
      Either.right(expect.objectContaining({ _tag: "Postgres" }))
    )
    expect(parse("file:./.cobro/cobro.db")).toEqual(
      Either.right({ _tag: "Sqlite", filename: "./.cobro/cobro.db" })
    )
    expect(parse("sqlite:data/x.db")).toEqual(Either.right({ _tag: "Sqlite", filename: "data/x.db" }))
    expect(parse("file:///var/lib/cobro/cobro.db")).toEqual(
      Either.right({ _tag: "Sqlite", filename: path.normalize("/var/lib/cobro/cobro.db") })
    )
    expect(parse("/tmp/cobro.db")).toEqual(Either.right({ _tag: "Sqlite", filename: "/tmp/cobro.db" }))
    expect(Either.isLeft(parse("mysql://u@h/db"))).toBe(true)
    expect(Either.isLeft(parse("  "))).toBe(true)
    expect(Either.isLeft(parse("postgres://"))).toBe(true)
  })

  it.effect("a bad PORT names the variable and the value", () =>
    Effect.map(problems({ PORT: "eighty" }), (p) =>
      expect(p).toEqual(['PORT must be a TCP port (an integer from 0 to 65535), got "eighty"'])
    )
  )

  it.effect("PORT out of range", () =>
    Effect.map(problems({ PORT: "70000" }), (p) => expect(p[0]).toMatch(/^PORT must be a TCP port/))
  )

  it.effect("a bad COBRO_MODE", () =>
    Effect.map(problems({ COBRO_MODE: "prod" }), (p) =>
      expect(p).toEqual(['COBRO_MODE must be "sandbox" or "production", got "prod"'])
    )
  )

  it.effect("an unsupported database scheme", () =>
    Effect.map(problems({ COBRO_DATABASE_URL: "mysql://root@localhost/cobro" }), (p) =>
      expect(p[0]).toMatch(/^COBRO_DATABASE_URL uses the unsupported scheme "mysql:"/)
    )
  )

  it.effect("production requires COBRO_SECRET_KEY, with a hint on how to make one", () =>
    Effect.map(problems({ COBRO_MODE: "production" }), (p) => {
      expect(p).toHaveLength(1)
      expect(p[0]).toMatch(/^COBRO_SECRET_KEY is required in production mode: 32 random bytes/)
      expect(p[0]).toContain("openssl rand -base64 32")
    })
  )

  it.effect("production refuses the public sandbox key", () =>
    Effect.map(
      problems({
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: Encoding.encodeHex(Redacted.value(Crypto.sandboxKey))
      }),
      (p) => expect(p).toEqual(["COBRO_SECRET_KEY is the public sandbox key; production needs a secret one"])
    )
  )

  it.effect("a key of the wrong size is refused in any mode", () =>
    Effect.map(problems({ COBRO_SECRET_KEY: "c2hvcnQ=" }), (p) =>
      expect(p).toEqual(["COBRO_SECRET_KEY must be 32 bytes (32 bytes, base64 or hex)"])
    )
  )

  it.effect("a sandbox with its own key uses it", () =>
    Effect.map(configOf({ COBRO_SECRET_KEY: secret }), (c) => {
      expect(c.sandboxKey).toBe(false)
      expect(Encoding.encodeBase64(Redacted.value(c.secretKey))).toBe(secret)
    })
  )

  it.effect("bad public URL, job interval, proxy flag and log level", () =>
    Effect.gen(function* () {
      expect(yield* problems({ COBRO_PUBLIC_URL: "pay.example.com" })).toEqual([
        'COBRO_PUBLIC_URL must be an absolute http(s) URL such as https://pay.example.com, got "pay.example.com"'
      ])
      expect(yield* problems({ COBRO_PUBLIC_URL: "ftp://pay.example.com" })).toEqual([
        'COBRO_PUBLIC_URL must be an http or https URL, got "ftp://pay.example.com"'
      ])
      expect(yield* problems({ COBRO_JOB_INTERVAL: "often" })).toEqual([
        'COBRO_JOB_INTERVAL must be a duration such as "5 seconds" or "500 millis", got "often"'
      ])
      expect(yield* problems({ COBRO_JOB_INTERVAL: "1 millis" })).toEqual([
        'COBRO_JOB_INTERVAL must be at least 100 millis and finite, got "1 millis"'
      ])
      expect(yield* problems({ COBRO_TRUST_PROXY: "maybe" })).toEqual([
        'COBRO_TRUST_PROXY must be true or false (on or off), got "maybe"'
      ])
      expect(yield* problems({ COBRO_RATE_LIMITS: "sometimes" })).toEqual([
        'COBRO_RATE_LIMITS must be true or false (on or off), got "sometimes"'
      ])
      expect(yield* problems({ COBRO_LOG_LEVEL: "loud" })).toEqual([
        'COBRO_LOG_LEVEL must be one of all, trace, debug, info, warn, error, fatal, off, got "loud"'
      ])
      expect((yield* configOf({ COBRO_LOG_LEVEL: "Warning" })).logLevel).toBe(LogLevel.Warning)
    })
  )

  it.effect("the user token lifetime: 1 hour by default, at least 1 second", () =>
    Effect.gen(function* () {
      expect(Duration.toMillis((yield* configOf({})).tokenLifetime)).toBe(3_600_000)
      expect(Duration.toMillis((yield* configOf({ COBRO_TOKEN_LIFETIME: "2 seconds" })).tokenLifetime)).toBe(
        2000
      )
      expect(yield* problems({ COBRO_TOKEN_LIFETIME: "soon" })).toEqual([
        'COBRO_TOKEN_LIFETIME must be a duration such as "1 hour" or "15 minutes", got "soon"'
      ])
      expect(yield* problems({ COBRO_TOKEN_LIFETIME: "500 millis" })).toEqual([
        'COBRO_TOKEN_LIFETIME must be at least 1 second and finite, got "500 millis"'
      ])
    })
  )

  it.effect("the Idempotency-Key lease: 5 seconds by default, at least 1 second, given to the engine", () =>
    Effect.gen(function* () {
      expect(Duration.toMillis((yield* configOf({})).idempotencyLease)).toBe(5_000)
      const config = yield* configOf({ COBRO_IDEMPOTENCY_LEASE: "2 seconds" })
      expect(Duration.toMillis(config.idempotencyLease)).toBe(2_000)
      expect(Services.engineSettings(config).idempotencyLease).toEqual(config.idempotencyLease)
      expect(yield* problems({ COBRO_IDEMPOTENCY_LEASE: "soon" })).toEqual([
        'COBRO_IDEMPOTENCY_LEASE must be a duration such as "5 seconds", got "soon"'
      ])
      expect(yield* problems({ COBRO_IDEMPOTENCY_LEASE: "500 millis" })).toEqual([
        'COBRO_IDEMPOTENCY_LEASE must be at least 1 second and finite, got "500 millis"'
      ])
    })
  )

  it.effect("every problem is reported at once", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        configOf({ PORT: "-1", COBRO_MODE: "production", COBRO_DATABASE_URL: "redis://x" })
      )
      expect(error.problems).toHaveLength(3)
      expect(error.problems.join("\n")).toMatch(/PORT/)
      expect(error.problems.join("\n")).toMatch(/COBRO_DATABASE_URL/)
      expect(error.problems.join("\n")).toMatch(/COBRO_SECRET_KEY/)
      expect(error.message).toMatch(/^invalid configuration:\n {2}/)
    })
  )
})
