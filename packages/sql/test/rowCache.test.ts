/**
 * The cache of merchants' rows (`internal/rowCache.ts`) on a clock of the test's own: an entry
 * lives `TTL_MILLIS`; a write forgets it and keeps reads from being stored for `TTL_MILLIS`
 * (also a read under way when the write happened); nothing missing is stored; the oldest entry
 * goes once there are `MAX_ENTRIES`; callers that miss a key together share one read of it, which
 * a write ends and an interrupted caller does not stop.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as RowCache from "../src/internal/rowCache.js"

const setup = () => {
  let time = 0
  let loads = 0
  const cache = RowCache.make<string>(() => time)
  const load = (value: string | undefined) =>
    Effect.sync(() => {
      loads++
      return value
    })
  return {
    cache,
    load,
    loads: () => loads,
    advance: (millis: number) => {
      time += millis
    }
  }
}

describe("the cache of merchants", () => {
  it.effect("serves an entry for TTL_MILLIS, then reads again", () =>
    Effect.gen(function* () {
      const t = setup()
      expect(yield* t.cache.get("u1", t.load("a"))).toBe("a")
      t.advance(RowCache.TTL_MILLIS - 1)
      expect(yield* t.cache.get("u1", t.load("b"))).toBe("a")
      t.advance(1)
      expect(yield* t.cache.get("u1", t.load("b"))).toBe("b")
      expect(t.loads()).toBe(2)
    })
  )

  it.effect("stores nothing missing", () =>
    Effect.gen(function* () {
      const t = setup()
      expect(yield* t.cache.get("u1", t.load(undefined))).toBeUndefined()
      expect(yield* t.cache.get("u1", t.load("a"))).toBe("a")
      expect(t.loads()).toBe(2)
    })
  )

  it.effect("after a write, reads the row until TTL_MILLIS have passed; a read under way is not kept", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* t.cache.get("u1", t.load("a"))
      // A read under way while the write happens.
      const gate = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(t.cache.get("u1", Effect.zipRight(Deferred.await(gate), t.load("old"))))
      t.advance(RowCache.TTL_MILLIS)
      yield* Effect.yieldNow()
      yield* t.cache.forget("u1")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(slow)).toBe("old")
      expect(yield* t.cache.get("u1", t.load("new"))).toBe("new")
      expect(yield* t.cache.get("u1", t.load("newer"))).toBe("newer")
      t.advance(RowCache.TTL_MILLIS)
      expect(yield* t.cache.get("u1", t.load("kept"))).toBe("kept")
      expect(yield* t.cache.get("u1", t.load("not read"))).toBe("kept")
    })
  )

  it.effect("callers that miss a key while it is being read share that read", () =>
    Effect.gen(function* () {
      const t = setup()
      const gate = yield* Deferred.make<void>()
      const gated = Effect.zipRight(Deferred.await(gate), t.load("a"))
      const callers = yield* Effect.forkAll(Array.from({ length: 16 }, () => t.cache.get("u1", gated)))
      yield* Effect.yieldNow()
      expect(t.loads()).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(callers)).toEqual(Array.from({ length: 16 }, () => "a"))
      expect(t.loads()).toBe(1)
      // Another key is read on its own, and a failed read fails every caller that shared it.
      expect(yield* t.cache.get("u2", t.load("b"))).toBe("b")
      const failing = yield* Deferred.make<void>()
      const broken = Effect.zipRight(Deferred.await(failing), Effect.fail("unreachable" as const))
      const failed = yield* Effect.forkAll([t.cache.get("u3", broken), t.cache.get("u3", t.load("never"))])
      yield* Effect.yieldNow()
      yield* Deferred.succeed(failing, undefined)
      expect(yield* Effect.flip(Fiber.join(failed))).toBe("unreachable")
      expect(t.loads()).toBe(2)
    })
  )

  it.effect("a write ends the sharing: a caller after it reads the row itself", () =>
    Effect.gen(function* () {
      const t = setup()
      const gate = yield* Deferred.make<void>()
      const before = yield* Effect.fork(
        t.cache.get("u1", Effect.zipRight(Deferred.await(gate), t.load("old")))
      )
      yield* Effect.yieldNow()
      yield* t.cache.forget("u1")
      expect(yield* t.cache.get("u1", t.load("new"))).toBe("new")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(before)).toBe("old")
    })
  )

  it.effect("a caller interrupted while it waits does not stop the read the others share", () =>
    Effect.gen(function* () {
      const t = setup()
      const gate = yield* Deferred.make<void>()
      const gated = Effect.zipRight(Deferred.await(gate), t.load("a"))
      const first = yield* Effect.fork(t.cache.get("u1", gated))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(t.cache.get("u1", t.load("not read")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(second)).toBe("a")
      expect(yield* t.cache.get("u1", t.load("not read either"))).toBe("a")
      expect(t.loads()).toBe(1)
    })
  )

  it.effect("keeps at most MAX_ENTRIES, the oldest going first", () =>
    Effect.gen(function* () {
      const t = setup()
      for (let i = 0; i <= RowCache.MAX_ENTRIES; i++) yield* t.cache.get(`u${i}`, t.load(`v${i}`))
      expect(yield* t.cache.get("u0", t.load("again"))).toBe("again")
      expect(yield* t.cache.get(`u${RowCache.MAX_ENTRIES}`, t.load("x"))).toBe(`v${RowCache.MAX_ENTRIES}`)
    })
  )
})
