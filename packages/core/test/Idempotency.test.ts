import { describe, expect, it } from "@effect/vitest"
import { DateTime, Deferred, Duration, Effect, Fiber, Option, Ref, Schema, TestClock } from "effect"
import { type Errors, Idempotency, Ids, type Payment, Payments } from "../src/index.js"
import { IdempotencyRepository, PaymentRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createRequest, expectLedgerOk, seedUser } from "./fixtures.js"

const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const service = Idempotency.Idempotency

/** An operation that counts how often it really ran; its result is recorded as JSON. */
const counted = (result: unknown = { id: "VAR-1" }) =>
  Effect.map(Ref.make(0), (runs) => ({
    runs,
    handler: Effect.as(
      Ref.update(runs, (n) => n + 1),
      result
    )
  }))

const run = <A, E, R>(
  key: string,
  handler: Effect.Effect<A, E, R>,
  options: {
    readonly scope?: string
    readonly fingerprint?: string
    readonly schema?: Schema.Schema<A, unknown>
  } = {}
) =>
  Effect.flatMap(service, (s) =>
    s.run(
      options.scope ?? "u1",
      key,
      options.fingerprint ?? "POST /payments A",
      options.schema ?? (Schema.Unknown as Schema.Schema<unknown> as Schema.Schema<A, unknown>),
      handler
    )
  )

const stored = (scope: string, key: string) =>
  Effect.flatMap(IdempotencyRepository.IdempotencyRepository, (repo) =>
    Effect.map(
      repo.find(scope, key),
      Option.map((r) => r.state)
    )
  )

/** A key left in flight by a request that crashed just now. */
const crashedAt = (key: string, fingerprint: string) =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const repo = yield* IdempotencyRepository.IdempotencyRepository
    const found = yield* repo.begin(
      new IdempotencyRepository.IdempotencyRecord({
        scope: "u1",
        key,
        fingerprint,
        state: "in_flight",
        locked_until: DateTime.addDuration(now, Duration.minutes(1)),
        result: null,
        created_at: now
      })
    )
    expect(Option.isNone(found)).toBe(true)
  })

const errorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (e) => e as Errors.DomainError)

describe("Idempotency.run", () => {
  it.effect("a new key runs the request once; a retry with the same request replays its result", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        const first = yield* run("k-1", handler)
        expect(first).toEqual({ result: '{"id":"VAR-1"}', replayed: false })
        yield* TestClock.adjust("1 hour")
        const again = yield* run("k-1", handler)
        expect(again).toEqual({ result: '{"id":"VAR-1"}', replayed: true })
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("a refusal the operation answers as its result (not a failure) is stored and replayed too", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted({ message: "request.invalid" })
        expect((yield* run("k-400", handler)).replayed).toBe(false)
        expect(yield* run("k-400", handler)).toEqual({
          result: '{"message":"request.invalid"}',
          replayed: true
        })
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("the result is recorded as its schema encodes it, and replayed as recorded", () =>
    withEngine(
      Effect.gen(function* () {
        const Paid = Schema.Struct({ id: Schema.String, minor: Schema.BigInt })
        const { handler, runs } = yield* counted({ id: "VAR-1", minor: 150000n })
        const options = { schema: Paid as Schema.Schema<unknown, unknown> }
        expect(yield* run("k-encoded", handler, options)).toEqual({
          result: '{"id":"VAR-1","minor":"150000"}',
          replayed: false
        })
        expect(yield* run("k-encoded", handler, options)).toEqual({
          result: '{"id":"VAR-1","minor":"150000"}',
          replayed: true
        })
        // A result its schema cannot encode is a defect, and leaves nothing behind.
        const died = yield* Effect.exit(run("k-bad", Effect.succeed({ id: 1 }), options))
        expect(died._tag).toBe("Failure")
        expect(yield* stored("u1", "k-bad")).toEqual(Option.none())
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("the same key with a different request is idempotency.key.reused (RequestMismatch)", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        yield* run("k-2", handler, { fingerprint: "POST /payments A" })
        const error = yield* errorOf(run("k-2", handler, { fingerprint: "POST /payments B" }))
        expect(error._tag).toBe("RequestMismatch")
        expect(error.key).toBe("idempotency.key.reused")
        expect(yield* Ref.get(runs)).toBe(1)
        // The first response is still there for the original request.
        expect((yield* run("k-2", handler)).replayed).toBe(true)
      })
    )
  )

  it.effect("a retry while the first request runs is idempotency.request.in_progress (Conflict)", () =>
    withEngine(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const { handler, runs } = yield* counted()
        const first = yield* Effect.fork(run("k-3", Effect.zipRight(Deferred.await(gate), handler)))
        yield* Effect.yieldNow()
        expect(yield* stored("u1", "k-3")).toEqual(Option.some("in_flight"))
        const error = yield* errorOf(run("k-3", handler))
        expect(error._tag).toBe("Conflict")
        expect(error.key).toBe("idempotency.request.in_progress")
        // A different request with the key in flight is refused as a reuse, not as in progress.
        const other = yield* errorOf(run("k-3", handler, { fingerprint: "POST /payments B" }))
        expect(other.key).toBe("idempotency.key.reused")
        yield* Deferred.succeed(gate, undefined)
        expect((yield* Fiber.join(first)).replayed).toBe(false)
        expect((yield* run("k-3", handler)).replayed).toBe(true)
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("a failed or dead handler stores nothing: its error reaches the caller and a retry runs", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        const failure = yield* Effect.flip(run("k-4", Effect.fail("provider down" as const)))
        expect(failure).toBe("provider down")
        expect(yield* stored("u1", "k-4")).toEqual(Option.none())
        const died = yield* Effect.exit(run("k-4", Effect.dieMessage("boom")))
        expect(died._tag).toBe("Failure")
        expect(yield* stored("u1", "k-4")).toEqual(Option.none())
        // A retry, even with another request, runs: nothing was bound to the key.
        expect(yield* run("k-4", handler, { fingerprint: "POST /payments B" })).toEqual({
          result: '{"id":"VAR-1"}',
          replayed: false
        })
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("an interrupted request releases its key", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler } = yield* counted()
        const fiber = yield* Effect.fork(run("k-5", Effect.zipRight(Effect.never, handler)))
        yield* Effect.yieldNow()
        expect(yield* stored("u1", "k-5")).toEqual(Option.some("in_flight"))
        yield* Fiber.interrupt(fiber)
        expect(yield* stored("u1", "k-5")).toEqual(Option.none())
        expect((yield* run("k-5", handler)).replayed).toBe(false)
      })
    )
  )

  it.effect("a key held by a crashed request can be taken over once its lock lapses", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        yield* crashedAt("k-6", "POST /payments A")
        yield* TestClock.adjust(Duration.millis(59_999))
        expect((yield* errorOf(run("k-6", handler))).key).toBe("idempotency.request.in_progress")
        yield* TestClock.adjust(Duration.millis(1))
        // Even lapsed, the key stays bound to its request.
        expect((yield* errorOf(run("k-6", handler, { fingerprint: "POST /payments B" }))).key).toBe(
          "idempotency.key.reused"
        )
        expect(yield* run("k-6", handler)).toEqual({ result: '{"id":"VAR-1"}', replayed: false })
        expect((yield* run("k-6", handler)).replayed).toBe(true)
        expect(yield* Ref.get(runs)).toBe(1)
      })
    )
  )

  it.effect("a live request renews its lease (EngineConfig.idempotencyLease); a dead one's lapses", () =>
    Effect.gen(function* () {
      const { handler } = yield* counted()
      const gate = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(run("k-7", Effect.zipRight(Deferred.await(gate), handler)))
      yield* Effect.yieldNow()
      // A minute of a running request, twenty leases: its heartbeat keeps the key.
      for (let i = 0; i < 4; i++) {
        yield* TestClock.adjust("15 seconds")
        expect((yield* errorOf(run("k-7", handler))).key).toBe("idempotency.request.in_progress")
      }
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(slow)).replayed).toBe(false)
      expect((yield* run("k-7", handler)).replayed).toBe(true)

      // A claim whose holder renews nothing (its process died) is free once its lease lapsed.
      const repo = yield* IdempotencyRepository.IdempotencyRepository
      const now = yield* DateTime.now
      yield* repo.begin(
        new IdempotencyRepository.IdempotencyRecord({
          scope: "u1",
          key: "k-7b",
          fingerprint: "POST /payments A",
          state: "in_flight",
          locked_until: DateTime.addDuration(now, Duration.seconds(3)),
          result: null,
          created_at: now
        })
      )
      yield* TestClock.adjust("2999 millis")
      expect((yield* errorOf(run("k-7b", handler))).key).toBe("idempotency.request.in_progress")
      yield* TestClock.adjust("1 millis")
      expect((yield* run("k-7b", handler)).replayed).toBe(false)

      // The lease a new claim gets.
      const held = yield* Deferred.make<void>()
      yield* Effect.fork(run("k-7c", Effect.zipRight(Deferred.await(held), handler)))
      yield* Effect.yieldNow()
      const claimed = yield* repo.find("u1", "k-7c")
      expect(
        Option.map(
          claimed,
          (r) => DateTime.toEpochMillis(r.locked_until) - DateTime.toEpochMillis(r.created_at)
        )
      ).toEqual(Option.some(3_000))
    }).pipe(Effect.provide(SandboxEngine.layerMemory({ idempotencyLease: Duration.seconds(3) })))
  )

  it.effect("a request whose key was taken over while it ran does not overwrite the one that took it", () =>
    withEngine(
      Effect.gen(function* () {
        const repo = yield* IdempotencyRepository.IdempotencyRepository
        const gate = yield* Deferred.make<void>()
        const slow = yield* Effect.fork(
          run("k-8", Effect.zipRight(Deferred.await(gate), Effect.succeed("slow")))
        )
        yield* Effect.yieldNow()
        // Another instance judged its lease lapsed (a pause longer than the lease) and took it.
        const held = Option.getOrThrow(yield* repo.find("u1", "k-8"))
        const now = yield* DateTime.now
        const taker = new IdempotencyRepository.IdempotencyRecord({
          ...held,
          created_at: DateTime.addDuration(now, Duration.millis(1)),
          locked_until: DateTime.addDuration(now, Duration.seconds(10))
        })
        expect(yield* repo.takeOver(held, taker)).toBe(true)
        expect(yield* repo.complete(taker, '"retry"')).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        // The slow request still answers its own caller…
        expect(yield* Fiber.join(slow)).toEqual({ result: '"slow"', replayed: false })
        // …but the key replays the result of the request that owned it.
        expect(yield* run("k-8", Effect.succeed("third"))).toEqual({
          result: '"retry"',
          replayed: true
        })
      })
    )
  )

  it.effect("keys live 24 hours: then they are ignored, and purge deletes them", () =>
    withEngine(
      Effect.gen(function* () {
        const s = yield* service
        const { handler, runs } = yield* counted()
        yield* run("old", handler)
        yield* TestClock.adjust("12 hours")
        yield* run("recent", handler)
        yield* TestClock.adjust("12 hours")
        expect((yield* run("old", handler)).replayed).toBe(true)
        expect(yield* s.purge()).toBe(0)
        yield* TestClock.adjust(Duration.millis(1))
        // Past 24 hours the key is free, even for another request.
        expect((yield* run("old", handler, { fingerprint: "POST /payments B" })).replayed).toBe(false)
        expect(yield* Ref.get(runs)).toBe(3)

        yield* run("stale", handler)
        yield* TestClock.adjust("12 hours")
        expect(yield* s.purge()).toBe(1) // "recent", created 24 h + 12 h ago
        expect(yield* stored("u1", "recent")).toEqual(Option.none())
        expect(yield* stored("u1", "stale")).toEqual(Option.some("completed"))
        expect(yield* stored("u1", "old")).toEqual(Option.some("completed"))
      })
    )
  )

  it.effect("keys of different callers (scopes) never meet", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        expect((yield* run("shared", handler, { scope: "u1" })).replayed).toBe(false)
        expect((yield* run("shared", handler, { scope: "public:u1" })).replayed).toBe(false)
        expect((yield* run("shared", handler, { scope: "u2", fingerprint: "other" })).replayed).toBe(false)
        expect(yield* Ref.get(runs)).toBe(3)
      })
    )
  )

  it.effect("keys are 1 to 255 printable ASCII characters, else InvalidInput on Idempotency-Key", () =>
    withEngine(
      Effect.gen(function* () {
        const { handler, runs } = yield* counted()
        for (const bad of ["", "x".repeat(256), "clé", "a\nb", "tab\there"]) {
          const error = yield* Effect.flip(run(bad, handler))
          expect(error).toMatchObject({ _tag: "InvalidInput", field: "Idempotency-Key" })
        }
        expect(yield* Ref.get(runs)).toBe(0)
        yield* run("x".repeat(255), handler)
        yield* run("order 42/retry ~!", handler)
        expect(yield* Ref.get(runs)).toBe(2)
      })
    )
  )

  it.effect("wraps a payment creation: a retried create replays the payment and creates one", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const s = yield* service
        const payments = yield* Payments.Payments
        const body = {
          user_id: "u1",
          price: { amount: 1500, currency: "ARS" },
          payment_options: ["transfer"]
        }
        const Created = Schema.Struct({ id: Schema.String })
        const create = Effect.map(payments.create(createRequest()), (p: Payment.Payment) => ({ id: p.id }))
        const fp = yield* s.fingerprint("post", "/payments", body)
        const first = yield* s.run("u1", "create-1", fp, Created, create)
        const retry = yield* s.run(
          "u1",
          "create-1",
          yield* s.fingerprint("POST", "/payments", body),
          Created,
          create
        )
        expect(retry).toEqual({ ...first, replayed: true })
        const all = yield* (yield* PaymentRepository.PaymentRepository).page(
          { user_id: Ids.UserId.make("u1") },
          Option.none(),
          10
        )
        expect(all.map((p) => p.id)).toEqual([JSON.parse(first.result).id])
        yield* expectLedgerOk
      })
    )
  )
})

describe("Idempotency: the answer committed with the operation", () => {
  const Created = Schema.Struct({ id: Schema.String })
  const created = (p: Payment.Payment) => ({ id: p.id })
  const paymentIds = Effect.flatMap(PaymentRepository.PaymentRepository, (repo) =>
    Effect.map(repo.page({ user_id: Ids.UserId.make("u1") }, Option.none(), 10), (all) =>
      all.map((p) => p.id)
    )
  )

  it.effect(
    "a request stopped after its commit left its answer: the retry replays it and creates nothing",
    () =>
      withEngine(
        Effect.gen(function* () {
          yield* seedUser()
          const s = yield* service
          const payments = yield* Payments.Payments
          const committed = yield* Deferred.make<void>()
          // The operation commits, then never answers (its process stops right after the commit).
          const stopped = Idempotency.answering(
            payments
              .create(createRequest())
              .pipe(Effect.zipLeft(Deferred.succeed(committed, undefined)), Effect.zipLeft(Effect.never)),
            created
          )
          const first = yield* Effect.fork(s.run("u1", "after-commit", "A", Created, stopped))
          yield* Deferred.await(committed)
          const [id] = yield* paymentIds
          expect(yield* stored("u1", "after-commit")).toEqual(Option.some("completed"))
          yield* Fiber.interrupt(first)
          // The retry (without the operation even able to run) answers the committed payment.
          const retry = yield* s.run(
            "u1",
            "after-commit",
            "A",
            Created,
            Idempotency.answering(payments.create(createRequest()), created)
          )
          expect(retry).toEqual({ result: JSON.stringify({ id }), replayed: true })
          expect(yield* paymentIds).toEqual([id])
          yield* expectLedgerOk
        })
      )
  )

  it.effect("a request whose key was taken over before its commit rolls its operation back", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const s = yield* service
        const repo = yield* IdempotencyRepository.IdempotencyRepository
        const payments = yield* Payments.Payments
        const gate = yield* Deferred.make<void>()
        const late = Idempotency.answering(
          Effect.zipRight(Deferred.await(gate), payments.create(createRequest())),
          created
        )
        const first = yield* Effect.fork(Effect.either(s.run("u1", "taken", "A", Created, late)))
        yield* Effect.yieldNow()
        const held = Option.getOrThrow(yield* repo.find("u1", "taken"))
        const now = yield* DateTime.now
        expect(
          yield* repo.takeOver(
            held,
            new IdempotencyRepository.IdempotencyRecord({
              ...held,
              created_at: DateTime.addDuration(now, Duration.millis(1))
            })
          )
        ).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        const outcome = yield* Fiber.join(first)
        expect(outcome._tag === "Left" && (outcome.left as Errors.DomainError).key).toBe(
          "idempotency.request.in_progress"
        )
        // Its unit of work rolled back: the request that holds the key is the one that creates.
        expect(yield* paymentIds).toEqual([])
        yield* expectLedgerOk
      })
    )
  )

  it.effect("without answering, or without a key, the operation runs as before", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const s = yield* service
        const payments = yield* Payments.Payments
        expect(yield* Idempotency.answersAtCommit).toBe(false)
        yield* Idempotency.answering(payments.create(createRequest({ external_id: "o-1" })), created)
        const plain = yield* s.run(
          "u1",
          "plain",
          "A",
          Created,
          Effect.map(payments.create(createRequest()), created)
        )
        expect(plain.replayed).toBe(false)
        expect(yield* paymentIds).toHaveLength(2)
      })
    )
  )
})

describe("Idempotency.fingerprint", () => {
  it.effect("ignores key order and whitespace of the body, not the method, path or values", () =>
    withEngine(
      Effect.gen(function* () {
        const s = yield* service
        const a = yield* s.fingerprint(
          "POST",
          "/payments",
          JSON.parse('{"a": 1, "b": {"y": [1, 2], "x": null}}')
        )
        expect(yield* s.fingerprint("post", "/payments", { b: { x: null, y: [1, 2] }, a: 1 })).toBe(a)
        expect(yield* s.fingerprint("POST", "/payments", { a: 1, b: { x: null, y: [2, 1] } })).not.toBe(a)
        expect(yield* s.fingerprint("POST", "/customers", { a: 1, b: { x: null, y: [1, 2] } })).not.toBe(a)
        expect(yield* s.fingerprint("PUT", "/payments", { a: 1, b: { x: null, y: [1, 2] } })).not.toBe(a)
        expect(a).toMatch(/^[0-9a-f]{64}$/)
        expect(Idempotency.canonicalJson({ b: [1, { d: "x", c: true }], a: "é" })).toBe(
          '{"a":"é","b":[1,{"c":true,"d":"x"}]}'
        )
      })
    )
  )
})
