/**
 * `Idempotency-Key` records: the port's row operations (insert-if-absent, fenced writes, purge)
 * and the `Idempotency` service over them, including concurrent requests with one key.
 */
import { expect } from "@effect/vitest"
import { Idempotency, Payments } from "@cobro/core"
import { IdempotencyRepository } from "@cobro/core/ports"
import { DateTime, Deferred, Duration, Effect, Either, Fiber, Option, Ref, Schema, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { createRequest, expectLedgerOk, seedUser } from "./fixtures.js"

const record = (
  fields: Partial<ConstructorParameters<typeof IdempotencyRepository.IdempotencyRecord>[0]> & {
    readonly at: number
  }
) => {
  const { at, ...rest } = fields
  return new IdempotencyRepository.IdempotencyRecord({
    scope: "u1",
    key: "k",
    fingerprint: "POST /payments A",
    state: "in_flight",
    locked_until: DateTime.unsafeMake(at + 60_000),
    result: null,
    created_at: DateTime.unsafeMake(at),
    ...rest
  })
}

/** The operations here answer plain JSON values, recorded as they are. */
const Json = Schema.Unknown

/** A handler that counts its runs and waits for `gate` before answering. */
const gated = Effect.gen(function* () {
  const runs = yield* Ref.make(0)
  const gate = yield* Deferred.make<void>()
  const handler = Ref.update(runs, (n) => n + 1).pipe(
    Effect.zipRight(Deferred.await(gate)),
    Effect.as({ id: "VAR-1" })
  )
  return { runs, gate, handler }
})

export const idempotencyScenarios: ReadonlyArray<Scenario> = [
  {
    name: "idempotency: begin inserts once per (scope, key); find, fenced renew/complete/release/takeOver; purge",
    run: Effect.gen(function* () {
      const repo = yield* IdempotencyRepository.IdempotencyRepository
      const mine = record({ at: 1_000 })
      expect(yield* repo.begin(mine)).toEqual(Option.none())
      // A second begin returns the stored record and changes nothing.
      expect(yield* repo.begin(record({ at: 2_000, fingerprint: "other" }))).toEqual(Option.some(mine))
      expect(yield* repo.begin(record({ at: 2_000, scope: "public:u1" }))).toEqual(Option.none())
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(mine))
      expect(yield* repo.find("u1", "nope")).toEqual(Option.none())

      // The owner renews its lease: a takeover fenced on the lease it saw no longer matches, the
      // owner's own writes (fenced on its claim) still do.
      expect(yield* repo.renew(mine, DateTime.unsafeMake(90_000))).toBe(true)
      const renewed = new IdempotencyRepository.IdempotencyRecord({
        ...mine,
        locked_until: DateTime.unsafeMake(90_000)
      })
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(renewed))
      expect(yield* repo.takeOver(mine, record({ at: 61_000 }))).toBe(false)
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(renewed))

      // Another request takes the key over once the lease lapsed: the first one can no longer
      // renew, complete or release it.
      const taker = record({ at: 91_000 })
      expect(yield* repo.takeOver(renewed, taker)).toBe(true)
      expect(yield* repo.takeOver(renewed, record({ at: 91_001 }))).toBe(false)
      expect(yield* repo.renew(mine, DateTime.unsafeMake(120_000))).toBe(false)
      expect(yield* repo.complete(mine, '"late"')).toBe(false)
      expect(yield* repo.release(mine)).toBe(false)
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(taker))

      expect(yield* repo.complete(taker, '{"message":"x"}')).toBe(true)
      const done = new IdempotencyRepository.IdempotencyRecord({
        ...taker,
        state: "completed",
        result: '{"message":"x"}'
      })
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(done))
      // A completed record is never released nor renewed; its own claim may replace its result
      // (the final answer after the one recorded at commit), another may not.
      expect(yield* repo.release(taker)).toBe(false)
      expect(yield* repo.release(done)).toBe(false)
      expect(yield* repo.renew(taker, DateTime.unsafeMake(200_000))).toBe(false)
      expect(yield* repo.complete(mine, '"late"')).toBe(false)
      expect(yield* repo.complete(taker, '{"message":"y"}')).toBe(true)
      expect(Option.map(yield* repo.find("u1", "k"), (r) => r.result)).toEqual(Option.some('{"message":"y"}'))
      const final = new IdempotencyRepository.IdempotencyRecord({ ...done, result: '{"message":"y"}' })

      const other = record({ at: 3_000, key: "k2" })
      yield* repo.begin(other)
      expect(yield* repo.release(other)).toBe(true)
      expect(yield* repo.find("u1", "k2")).toEqual(Option.none())

      // created_at: "u1"/"k" 91_000, "public:u1"/"k" 2_000.
      expect(yield* repo.purgeBefore(DateTime.unsafeMake(2_000))).toBe(0)
      expect(yield* repo.purgeBefore(DateTime.unsafeMake(91_000))).toBe(1)
      expect(yield* repo.find("public:u1", "k")).toEqual(Option.none())
      expect(yield* repo.find("u1", "k")).toEqual(Option.some(final))
    })
  },
  {
    name: "idempotency: run replays the stored result, refuses a reused key and an in-flight duplicate",
    run: Effect.gen(function* () {
      const idem = yield* Idempotency.Idempotency
      const { gate, handler, runs } = yield* gated
      const first = yield* Effect.fork(idem.run("u1", "k", "A", Json, handler))
      yield* Effect.yieldNow()
      while ((yield* Ref.get(runs)) === 0) yield* Effect.yieldNow()
      expect((yield* Effect.flip(idem.run("u1", "k", "A", Json, handler))).key).toBe(
        "idempotency.request.in_progress"
      )
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toEqual({ result: '{"id":"VAR-1"}', replayed: false })
      expect(yield* idem.run("u1", "k", "A", Json, handler)).toEqual({
        result: '{"id":"VAR-1"}',
        replayed: true
      })
      const reused = yield* Effect.flip(idem.run("u1", "k", "B", Json, handler))
      expect(reused).toMatchObject({ _tag: "RequestMismatch", key: "idempotency.key.reused" })
      expect(yield* Ref.get(runs)).toBe(1)
      // A failing handler leaves nothing behind.
      expect(yield* Effect.flip(idem.run("u1", "k-fail", "A", Json, Effect.fail("down" as const)))).toBe(
        "down"
      )
      expect((yield* idem.run("u1", "k-fail", "B", Json, handler)).replayed).toBe(false)
    })
  },
  {
    name: "idempotency: two concurrent runs with one key execute once; the other is in progress or a replay",
    run: Effect.gen(function* () {
      const idem = yield* Idempotency.Idempotency
      // Held open: the one that runs is still running when the other looks at the key.
      {
        const { gate, handler, runs } = yield* gated
        const a = yield* Effect.fork(Effect.either(idem.run("u1", "held", "A", Json, handler)))
        const b = yield* Effect.fork(Effect.either(idem.run("u1", "held", "A", Json, handler)))
        const loser = yield* Effect.race(Fiber.join(a), Fiber.join(b))
        expect(Either.isLeft(loser) && loser.left.key).toBe("idempotency.request.in_progress")
        yield* Deferred.succeed(gate, undefined)
        const results = [yield* Fiber.join(a), yield* Fiber.join(b)]
        expect(results.filter(Either.isRight).map((r) => r.right.replayed)).toEqual([false])
        expect(yield* Ref.get(runs)).toBe(1)
      }
      // Free-running: whichever order the storage serializes them in.
      for (let i = 0; i < 5; i++) {
        const runs = yield* Ref.make(0)
        const handler = Effect.as(
          Ref.update(runs, (n) => n + 1),
          { n: i }
        )
        const results = yield* Effect.all(
          [0, 1, 2].map(() => Effect.either(idem.run("u1", `free-${i}`, "A", Json, handler))),
          { concurrency: "unbounded" }
        )
        expect(yield* Ref.get(runs)).toBe(1)
        const fresh = results.filter((r) => Either.isRight(r) && !r.right.replayed)
        expect(fresh).toHaveLength(1)
        for (const r of results) {
          if (Either.isLeft(r)) expect(r.left.key).toBe("idempotency.request.in_progress")
          else expect(r.right.result).toBe(`{"n":${i}}`)
        }
      }
    })
  },
  {
    name: "idempotency: a lapsed lock is taken over by one retry; keys expire after 24 h and are purged",
    run: Effect.gen(function* () {
      const idem = yield* Idempotency.Idempotency
      const repo = yield* IdempotencyRepository.IdempotencyRepository
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const now = yield* DateTime.now
      // A request that crashed while holding the key.
      yield* repo.begin(record({ at: DateTime.toEpochMillis(now), key: "crashed", fingerprint: "A" }))
      const runs = yield* Ref.make(0)
      const handler = Effect.as(
        Ref.update(runs, (n) => n + 1),
        {}
      )
      expect((yield* Effect.flip(idem.run("u1", "crashed", "A", Json, handler))).key).toBe(
        "idempotency.request.in_progress"
      )
      yield* TestClock.adjust("1 minute")
      const retries = yield* Effect.all(
        [0, 1, 2].map(() => Effect.either(idem.run("u1", "crashed", "A", Json, handler))),
        { concurrency: "unbounded" }
      )
      expect(yield* Ref.get(runs)).toBe(1)
      expect(retries.filter((r) => Either.isRight(r) && !r.right.replayed)).toHaveLength(1)

      yield* TestClock.adjust(Duration.sum(Duration.hours(24), Duration.millis(1)))
      yield* idem.run("u1", "recent", "A", Json, handler)
      // Past 24 h the old key is free again, even for another request.
      expect((yield* idem.run("u1", "crashed", "B", Json, handler)).replayed).toBe(false)
      yield* TestClock.adjust(Duration.sum(Duration.hours(24), Duration.millis(1)))
      yield* idem.run("u1", "newest", "A", Json, handler)
      expect(yield* idem.purge()).toBe(2)
      expect(yield* repo.find("u1", "crashed")).toEqual(Option.none())
      expect(Option.map(yield* repo.find("u1", "newest"), (r) => r.state)).toEqual(Option.some("completed"))
    })
  },
  {
    name: "idempotency: a retried payment creation replays the first payment",
    run: Effect.gen(function* () {
      yield* seedUser()
      const idem = yield* Idempotency.Idempotency
      const payments = yield* Payments.Payments
      const body = {
        user_id: "u1",
        external_id: "o-1",
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"]
      }
      const create = Effect.map(payments.create(createRequest(body)), (p) => ({ id: p.id }))
      const fp = yield* idem.fingerprint("POST", "/payments", body)
      const results = yield* Effect.all(
        [0, 1].map(() => Effect.either(idem.run("u1", "create", fp, Json, create))),
        { concurrency: "unbounded" }
      )
      const winner = results.find((r) => Either.isRight(r) && !r.right.replayed)
      expect(winner).toBeDefined()
      expect(yield* idem.run("u1", "create", fp, Json, create)).toEqual({
        ...(winner as Either.Right<never, Idempotency.Outcome>).right,
        replayed: true
      })
      yield* expectLedgerOk
    })
  }
]
