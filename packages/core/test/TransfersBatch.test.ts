/**
 * The batched paths of incoming transfers: notifications handed over together (`ingestAll`) and
 * concurrent calls of `ingest` sharing units of work (group commit).
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Exit, Fiber, FiberId, Layer, Option, Random } from "effect"
import { BankAccount, BankProvider, Engine, Errors, Payment, Transfers } from "../src/index.js"
import { LedgerRepository, Transactor } from "../src/ports.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { ars, available, events, expectLedgerOk, newPayment, reload, seedUser, transfer } from "./fixtures.js"

const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

/**
 * The memory engine, its ledger port's `appendAll` observed (and refused when `refuse` says; each
 * call first waits for `hold`).
 */
const withObservedLedger = (
  refuse: (entries: number) => boolean,
  hold: Effect.Effect<void> = Effect.void
) => {
  const calls: Array<number> = []
  const ledger = Layer.effect(
    LedgerRepository.LedgerRepository,
    Effect.map(LedgerRepository.LedgerRepository, (repo) =>
      LedgerRepository.LedgerRepository.of({
        ...repo,
        appendAll: (entries) => {
          calls.push(entries.length)
          return Effect.zipRight(
            hold,
            refuse(entries.length)
              ? Effect.fail(new Errors.Conflict({ key: "test.refused", message: "refused by the test" }))
              : repo.appendAll(entries)
          )
        }
      })
    )
  )
  const layer = SandboxEngine.layerSandbox(ledger.pipe(Layer.provideMerge(Engine.layerMemoryStorage)))
  return { calls, run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, layer) }
}

describe("Transfers.ingestAll", () => {
  const credited = (p: Payment.Payment) =>
    Either.right({ _tag: "Credited", target: "payment", target_id: p.id })

  it.effect(
    "credits a batch's transfers to open payments with one ledger write and settles each payment",
    () => {
      const { calls, run } = withObservedLedger(() => false)
      return run(
        Effect.gen(function* () {
          yield* seedUser()
          const a = yield* newPayment({ external_id: "a" })
          const b = yield* newPayment({ external_id: "b" })
          const batch = [
            yield* transfer(a.cvu, "1000"),
            yield* transfer(b.cvu, "1500"),
            yield* transfer(a.cvu, "500")
          ]
          const outcomes = yield* (yield* Transfers.Transfers).ingestAll(batch)
          expect(outcomes).toEqual([credited(a), credited(b), credited(a)])
          expect(calls).toEqual([3])
          expect((yield* reload(a)).payment_status).toBe("SUCCESS")
          expect((yield* reload(a)).transactions).toHaveLength(2)
          expect((yield* reload(b)).payment_status).toBe("SUCCESS")
          expect((yield* events).map((e) => e.payload["paymentId"])).toEqual([a.id, b.id, a.id])
          yield* expectLedgerOk
        })
      )
    }
  )

  it.effect(
    "when the batch's unit of work fails, each transfer is ingested alone and the batch leaves nothing",
    () => {
      const { calls, run } = withObservedLedger((entries) => entries > 1)
      return run(
        Effect.gen(function* () {
          yield* seedUser()
          const a = yield* newPayment({ external_id: "a" })
          const b = yield* newPayment({ external_id: "b" })
          const batch = [yield* transfer(a.cvu, "1500"), yield* transfer(b.cvu, "1500")]
          const outcomes = yield* (yield* Transfers.Transfers).ingestAll(batch)
          expect(outcomes).toEqual([credited(a), credited(b)])
          expect(calls).toEqual([2, 1, 1])
          expect((yield* reload(a)).transactions).toHaveLength(1)
          expect((yield* reload(b)).transactions).toHaveLength(1)
          expect(yield* events).toHaveLength(2)
          expect(yield* available).toEqual(ars("2963.70"))
          yield* expectLedgerOk
        })
      )
    }
  )
})

describe("Transfers.ingest called concurrently (group commit)", () => {
  const credited = (p: Payment.Payment) => ({ _tag: "Credited", target: "payment", target_id: p.id })

  /**
   * Lets the forked callers run up to where they wait: twice past the end of the event loop's turn
   * (a caller about to run a batch waits for it first, and may have asked for it after this did),
   * each time through the fibers that became ready.
   */
  const settle = Effect.repeatN(
    Effect.zipRight(
      Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))),
      Effect.repeatN(Effect.yieldNow(), 50)
    ),
    1
  )

  it.effect(
    "callers arriving while a unit of work is under way share the next one, each answered as alone",
    () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { calls, run } = withObservedLedger(() => false, Deferred.await(gate))
      return run(
        Effect.gen(function* () {
          yield* seedUser()
          const payments = yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            (i) => newPayment({ external_id: `g${i}` })
          )
          const transfers = yield* Effect.forEach(payments, (p) => transfer(p.cvu, "1500"))
          const bank = yield* SandboxBank.SandboxBank
          const stray = yield* bank.simulateIncoming({
            cvu: BankAccount.makeCvu("0000003", "9999999999999"),
            amount: ars("10")
          })
          const ingest = (yield* Transfers.Transfers).ingest
          // The first caller runs alone and waits at the ledger; the rest queue behind it: the
          // transfers, the first one again, an unknown CVU and a zero amount.
          const first = yield* Effect.fork(ingest(transfers[0]!))
          yield* settle
          const zero = new BankProvider.IncomingTransfer({ ...transfers[1]!, amount: ars("0") })
          const rest = yield* Effect.fork(
            Effect.all(
              [...transfers.slice(1), transfers[0]!, stray, zero].map((t) => Effect.either(ingest(t))),
              { concurrency: "unbounded" }
            )
          )
          yield* settle
          expect(calls).toEqual([1])
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(first)).toEqual(credited(payments[0]!))
          const outcomes = yield* Fiber.join(rest)
          expect(outcomes.slice(0, 11)).toEqual(payments.slice(1).map((p) => Either.right(credited(p))))
          expect(outcomes[11]).toMatchObject(Either.right({ _tag: "Duplicate" }))
          expect(outcomes[12]).toEqual(Either.right({ _tag: "Bounced", reason: "unknown CVU" }))
          expect(outcomes[13]).toMatchObject(Either.left({ _tag: "InvalidInput", field: "amount" }))
          // The eleven credits took one ledger write; the bounce took its two.
          expect(calls).toEqual([1, 11, 1, 1])
          for (const p of payments) expect((yield* reload(p)).payment_status).toBe("SUCCESS")
          yield* expectLedgerOk
        })
      )
    }
  )

  it.effect(
    "an interrupted caller neither strands the others nor is ingested if its turn had not come",
    () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { run } = withObservedLedger(() => false, Deferred.await(gate))
      return run(
        Effect.gen(function* () {
          yield* seedUser()
          const payments = yield* Effect.forEach([0, 1, 2, 3], (i) => newPayment({ external_id: `i${i}` }))
          const [t0, t1, t2, t3] = yield* Effect.forEach(payments, (p) => transfer(p.cvu, "1500"))
          const ingest = (yield* Transfers.Transfers).ingest
          const leader = yield* Effect.fork(ingest(t0!))
          yield* settle
          const waiting = yield* Effect.forEach([t1!, t2!, t3!], (t) => Effect.fork(ingest(t)))
          yield* settle
          // The leader's own unit of work finishes regardless; the second waiter gives up.
          const leaderInterrupted = yield* Effect.fork(Fiber.interrupt(leader))
          yield* Fiber.interrupt(waiting[1]!)
          yield* Deferred.succeed(gate, undefined)
          yield* Fiber.join(leaderInterrupted)
          expect(yield* Fiber.join(waiting[0]!)).toEqual(credited(payments[1]!))
          expect(yield* Fiber.join(waiting[2]!)).toEqual(credited(payments[3]!))
          expect((yield* reload(payments[0]!)).payment_status).toBe("SUCCESS")
          expect((yield* reload(payments[2]!)).transactions).toHaveLength(0)
          // The queue still moves: the abandoned transfer, handed over again, is credited.
          expect(yield* ingest(t2!)).toEqual(credited(payments[2]!))
          yield* expectLedgerOk
        })
      )
    }
  )

  it.effect("a caller interrupted just as it is told to run the next batch still runs it", () => {
    const gate = Deferred.unsafeMake<void>(FiberId.none)
    // Once the gate opens, the leader's ledger write interrupts `target` (without waiting): the
    // interruption reaches it after the leader has handed it the next batch.
    const state: { target?: Fiber.RuntimeFiber<unknown, unknown> } = {}
    const hold = Effect.zipRight(
      Deferred.await(gate),
      Effect.sync(() => {
        state.target?.unsafeInterruptAsFork(FiberId.none)
        delete state.target
      })
    )
    const { run } = withObservedLedger(() => false, hold)
    return run(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Effect.forEach([0, 1, 2], (i) => newPayment({ external_id: `l${i}` }))
        const [t0, t1, t2] = yield* Effect.forEach(payments, (p) => transfer(p.cvu, "1500"))
        const ingest = (yield* Transfers.Transfers).ingest
        const leader = yield* Effect.fork(ingest(t0!))
        yield* settle
        const next = yield* Effect.fork(ingest(t1!))
        const behind = yield* Effect.fork(ingest(t2!))
        yield* settle
        state.target = next
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(leader)).toEqual(credited(payments[0]!))
        yield* settle
        expect(Option.isSome(yield* Fiber.poll(behind))).toBe(true)
        expect(yield* Fiber.join(behind)).toEqual(credited(payments[2]!))
        expect(Exit.isInterrupted(yield* Fiber.await(next))).toBe(true)
        // Its batch ran, its own transfer in it.
        expect((yield* reload(payments[1]!)).payment_status).toBe("SUCCESS")
        yield* expectLedgerOk
      })
    )
  })

  it.effect(
    "callers interrupted at any point leave each transfer credited at most once and the queue moving",
    () =>
      // Each ledger write takes some scheduler turns, so that interruptions land in every state.
      withObservedLedger(() => false, Effect.repeatN(Effect.yieldNow(), 10)).run(
        Effect.gen(function* () {
          yield* seedUser()
          const payments = yield* Effect.forEach(
            Array.from({ length: 60 }, (_, i) => i),
            (i) => newPayment({ external_id: `r${i}` })
          )
          const transfers = yield* Effect.forEach(payments, (p) => transfer(p.cvu, "1500"))
          const ingest = (yield* Transfers.Transfers).ingest
          // A third of the callers are interrupted after a random number of scheduler turns: queued,
          // in a batch under way, or just told to run the next batch.
          const callers: Array<Fiber.RuntimeFiber<Transfers.IngestOutcome, Transfers.IngestError>> = []
          const interrupters: Array<Fiber.RuntimeFiber<unknown>> = []
          for (const [i, t] of transfers.entries()) {
            const caller = yield* Effect.fork(ingest(t))
            callers.push(caller)
            if (i % 3 === 1)
              interrupters.push(
                yield* Effect.fork(
                  Effect.flatMap(Random.nextIntBetween(0, 60), (turns) =>
                    Effect.zipRight(Effect.repeatN(Effect.yieldNow(), turns), Fiber.interrupt(caller))
                  )
                )
              )
          }
          yield* Fiber.joinAll(interrupters)
          const exits = yield* Effect.forEach(callers, Fiber.await)
          exits.forEach((exit, i) => {
            if (i % 3 !== 1) expect(exit).toEqual(Exit.succeed(credited(payments[i]!)))
          })
          // Handed over again, each transfer is credited now or was before: once in all.
          const again = yield* Effect.forEach(transfers, ingest, { concurrency: "unbounded" })
          again.forEach((outcome, i) =>
            expect(Exit.isSuccess(exits[i]!) ? "Duplicate" : outcome._tag).toBe(outcome._tag)
          )
          for (const p of payments) expect((yield* reload(p)).transactions).toHaveLength(1)
          yield* expectLedgerOk
        })
      )
  )

  it.effect("inside the caller's unit of work a notification is ingested in it, never with others", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Effect.forEach([0, 1], (i) => newPayment({ external_id: `t${i}` }))
        const [t0, t1] = yield* Effect.forEach(payments, (p) => transfer(p.cvu, "1500"))
        const ingest = (yield* Transfers.Transfers).ingest
        const transactor = yield* Transactor.Transactor
        // The caller's unit of work is open when another caller starts a batch (which waits for
        // it); the caller's notification is then ingested in its unit of work, not queued behind
        // that batch (it would wait forever), and goes when its unit of work fails.
        const inside = Deferred.unsafeMake<void>(FiberId.none)
        const own = yield* Effect.fork(
          Effect.flip(
            transactor.withTransaction(
              Effect.zipRight(Deferred.await(inside), Effect.zipRight(ingest(t1!), Effect.fail("abandoned")))
            )
          )
        )
        yield* settle
        const other = yield* Effect.fork(ingest(t0!))
        yield* settle
        yield* Deferred.succeed(inside, undefined)
        yield* settle
        expect(Option.isSome(yield* Fiber.poll(own))).toBe(true)
        expect(yield* Fiber.join(own)).toBe("abandoned")
        expect(yield* Fiber.join(other)).toEqual(credited(payments[0]!))
        expect((yield* reload(payments[1]!)).transactions).toHaveLength(0)
        yield* expectLedgerOk
      })
    )
  )
})
