/**
 * `RateLimitStore`'s fallback: a shared store that fails does not fail the request; the count is
 * kept in the process meanwhile, and the failure is logged once, not on every request.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import Pg from "pg"
import { RateLimitStore } from "../src/index.js"

describe("RateLimitStore", () => {
  it.live("a Postgres store that cannot connect counts in the process, logging it once", () =>
    Effect.gen(function* () {
      // Nothing listens on port 1: every query fails to connect.
      const pool = new Pg.Pool({
        connectionString: "postgres://127.0.0.1:1/nothing",
        connectionTimeoutMillis: 200
      })
      yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
      const counter = RateLimitStore.makePostgres(pool).counter("test", { limit: 2, window: "1 minute" })
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(message))
      })
      const counts = yield* Effect.forEach([1, 2, 3], () => counter.add("10.0.0.1")).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(counts.map((c) => c.count)).toEqual([1, 2, 3])
      expect(counts.every((c) => c.msLeft > 0 && c.msLeft <= 60_000)).toBe(true)
      expect((yield* counter.read("10.0.0.1")).count).toBe(3)
      expect((yield* counter.read("10.0.0.2")).count).toBe(0)
      expect(warnings).toEqual(["rate limit store unavailable: counting in this process meanwhile"])
    }).pipe(Effect.scoped)
  )

  it.live("the memory store counts per key in fixed windows of whole seconds", () =>
    Effect.gen(function* () {
      const counter = RateLimitStore.makeMemory().counter("test", { limit: 1, window: "1500 millis" })
      expect((yield* counter.add("a")).count).toBe(1)
      const second = yield* counter.add("a")
      expect(second.count).toBe(2)
      // Rounded up to 2 seconds (what Redis can keep).
      expect(second.msLeft).toBeGreaterThan(1500)
      expect(second.msLeft).toBeLessThanOrEqual(2000)
      expect((yield* counter.add("b")).count).toBe(1)
    })
  )
})
