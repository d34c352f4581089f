/**
 * Postgres under concurrency: many connections and several engine instances (as several server
 * processes would be) over one database, sharing one bank.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  BankAccount,
  Customer,
  Customers,
  Engine,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Payments,
  SandboxBank,
  SecondFactor,
  Split,
  Transfers,
  User
} from "@cobro/core"
import { PgStorage } from "@cobro/sql-pg"
import { BigDecimal, Effect, Layer, Redacted, Schema, TestClock } from "effect"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "../src/index.js"
import { createRequest, expectLedgerOk, seedUser, u1 } from "../src/scenarios/fixtures.js"
import { HOLD, instructedSplit, read } from "../src/scenarios/splits.js"

const available = await Effect.runPromise(pgAvailable)
if (!available) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres concurrency tests are SKIPPED !!!\n`
  )
}

/** One engine instance (its own connection pool) over the database at `url`. */
const instance = (url: string, maxConnections: number) =>
  Layer.build(Engine.layerSandboxServices(PgStorage.layer({ url: Redacted.make(url), maxConnections })))

describe.skipIf(!available)("Postgres concurrency", () => {
  it.scoped(
    "500 concurrent transfers to one customer over several connections leave the balance exact",
    () =>
      Effect.gen(function* () {
        const url = yield* freshPgUrl
        const bank = yield* Layer.build(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
        const engine = yield* Effect.provide(instance(url, 8), bank)
        const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, engine)
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
        const sandbox = yield* Effect.provide(SandboxBank.SandboxBank, bank)
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
    "two instances running the same due work do each piece once",
    () =>
      Effect.gen(function* () {
        const url = yield* freshPgUrl
        const bank = yield* Layer.build(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
        const a = yield* Effect.provide(instance(url, 4), bank)
        const b = yield* Effect.provide(instance(url, 4), bank)
        const onA = <X, E, R>(effect: Effect.Effect<X, E, R>) => Effect.provide(effect, a)
        const onB = <X, E, R>(effect: Effect.Effect<X, E, R>) => Effect.provide(effect, b)
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
        const sandbox = yield* Effect.provide(SandboxBank.SandboxBank, bank)
        for (const p of payments) expect(yield* sandbox.isOpen(p.cvu)).toBe(false)
        yield* onB(expectLedgerOk)
      }),
    120_000
  )

  it.scoped(
    "work an instance left half done is taken over by another once its lease lapses",
    () =>
      Effect.gen(function* () {
        const url = yield* freshPgUrl
        const bank = yield* Layer.build(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
        const sandbox = yield* Effect.provide(SandboxBank.SandboxBank, bank)
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

/** The sandbox fee policy's rates (1 % commission, 21 % IVA on it). */
const LedgerRate = {
  commission: BigDecimal.unsafeFromString("0.01"),
  iva: BigDecimal.unsafeFromString("0.21")
}
