/**
 * Postgres under concurrency: many connections and several engine instances (as several server
 * processes would be) over one database, sharing one bank.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  BankAccount,
  Customer,
  Customers,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Payments,
  Refund,
  Refunds,
  Schedules,
  SecondFactor,
  Split,
  Transfers,
  User
} from "@cobro/core"
import { PgStorage } from "@cobro/sql-pg"
import { BigDecimal, type Context, Effect, Either, Layer, Redacted, Schema, TestClock } from "effect"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "../src/index.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { createRequest, expectLedgerOk, seedUser, u1, u2 } from "../src/scenarios/fixtures.js"
import {
  asPartner,
  balances,
  createReq,
  fund,
  p1,
  setup,
  toNextRun
} from "../src/scenarios/schedules/index.js"
import { HOLD, instructedSplit, read } from "../src/scenarios/splits/index.js"

const available = await Effect.runPromise(pgAvailable)
if (!available) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres concurrency tests are SKIPPED !!!\n`
  )
}

/** One engine instance (its own connection pool) over the database at `url`. */
const instance = (url: string, maxConnections: number) =>
  Layer.build(
    SandboxEngine.layerSandboxServices(PgStorage.layer({ url: Redacted.make(url), maxConnections }))
  )

/**
 * A fresh database, one sandbox bank and an engine instance per pool size in `pools` (as that
 * many server processes) over them. `on(i)` runs an effect on instance `i`; `instance(url, n)`
 * with `bank` makes more later.
 */
const fresh = (...pools: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const url = yield* freshPgUrl
    const bank = yield* Layer.build(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
    const instances = yield* Effect.all(
      pools.map((n) => Effect.provide(instance(url, n), bank)),
      { concurrency: "unbounded" }
    )
    const on =
      (i: number) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provide(effect, instances[i]!)
    const sandbox = yield* Effect.provide(SandboxBank.SandboxBank, bank)
    return { url, bank, instances, on, sandbox } as const
  })

describe.skipIf(!available)("Postgres concurrency", () => {
  it.scoped(
    "500 concurrent transfers to one customer over several connections leave the balance exact",
    () =>
      Effect.gen(function* () {
        const { on, sandbox } = yield* fresh(8)
        const run = on(0)
        yield* run(seedUser({ alias_prefix: User.AliasPrefix.make("tienda") }))
        const customer = yield* run(
          Effect.flatMap(Customers.Customers, (s) =>
            s.create(
              u1,
              Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
                user_id: u1,
                alias: ".juan",
                customer_id: "20123456",
                name: "Juan Pérez"
              })
            )
          )
        )
        const cvu = customer.bank_info.cvu as BankAccount.Cvu
        const transfers = yield* Effect.all(
          Array.from({ length: 500 }, (_, i) =>
            sandbox.simulateIncoming({ cvu, amount: Money.make(BigInt(100 + i), "ARS") })
          )
        )
        const outcomes = yield* run(
          Effect.flatMap(Transfers.Transfers, (t) =>
            Effect.all(transfers.map(t.ingest), { concurrency: "unbounded" })
          )
        )
        expect(outcomes.every((o) => o._tag === "Credited")).toBe(true)
        const balance = yield* run(
          Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.customerBalance(u1, "20123456")))
        )
        const stored = yield* run(Effect.flatMap(Customers.Customers, (s) => s.get(u1, customer.customer_id)))
        expect(stored.balance).toEqual(balance)
        // Each transfer of X centavos credits X − 1 % commission − 21 % IVA on it (half-even per line).
        const expected = transfers.reduce((sum, t) => {
          const commission = Money.applyRate(t.amount, LedgerRate.commission)
          const iva = Money.applyRate(commission, LedgerRate.iva)
          return sum + t.amount.minor - commission.minor - iva.minor
        }, 0n)
        expect(balance.minor).toBe(expected)
        yield* run(expectLedgerOk)
      }),
    120_000
  )

  it.scoped(
    "300 concurrent transfers to 300 payments of two merchants: each credited once, no deadlock on the shared ledger accounts",
    () =>
      Effect.gen(function* () {
        const { on, sandbox } = yield* fresh(10)
        const run = on(0)
        yield* run(seedUser())
        yield* run(seedUser({ user_id: u2, email: "u2@example.com" }))
        const payments = yield* run(
          Effect.flatMap(Payments.Payments, (p) =>
            Effect.all(
              Array.from({ length: 300 }, (_, i) =>
                p.create(createRequest({ user_id: i % 2 === 0 ? u1 : u2, external_id: `order-${i}` }))
              )
            )
          )
        )
        const transfers = yield* Effect.all(
          payments.map((p) => sandbox.simulateIncoming({ cvu: p.cvu, amount: p.quoteAmount }))
        )
        // Every credit adds to the bank clearing, commission and tax balances: without one lock
        // order these concurrent units of work deadlock.
        const outcomes = yield* run(
          Effect.flatMap(Transfers.Transfers, (t) =>
            Effect.all(transfers.map(t.ingest), { concurrency: "unbounded" })
          )
        )
        expect(outcomes.filter((o) => o._tag === "Credited")).toHaveLength(300)
        const stored = yield* run(
          Effect.flatMap(Payments.Payments, (p) => Effect.all(payments.map((x) => p.get(x.user_id, x.id))))
        )
        expect(stored.every((p) => p.payment_status === "SUCCESS" && p.transactions.length === 1)).toBe(true)
        const merchants = yield* run(
          Effect.flatMap(Ledger.Ledger, (l) =>
            Effect.all([u1, u2].map((u) => l.balance(LedgerAccount.merchantAvailable(u))))
          )
        )
        const credited = (u: string) =>
          stored
            .filter((p) => p.user_id === u)
            .reduce((sum, p) => sum + p.transactions[0]!.credited_amount.minor, 0n)
        expect(merchants.map((m) => m.minor)).toEqual([credited(u1), credited(u2)])
        yield* run(expectLedgerOk)
      }),
    120_000
  )

  it.scoped(
    "two instances ingesting the same 300 notifications in batches, in opposite orders, credit each once without deadlock",
    () =>
      Effect.gen(function* () {
        const { on, sandbox } = yield* fresh(4, 4)
        yield* on(0)(seedUser())
        const payments = yield* on(0)(
          Effect.flatMap(Payments.Payments, (p) =>
            Effect.all(
              Array.from({ length: 100 }, (_, i) => p.create(createRequest({ external_id: `order-${i}` })))
            )
          )
        )
        // Three notifications to each payment, interleaved so every batch locks many payments.
        const transfers = yield* Effect.all(
          [0, 1, 2].flatMap(() =>
            payments.map((p) =>
              sandbox.simulateIncoming({ cvu: p.cvu, amount: Money.make(p.quoteAmount.minor / 3n, "ARS") })
            )
          )
        )
        const ingestAll = (i: number, list: typeof transfers) =>
          on(i)(Effect.flatMap(Transfers.Transfers, (t) => t.ingestAll(list)))
        const [first, second] = yield* Effect.all(
          [ingestAll(0, transfers), ingestAll(1, [...transfers].reverse())],
          {
            concurrency: "unbounded"
          }
        )
        const credits = [...first, ...second].filter((r) => r._tag === "Right" && r.right._tag === "Credited")
        expect(credits).toHaveLength(300)
        expect([...first, ...second].every((r) => r._tag === "Right")).toBe(true)
        const stored = yield* on(1)(
          Effect.flatMap(Payments.Payments, (p) => Effect.all(payments.map((x) => p.get(x.user_id, x.id))))
        )
        expect(stored.every((p) => p.transactions.length === 3 && p.payment_status === "SUCCESS")).toBe(true)
        const merchant = yield* on(1)(
          Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(u1)))
        )
        expect(merchant.minor).toBe(
          stored.flatMap((p) => p.transactions).reduce((sum, t) => sum + t.credited_amount.minor, 0n)
        )
        yield* on(1)(expectLedgerOk)
      }),
    120_000
  )

  it.scoped(
    "two instances running the same due work do each piece once",
    () =>
      Effect.gen(function* () {
        const { on, sandbox } = yield* fresh(4, 4)
        const [onA, onB] = [on(0), on(1)]
        yield* onA(seedUser())
        const payments = yield* onA(
          Effect.flatMap(Payments.Payments, (s) =>
            Effect.all(
              Array.from({ length: 40 }, (_, i) => s.create(createRequest({ external_id: `p${i}` })))
            )
          )
        )
        yield* TestClock.adjust("5 days")
        const runDue = Effect.flatMap(Jobs.Jobs, (j) => j.runDue())
        const reports = yield* Effect.all([onA(runDue), onB(runDue), onA(runDue), onB(runDue)], {
          concurrency: "unbounded"
        })
        expect(reports.reduce((n, r) => n + r.expired, 0)).toBe(payments.length)
        expect(reports.reduce((n, r) => n + r.failed, 0)).toBe(0)
        for (const p of payments) expect(yield* sandbox.isOpen(p.cvu)).toBe(false)
        yield* onB(expectLedgerOk)
      }),
    120_000
  )

  it.scoped(
    "work an instance left half done is taken over by another once its lease lapses",
    () =>
      Effect.gen(function* () {
        const { url, bank, sandbox } = yield* fresh()
        const runDue = Effect.flatMap(Jobs.Jobs, (j) => j.runDue())
        // Instance A claims the split's payouts, the bank is down for one of them, and A goes away.
        const { b: payee, id } = yield* Effect.scoped(
          Effect.gen(function* () {
            const a = yield* Effect.provide(instance(url, 2), bank)
            const split = yield* instructedSplit("unavailable").pipe(Effect.provide(a), Effect.provide(bank))
            yield* TestClock.adjust(HOLD)
            expect((yield* Effect.provide(runDue, a)).splits.sent).toBe(1)
            return split
          })
        )
        yield* sandbox.clearFailures(payee)
        const b = yield* Effect.provide(instance(url, 2), bank)
        expect((yield* Effect.provide(runDue, b)).splits.sent).toBe(0) // A's lease still holds
        yield* TestClock.adjust(Split.executionLease)
        expect((yield* Effect.provide(runDue, b)).splits).toMatchObject({ finished: 1, sent: 1 })
        expect((yield* read(id).pipe(Effect.provide(b), Effect.provide(bank))).payout_status).toBe("SUCCESS")
        expect(yield* sandbox.sentTransfers).toHaveLength(2)
        yield* Effect.provide(expectLedgerOk, b)
      }),
    120_000
  )
})

describe.skipIf(!available)("three instances on one Postgres", () => {
  /** Three engine instances (as three server processes) over one fresh database and one bank. */
  const three = fresh(4, 4, 4)

  /** `effect` on every instance `times` times, all at once. */
  const everywhere = <X, E, R>(
    instances: ReadonlyArray<Context.Context<R>>,
    times: number,
    effect: Effect.Effect<X, E, R>
  ) =>
    Effect.all(
      instances.flatMap((context) => Array.from({ length: times }, () => Effect.provide(effect, context))),
      { concurrency: "unbounded" }
    )

  const runDue = Effect.flatMap(Jobs.Jobs, (j) => j.runDue())

  it.scoped(
    "notifications delivered to every instance at once credit once each; a due payout schedule sweeps once",
    () =>
      Effect.gen(function* () {
        const { instances, bank, sandbox } = yield* three
        const [a] = instances
        const onA = <X, E, R>(effect: Effect.Effect<X, E, R>) =>
          Effect.provide(Effect.provide(effect, a!), bank)
        yield* onA(setup)
        const payments = yield* onA(
          Effect.flatMap(Payments.Payments, (s) =>
            Effect.all(
              Array.from({ length: 20 }, (_, i) =>
                s.create(createRequest({ external_id: `p${i}`, price: { amount: 100, currency: "ARS" } }))
              )
            )
          )
        )
        const transfers = yield* Effect.all(
          payments.map((p) => sandbox.simulateIncoming({ cvu: p.cvu, amount: Money.make(10000n, "ARS") }))
        )
        // Every notification reaches each of the three instances three or four times, concurrently.
        const outcomes = yield* Effect.all(
          transfers.flatMap((t, i) =>
            Array.from({ length: 10 }, (_, k) =>
              Effect.provide(
                Effect.flatMap(Transfers.Transfers, (s) => s.ingest(t)),
                instances[(i + k) % 3]!
              )
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o._tag === "Credited")).toHaveLength(transfers.length)
        expect(outcomes.filter((o) => o._tag === "Duplicate")).toHaveLength(transfers.length * 9)
        // 20 × 100.00 ARS, less 1 % commission and 21 % IVA on it: 98.79 each.
        expect((yield* onA(balances)).available).toBe(20n * 9879n)

        // A daily payout schedule comes due; every instance runs the due work three times at once.
        yield* onA(fund("extra", 5000n))
        const before = (yield* onA(balances)).available
        const schedule = yield* onA(
          Effect.flatMap(Schedules.Schedules, (s) => s.create(asPartner(p1), createReq("daily")))
        )
        yield* onA(toNextRun(schedule.schedule_id))
        const reports = yield* everywhere(instances, 3, runDue)
        expect(reports.reduce((n, r) => n + r.payouts.runs, 0)).toBe(1)
        expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
        expect(reports.reduce((n, r) => n + r.payouts.errors, 0)).toBe(0)
        const sent = yield* sandbox.sentTransfers
        expect(sent).toHaveLength(1)
        expect(sent[0]!.amount).toEqual(Money.make(before, "ARS"))
        expect(yield* onA(balances)).toEqual({ available: 0n, inTransit: 0n })
        for (const context of instances) yield* Effect.provide(expectLedgerOk, context)
      }),
    120_000
  )

  it.scoped(
    "a split's hold is released and its payouts sent once while every instance runs the due work",
    () =>
      Effect.gen(function* () {
        const { instances, bank, sandbox } = yield* three
        const split = yield* instructedSplit().pipe(Effect.provide(instances[1]!), Effect.provide(bank))
        // Before the hold ends nothing is paid, however often the work runs.
        yield* TestClock.adjust(HOLD - 60_000)
        yield* everywhere(instances, 2, runDue)
        expect(yield* sandbox.sentTransfers).toHaveLength(0)
        yield* TestClock.adjust(60_000)
        const reports = yield* everywhere(instances, 3, runDue)
        expect(reports.reduce((n, r) => n + r.splits.finished, 0)).toBe(1)
        expect(reports.reduce((n, r) => n + r.splits.sent, 0)).toBe(2)
        expect(reports.reduce((n, r) => n + r.splits.failed, 0)).toBe(0)
        const sent = yield* sandbox.sentTransfers
        expect(sent.map((t) => t.amount.minor).sort()).toEqual([40000n, 50000n])
        const view = yield* read(split.id).pipe(Effect.provide(instances[2]!), Effect.provide(bank))
        expect(view.payout_status).toBe("SUCCESS")
        // Later runs find nothing more to do.
        yield* everywhere(instances, 2, runDue)
        expect(yield* sandbox.sentTransfers).toHaveLength(2)
        for (const context of instances) yield* Effect.provide(expectLedgerOk, context)
      }),
    120_000
  )

  it.scoped(
    "50 concurrent refunds of one payment over two instances never refund more than it received",
    () =>
      Effect.gen(function* () {
        const { on, sandbox } = yield* fresh(8, 8)
        yield* on(0)(seedUser())
        const payment = yield* on(0)(
          Effect.flatMap(Payments.Payments, (p) => p.create(createRequest({ external_id: "order-refund" })))
        )
        const incoming = yield* sandbox.simulateIncoming({
          cvu: payment.cvu,
          amount: payment.quoteAmount,
          senderAccount: BankAccount.makeCbu("0170099", "2200001234567")
        })
        yield* on(0)(Effect.flatMap(Transfers.Transfers, (t) => t.ingest(incoming)))
        // Another payment's money in the balance: what the payment received bounds the refunds,
        // not the balance (the payment credited less than it received).
        const other = yield* on(0)(
          Effect.flatMap(Payments.Payments, (p) => p.create(createRequest({ external_id: "order-other" })))
        )
        yield* on(0)(
          Effect.flatMap(Transfers.Transfers, (t) =>
            Effect.flatMap(sandbox.simulateIncoming({ cvu: other.cvu, amount: other.quoteAmount }), t.ingest)
          )
        )
        const paid = yield* on(0)(Effect.flatMap(Payments.Payments, (p) => p.get(u1, payment.id)))
        const received = paid.transaction_fields!.total_paid.amount
        const before = yield* on(0)(
          Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(u1)))
        )
        const request = Schema.decodeUnknownSync(Refund.RefundRequest)({
          refund_type: "PARTIAL",
          amount: "100.00"
        })
        const outcomes = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) =>
            on(i % 2)(
              Effect.either(Effect.flatMap(Refunds.Refunds, (r) => r.create(u1, payment.id, request)))
            )
          ),
          { concurrency: "unbounded" }
        )
        const made = outcomes.filter(Either.isRight).map((o) => o.right)
        const refused = outcomes.filter(Either.isLeft).map((o) => o.left.key)
        // 100.00 fits in what the payment received this many times, and not once more.
        const fits = Number(received.minor / 10000n)
        expect(made).toHaveLength(fits)
        // 1500.00 received is 15 times 100.00: then nothing is left.
        expect(new Set(refused)).toEqual(new Set(["refund.payment.fully_refunded"]))
        expect(made.every((r) => r.status === "SUCCESS")).toBe(true)
        const stored = yield* on(1)(Effect.flatMap(Refunds.Refunds, (r) => r.list(u1, payment.id)))
        expect(stored).toHaveLength(fits)
        expect(yield* sandbox.sentTransfers).toHaveLength(fits)
        const available = yield* on(0)(
          Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(u1)))
        )
        expect(available.minor).toBe(before.minor - BigInt(fits) * 10000n)
        yield* on(0)(expectLedgerOk)
      }),
    120_000
  )
})

/** The sandbox fee policy's rates (1 % commission, 21 % IVA on it). */
const LedgerRate = {
  commission: BigDecimal.unsafeFromString("0.01"),
  iva: BigDecimal.unsafeFromString("0.21")
}
