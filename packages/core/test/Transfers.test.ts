import { describe, expect, it } from "@effect/vitest"
import {
  DateTime,
  Deferred,
  Effect,
  Either,
  Exit,
  Fiber,
  FiberId,
  Layer,
  Option,
  Random,
  Schema,
  TestClock
} from "effect"
import {
  BankAccount,
  BankProvider,
  Engine,
  Errors,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  LedgerRepository,
  Money,
  Payment,
  Payments,
  SandboxBank,
  Transactor,
  Transfers
} from "../src/index.js"
import { ars, createRequest, events, expectLedgerOk, seedUser } from "./fixtures.js"

const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Engine.layerMemory())

const u1 = Ids.UserId.make("u1")

/** A payer's transfer of `amount` pesos to `cvu`, as the bank would notify it. */
const transfer = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.simulateIncoming({ cvu, amount: ars(amount) }))

const pay = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.flatMap(transfer(cvu, amount), (t) => Effect.flatMap(Transfers.Transfers, (s) => s.ingest(t)))

const newPayment = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Payments.Payments, (p) => p.create(createRequest(fields)))

const reload = (p: Payment.Payment) => Effect.flatMap(Payments.Payments, (s) => s.get(u1, p.id))

const available = Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(u1)))

describe("Transfers.ingest into a payment", () => {
  it.effect(
    "the exact amount makes it SUCCESS, with the SPEC transaction, fees, ledger entry and event",
    () =>
      withEngine(
        Effect.gen(function* () {
          const user = yield* seedUser()
          yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12))
          const p = yield* newPayment({ webhook_url: "https://shop.example/hook" })
          yield* TestClock.adjust("10 minutes")
          const t = yield* transfer(p.cvu, "1500")
          const outcome = yield* (yield* Transfers.Transfers).ingest(t)
          expect(outcome).toEqual({ _tag: "Credited", target: "payment", target_id: p.id })

          const paid = yield* reload(p)
          expect(paid.payment_status).toBe("SUCCESS")
          const wire = yield* Schema.encode(Payment.Payment)(paid)
          // 1 % commission = 15.00; IVA 21 % on it = 3.15; credited 1500 − 15 − 3.15 = 1481.85
          expect(wire.transactions).toEqual([
            {
              address: p.cvu,
              amount: "1500.00",
              commission: 0.01,
              commission_amount: "15.00",
              commission_taxes: [{ tax_amount: 3.15, tax_rate: 0.21, tax_type: "IVA" }],
              commission_tax_amount: "3.15",
              creation_timestamp: "2026-11-20T12:10:00.000Z",
              credited_amount: "1481.85",
              currency: "ARS",
              network: "CVU",
              sender_address: t.sender_account,
              taxes: [],
              tax_amount: "0.00",
              transaction_status: "PROCESSED",
              transaction_data: {
                PROCESSED: {
                  amount: 1500,
                  currency: "ARS",
                  recipient: p.cvu,
                  recipientCuit: user.cuit,
                  recipientTitular: "Tienda Uno",
                  sender: t.sender_account,
                  senderCuit: t.sender_cuit,
                  senderTitular: t.sender_name,
                  trxId: t.bank_transaction_id
                }
              }
            }
          ])
          expect(wire.transaction_fields).toEqual({
            amount: "1500.00",
            amountReadable: "$ 1.500,00",
            commission_amount: "15.00",
            credited_amount: "1481.85",
            currency: "ARS",
            network: "CVU",
            total_paid: { amount: "1500.00", currency: "ARS" }
          })
          expect(yield* available).toEqual(ars("1481.85"))
          const ledger = yield* Ledger.Ledger
          expect(yield* ledger.balance(LedgerAccount.platformCommission)).toEqual(ars("15"))
          expect(yield* ledger.balance(LedgerAccount.platformTax("IVA"))).toEqual(ars("3.15"))
          expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(ars("1500"))
          const [event, ...rest] = yield* events
          expect(rest).toEqual([])
          expect(event).toMatchObject({
            type: "payment.updated",
            user_id: u1,
            webhook_url: "https://shop.example/hook",
            payload: { message: "Payment updated", paymentId: p.id, externalId: p.external_id }
          })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("more than the price is OVERPAID, less is UNDERPAID", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const over = yield* newPayment()
        yield* pay(over.cvu, "1500.01")
        expect((yield* reload(over)).payment_status).toBe("OVERPAID")
        const under = yield* newPayment()
        yield* pay(under.cvu, "1499.99")
        expect((yield* reload(under)).payment_status).toBe("UNDERPAID")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("the account's transfer tolerance counts as paid on either side, and no further", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser({ transfer_tolerance: ars("5") })
        const cases: Array<[string, Payment.PaymentStatus]> = [
          ["1495", "SUCCESS"],
          ["1505", "SUCCESS"],
          ["1494.99", "UNDERPAID"],
          ["1505.01", "OVERPAID"]
        ]
        for (const [amount, status] of cases) {
          const p = yield* newPayment()
          yield* pay(p.cvu, amount)
          expect((yield* reload(p)).payment_status, amount).toBe(status)
        }
        yield* expectLedgerOk
      })
    )
  )

  it.effect("several partial transfers add up and the state is recalculated each time", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* pay(p.cvu, "500")
        expect((yield* reload(p)).payment_status).toBe("UNDERPAID")
        yield* pay(p.cvu, "1000")
        expect((yield* reload(p)).payment_status).toBe("SUCCESS")
        yield* pay(p.cvu, "0.50")
        const final = yield* reload(p)
        expect(final.payment_status).toBe("OVERPAID")
        expect(final.transactions).toHaveLength(3)
        expect(final.transaction_fields?.total_paid.amount).toEqual(ars("1500.50"))
        expect(yield* events).toHaveLength(3)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a duplicate bank notification is credited once", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        const t = yield* transfer(p.cvu, "1500")
        const transfers = yield* Transfers.Transfers
        yield* transfers.ingest(t)
        const again = yield* transfers.ingest(t)
        expect(again._tag).toBe("Duplicate")
        const concurrent = yield* Effect.all([transfers.ingest(t), transfers.ingest(t)], { concurrency: 2 })
        expect(concurrent.map((o) => o._tag)).toEqual(["Duplicate", "Duplicate"])
        expect((yield* reload(p)).transactions).toHaveLength(1)
        expect(yield* available).toEqual(ars("1481.85"))
        expect(yield* events).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("concurrent transfers to one payment lose no update", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment({ price: { amount: 100, currency: "ARS" } })
        const transfers = yield* Effect.all(Array.from({ length: 100 }, () => transfer(p.cvu, "1")))
        const ingest = (yield* Transfers.Transfers).ingest
        yield* Effect.all(transfers.map(ingest), { concurrency: "unbounded" })
        const final = yield* reload(p)
        expect(final.transactions).toHaveLength(100)
        expect(final.payment_status).toBe("SUCCESS")
        expect(final.totalReceived).toEqual(ars("100"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a failed unit of work leaves no trace", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        const bank = yield* SandboxBank.SandboxBank
        // A transfer to an expired CVU must be returned; if the bank cannot return it, nothing is kept.
        yield* TestClock.adjust("6 days")
        const t = yield* bank.simulateIncoming({ cvu: p.cvu, amount: ars("10") })
        const foreign = yield* bank.simulateIncoming({ cvu: p.cvu, amount: ars("10") })
        const fake = new BankProvider.IncomingTransfer({
          ...foreign,
          bank_transaction_id: Ids.BankTransactionId.make("not-from-this-bank")
        })
        const failed = yield* Effect.flip((yield* Transfers.Transfers).ingest(fake))
        expect(failed).toMatchObject({ _tag: "ProviderFailure" })
        const ledger = yield* Ledger.Ledger
        expect((yield* ledger.verify()).entries).toBe(0)
        expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(Money.zero("ARS"))
        // The bank retries the notification later and it goes through.
        expect((yield* (yield* Transfers.Transfers).ingest(t))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )
})

describe("expiry and late transfers", () => {
  it.effect(
    "at its expiry a PENDING payment becomes EXPIRED, its CVU is released and an event is written",
    () =>
      withEngine(
        Effect.gen(function* () {
          yield* seedUser()
          const p = yield* newPayment()
          const jobs = yield* Jobs.Jobs
          const bank = yield* SandboxBank.SandboxBank
          const expiry = DateTime.toEpochMillis(p.expiration_timestamp)
          yield* TestClock.setTime(expiry - 1)
          expect(yield* jobs.runDue()).toMatchObject({ expired: 0, released: 0 })
          expect((yield* reload(p)).payment_status).toBe("PENDING")
          yield* TestClock.setTime(expiry)
          const reports = yield* Effect.all([jobs.runDue(), jobs.runDue(), jobs.runDue()], {
            concurrency: "unbounded"
          })
          expect(reports.reduce((n, r) => n + r.expired, 0)).toBe(1)
          expect((yield* reload(p)).payment_status).toBe("EXPIRED")
          expect(yield* bank.isOpen(p.cvu)).toBe(false)
          expect((yield* events).map((e) => e.type)).toEqual(["payment.updated"])
          expect(yield* jobs.runDue()).toMatchObject({ expired: 0, released: 0 })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("a late transfer to an expired CVU is recorded and returned, never credited", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        yield* (yield* Jobs.Jobs).runDue()
        const t = yield* transfer(p.cvu, "1500")
        const outcome = yield* (yield* Transfers.Transfers).ingest(t)
        expect(outcome._tag).toBe("Bounced")
        expect((yield* reload(p)).transactions).toEqual([])
        expect(yield* available).toEqual(Money.zero("ARS"))
        const returned = yield* (yield* SandboxBank.SandboxBank).returnedTransfers
        expect(returned.map((r) => r.bank_transaction_id)).toEqual([t.bank_transaction_id])
        expect(yield* (yield* Ledger.Ledger).balance(LedgerAccount.bouncedTransfers)).toEqual(
          Money.zero("ARS")
        )
        expect((yield* (yield* Transfers.Transfers).ingest(t))._tag).toBe("Duplicate")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a transfer after the expiry time bounces even before the job has run", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        expect((yield* pay(p.cvu, "1500"))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a paid payment keeps its state at expiry, but its CVU is released", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* pay(p.cvu, "1500")
        yield* TestClock.adjust("5 days")
        expect(yield* (yield* Jobs.Jobs).runDue()).toMatchObject({ expired: 0, released: 1 })
        const closed = yield* reload(p)
        expect(closed.payment_status).toBe("SUCCESS")
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(p.cvu)).toBe(false)
        expect((yield* pay(p.cvu, "10"))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an extended payment does not expire at its old time; expired ones cannot be extended", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const jobs = yield* Jobs.Jobs
        const p = yield* newPayment()
        yield* payments.extendExpiration(u1, p.id, {
          expiration_timestamp: DateTime.add(p.expiration_timestamp, { days: 1 })
        })
        yield* TestClock.adjust("5 days")
        yield* jobs.runDue()
        expect((yield* reload(p)).payment_status).toBe("PENDING")
        expect((yield* pay(p.cvu, "1500"))._tag).toBe("Credited")
        const q = yield* newPayment()
        yield* TestClock.adjust("5 days")
        const late = yield* Effect.flip(
          payments.extendExpiration(u1, q.id, {
            expiration_timestamp: DateTime.add(q.expiration_timestamp, { days: 1 })
          })
        )
        expect(late).toMatchObject({ _tag: "Conflict", key: "payment.not.pending" })
        const paid = yield* Effect.flip(
          payments.extendExpiration(u1, p.id, {
            expiration_timestamp: DateTime.add(p.expiration_timestamp, { days: 9 })
          })
        )
        expect(paid).toMatchObject({ _tag: "Conflict" })
        yield* expectLedgerOk
      })
    )
  )
})

describe("repricing a paid payment", () => {
  it.effect("recalculates the state against the new price and writes an event each time", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const p = yield* newPayment()
        yield* pay(p.cvu, "1500")
        const cases: Array<[number, Payment.PaymentStatus]> = [
          [1400, "OVERPAID"],
          [1600, "UNDERPAID"],
          [1500, "SUCCESS"],
          [1500, "SUCCESS"]
        ]
        for (const [amount, status] of cases) {
          const r = yield* payments.reprice(u1, p.id, { currency: "ARS", amount })
          expect(r.payment_status).toBe(status)
          expect(r.transaction_fields?.amount).toEqual(ars(String(amount)))
        }
        expect(yield* events).toHaveLength(1 + cases.length)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an EXPIRED payment cannot be repriced", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        const beforeJob = yield* Effect.flip(payments.reprice(u1, p.id, { currency: "ARS", amount: 10 }))
        expect(beforeJob).toMatchObject({ _tag: "Conflict", key: "payment.expired" })
        yield* (yield* Jobs.Jobs).runDue()
        const afterJob = yield* Effect.flip(payments.reprice(u1, p.id, { currency: "ARS", amount: 10 }))
        expect(afterJob).toMatchObject({ _tag: "Conflict", key: "payment.expired" })
        expect((yield* reload(p)).price).toEqual(ars("1500"))
      })
    )
  )
})

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
  const layer = Engine.layerSandbox(ledger.pipe(Layer.provideMerge(Engine.layerMemoryStorage)))
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

  /** Lets the forked callers run up to where they wait. */
  const settle = Effect.repeatN(Effect.yieldNow(), 50)

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
