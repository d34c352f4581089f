/**
 * Refunds: the repository's contract, and the engine's rules and money over it —
 * each rule refused with its own key and nothing written, the ledger entry with the refund, the
 * transfer out to the sender's account (completed, pending, failed late, timed out) settled
 * once, the payment's status left as it was, and the refund in the merchant's payouts list.
 * A refund returns what the payer sent: the commission stays earned and the
 * merchant's available balance pays, or the refusal names the shortfall.
 */
import { expect } from "@effect/vitest"
import {
  Balances,
  BankAccount,
  EngineConfig,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  Payments,
  Refund,
  Refunds,
  Transfers
} from "@cobro/core"
import { LedgerRepository, RefundRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1, u2 } from "./fixtures.js"

export const senderCbu = BankAccount.makeCbu("0170099", "2200001234567")
const otherCbu = BankAccount.makeCbu("0140099", "3300007654321")
export const senderCuit = BankAccount.makeCuit("20", "30111222")

/** A transfer of `minor` centavos to `cvu` from `account`, credited by the engine. */
const payFrom = (cvu: BankAccount.Cvu, minor: bigint, account: string = senderCbu) =>
  Effect.gen(function* () {
    const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu,
      amount: ars(minor),
      senderAccount: account,
      senderCuit
    })
    return yield* (yield* Transfers.Transfers).ingest(t)
  })

/**
 * A payment of u1 (1500.00 unless `price` says) paid with `minor` centavos from `account`; the
 * payment as it is then.
 */
const paidPayment = (minor: bigint, externalId = "o-1", price = 1500, account: string = senderCbu) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const created = yield* payments.create(
      createRequest({ external_id: externalId, price: { amount: price, currency: "ARS" } })
    )
    yield* payFrom(created.cvu, minor, account)
    return yield* payments.get(u1, created.id)
  })

/** Money of another payment (from another account) in u1's available balance: what it credited. */
const fund = (minor: bigint, externalId = "o-fund") =>
  Effect.map(paidPayment(minor, externalId, Number(minor) / 100, otherCbu), credited)

export const refundReq = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Refund.RefundRequest)(fields)

const available = (user = u1) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(user)))
const inTransit = (user = u1) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantInTransit(user)))
const credited = (p: {
  readonly transaction_fields?: { readonly credited_amount: Money.Money } | undefined
}) => p.transaction_fields!.credited_amount
const commission = Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.platformCommission))
const minus = (a: Money.Money, b: Money.Money) => Money.orThrow(Money.subtract(a, b))
const events = Effect.flatMap(Outbox.Outbox, (o) => Effect.map(o.list(0, 10_000), (es) => es.length))
const entries = Effect.flatMap(LedgerRepository.LedgerRepository, (r) =>
  Effect.map(r.entries(0, 100_000), (es) => es.length)
)
const books = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)
const runDue = Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
const checkLater = Effect.flatMap(EngineConfig.EngineConfig, (c) => TestClock.adjust(c.transferCheckInterval))

/** The refusal's key and field (when it names one). */
const refusal = <A, R>(effect: Effect.Effect<A, { readonly key: string }, R>) =>
  Effect.map(Effect.flip(effect), (e) => ({ key: e.key, ...("field" in e ? { field: e.field } : {}) }))

const record = (id: string, payment: string, at: DateTime.Utc, minor: bigint, user = u1) =>
  new Refund.Refund({
    refund_id: Refund.RefundId.make(id),
    payment_id: Ids.PaymentId.make(payment),
    user_id: user,
    refund_type: "PARTIAL",
    amount: ars(minor),
    status: "PENDING",
    destination: new Refund.RefundDestination({ address: senderCbu, cuit: senderCuit, name: "Juan Pérez" }),
    blame: null,
    bank_transaction_id: null,
    failure_reason: null,
    creation_timestamp: at,
    last_modified_timestamp: at
  })

export const refundScenarios: ReadonlyArray<Scenario> = [
  {
    name: "refunds: stored exactly, one per id, by payment oldest first, by user newest first in pages",
    run: Effect.gen(function* () {
      const repo = yield* RefundRepository.RefundRepository
      const t0 = DateTime.unsafeMake(Date.UTC(2026, 0, 28, 15, 0))
      const t1 = DateTime.addDuration(t0, "1 minute")
      // Past 2^53: the amount must come back exact.
      const a = record("rfd_b", "VAR-u1-o-1", t0, 9_007_199_254_740_993n)
      const b = new Refund.Refund({
        ...record("rfd_a", "VAR-u1-o-1", t0, 100n),
        blame: new Refund.Blame({ team_id: "soporte", mail: "ana@example.com" })
      })
      const c = new Refund.Refund({ ...record("rfd_c", "VAR-u1-o-2", t1, 200n), blame: new Refund.Blame({}) })
      const d = record("rfd_d", "VAR-u2-o-1", t1, 300n, u2)
      for (const r of [a, b, c, d]) yield* repo.insert(r)
      expect((yield* Effect.flip(repo.insert(a))).key).toBe("refund.id.taken")
      expect(yield* repo.findById(a.refund_id)).toEqual(Option.some(a))
      expect(yield* repo.findByIdForUpdate(b.refund_id)).toEqual(Option.some(b))
      expect(yield* repo.findById(c.refund_id)).toEqual(Option.some(c))
      expect(yield* repo.findById(Refund.RefundId.make("rfd_none"))).toEqual(Option.none())
      const ids = (rs: ReadonlyArray<Refund.Refund>) => rs.map((r) => r.refund_id)
      expect(ids(yield* repo.listByPayment(Ids.PaymentId.make("VAR-u1-o-1")))).toEqual(["rfd_a", "rfd_b"])
      expect(ids(yield* repo.listByUser(u1, Option.none(), 10))).toEqual(["rfd_c", "rfd_b", "rfd_a"])
      expect(ids(yield* repo.listByUser(u1, Option.none(), 2))).toEqual(["rfd_c", "rfd_b"])
      expect(
        ids(yield* repo.listByUser(u1, Option.some({ creation_timestamp: t0, id: "rfd_b" }), 10))
      ).toEqual(["rfd_a"])
      const settled = new Refund.Refund({
        ...a,
        status: "FAILED",
        failure_reason: "account closed",
        bank_transaction_id: Ids.BankTransactionId.make("bt-1"),
        last_modified_timestamp: t1
      })
      yield* repo.update(settled)
      expect(yield* repo.findById(a.refund_id)).toEqual(Option.some(settled))
    })
  },
  {
    name: "refunds: a FULL refund of a 700 payment returns the 700 sent, not the 691.53 credited; the commission stays earned",
    run: Effect.gen(function* () {
      yield* seedUser()
      const refunds = yield* Refunds.Refunds
      const payment = yield* paidPayment(70000n, "o-700", 700)
      expect(payment.payment_status).toBe("SUCCESS")
      // 700 less 1 % commission and 21 % IVA on it.
      expect(credited(payment)).toEqual(ars(69153n))
      // Another payment's money pays the 8.47 the first did not credit.
      const funded = yield* fund(100000n)
      const before = yield* available()
      expect(before).toEqual(Money.orThrow(Money.add(credited(payment), funded)))
      const earned = yield* commission
      const eventsBefore = yield* events
      const refund = yield* refunds.create(
        u1,
        payment.id,
        refundReq({ refund_type: "FULL", user_id: "u1", blame: { team_id: "t1", mail: "a@example.com" } })
      )
      expect(refund).toMatchObject({
        status: "SUCCESS",
        refund_type: "FULL",
        amount: ars(70000n),
        destination: { address: senderCbu, cuit: senderCuit },
        blame: { team_id: "t1", mail: "a@example.com" }
      })
      expect(refund.refund_id).toMatch(/^rfd_[0-9a-z]{22}$/)
      // The bank sent the payer's account the 700.00 it sent.
      const sent = (yield* books).filter((t) => t.to === senderCbu)
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatchObject({ to: senderCbu, reference: refund.refund_id, amount: ars(70000n) })
      expect(refund.bank_transaction_id).toBe(sent[0]!.bank_transaction_id)
      expect(yield* available()).toEqual(minus(before, ars(70000n)))
      expect(yield* inTransit()).toEqual(ars(0n))
      expect(yield* commission).toEqual(earned)
      // PENDING at creation, SUCCESS when the bank confirmed: a "Payment updated" for each.
      expect((yield* events) - eventsBefore).toBe(2)
      const after = yield* (yield* Payments.Payments).get(u1, payment.id)
      expect(after.payment_status).toBe("SUCCESS")
      expect(yield* refunds.list(u1, payment.id)).toEqual([refund])
      expect(yield* refunds.get(u1, payment.id, refund.refund_id)).toEqual(refund)
      expect((yield* refunds.ofPayment(after)).full).toBe(true)
      expect((yield* (yield* Payments.Payments).getPublic(payment.id)).refund).toMatchObject({
        amount: ars(70000n),
        full: true,
        pending: false
      })
      // Nothing is left to refund.
      expect(yield* refusal(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" })))).toEqual({
        key: "refund.payment.fully_refunded"
      })
      // An UNDERPAID payment: FULL returns what arrived.
      const under = yield* paidPayment(30000n, "o-under", 700)
      expect(under.payment_status).toBe("UNDERPAID")
      expect((yield* refunds.create(u1, under.id, refundReq({ refund_type: "FULL" }))).amount).toEqual(
        ars(30000n)
      )
      yield* expectLedgerOk
    })
  },
  {
    name: "refunds: an OVERPAID payment, part then FULL: all it received goes back; a short balance names the shortfall",
    run: Effect.gen(function* () {
      yield* seedUser()
      const refunds = yield* Refunds.Refunds
      const payment = yield* paidPayment(200000n)
      expect(payment.payment_status).toBe("OVERPAID")
      const excess = refundReq({ refund_type: "PARTIAL", amount: "500.00", currency: "ARS" })
      const refund = yield* refunds.create(u1, payment.id, excess)
      expect(refund).toMatchObject({ status: "SUCCESS", amount: ars(50000n), refund_type: "PARTIAL" })
      expect((yield* (yield* Payments.Payments).get(u1, payment.id)).payment_status).toBe("OVERPAID")
      expect(yield* available()).toEqual(minus(credited(payment), ars(50000n)))
      expect((yield* (yield* Payments.Payments).getPublic(payment.id)).refund).toMatchObject({ full: false })
      // What is left is what the payer sent less the refund: a numeric amount above it is refused.
      const left = ars(150000n)
      const over = yield* refusal(
        refunds.create(
          u1,
          payment.id,
          refundReq({ refund_type: "PARTIAL", amount: Money.toNumber(left) + 0.01 })
        )
      )
      expect(over).toEqual({ key: "refund.amount.exceeds_refundable" })
      // The rest is more than the balance (the commission and its IVA stay earned): refused,
      // naming what it needs, what is available and what is missing; nothing written.
      const snapshot = Effect.all([entries, events, books, available()])
      const before = yield* snapshot
      const short = yield* Effect.flip(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" })))
      expect(short).toMatchObject({
        _tag: "Conflict",
        key: "refund.balance.insufficient",
        shortfall: { needed: ars(150000n), available: ars(147580n), missing: ars(2420n) }
      })
      expect(short.message).toContain("24.20 ARS short")
      expect(yield* snapshot).toEqual(before)
      expect(yield* refunds.list(u1, payment.id)).toEqual([refund])
      // Money of another payment makes up for it: FULL returns the 1500.00 left.
      yield* fund(10000n)
      yield* TestClock.adjust("1 second")
      const rest = yield* refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" }))
      expect(rest.amount).toEqual(left)
      const sent = (yield* books).filter((t) => t.to === senderCbu)
      expect(sent.map((t) => t.amount)).toEqual([ars(50000n), ars(150000n)])
      expect((yield* (yield* Payments.Payments).getPublic(payment.id)).refund).toMatchObject({
        amount: ars(200000n),
        full: true
      })
      expect(yield* available()).toEqual(minus(ars(147580n + 9879n), ars(150000n)))
      expect((yield* refunds.list(u1, payment.id)).map((r) => r.refund_id)).toEqual([
        refund.refund_id,
        rest.refund_id
      ])
      // Both in the merchant's payouts, as kind "refund".
      const listed = (yield* (yield* Balances.Balances).payouts(u1, u1, { kind: "refund" })).items
      expect(listed.map((p) => p.payout_id).sort()).toEqual([refund.refund_id, rest.refund_id].sort())
      expect(listed[0]).toMatchObject({
        kind: "refund",
        status: "SUCCESS",
        destination: senderCbu,
        payment_id: payment.id,
        currency: "ARS"
      })
      yield* expectLedgerOk
    })
  },
  {
    name: "refunds: every rule refuses with its own key and writes nothing",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const refunds = yield* Refunds.Refunds
      const payments = yield* Payments.Payments
      const payment = yield* paidPayment(150000n)
      const pending = yield* payments.create(createRequest({ external_id: "o-pending" }))
      const several = yield* payments.create(createRequest({ external_id: "o-several" }))
      yield* payFrom(several.cvu, 100000n, senderCbu)
      yield* payFrom(several.cvu, 50000n, otherCbu)
      const theirs = yield* payments.create(createRequest({ external_id: "o-2", user_id: "u2" }))
      yield* payFrom(theirs.cvu, 150000n)
      const snapshot = Effect.all([entries, events, books, available()])
      const before = yield* snapshot
      const partial = (amount: unknown, currency?: string) =>
        refunds.create(
          u1,
          payment.id,
          refundReq({ refund_type: "PARTIAL", amount, ...(currency === undefined ? {} : { currency }) })
        )
      const invalidAmount = { key: "refund.amount.invalid", field: "amount" }
      expect(yield* refusal(partial("250.505"))).toEqual(invalidAmount)
      expect(yield* refusal(partial(250.505))).toEqual(invalidAmount)
      expect(yield* refusal(partial("-10.00"))).toEqual(invalidAmount)
      expect(yield* refusal(partial(-10))).toEqual(invalidAmount)
      expect(yield* refusal(partial("0"))).toEqual(invalidAmount)
      expect(yield* refusal(partial("diez"))).toEqual(invalidAmount)
      expect(yield* refusal(refunds.create(u1, payment.id, refundReq({ refund_type: "PARTIAL" })))).toEqual(
        invalidAmount
      )
      expect(
        yield* refusal(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL", amount: "10" })))
      ).toEqual(invalidAmount)
      expect(yield* refusal(partial("10.00", "USD"))).toEqual({
        key: "refund.currency.mismatch",
        field: "currency"
      })
      expect(yield* refusal(partial("1500.01"))).toEqual({ key: "refund.amount.exceeds_refundable" })
      expect(
        yield* refusal(
          refunds.create(u1, Ids.PaymentId.make("VAR-u1-nope"), refundReq({ refund_type: "FULL" }))
        )
      ).toEqual({ key: "payment.not.found" })
      expect(yield* refusal(refunds.create(u1, theirs.id, refundReq({ refund_type: "FULL" })))).toEqual({
        key: "payment.not.found"
      })
      expect(
        yield* refusal(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL", user_id: "u2" })))
      ).toEqual({ key: "user.not.found" })
      expect(yield* refusal(refunds.create(u1, pending.id, refundReq({ refund_type: "FULL" })))).toEqual({
        key: "refund.payment.not_paid"
      })
      expect(yield* refusal(refunds.create(u1, several.id, refundReq({ refund_type: "FULL" })))).toEqual({
        key: "refund.payment.several_senders"
      })
      // Money in transit does not count: with most of it on its way out, the refund is short.
      const ledger = yield* Ledger.Ledger
      const held = minus(yield* available(), ars(10000n))
      yield* ledger.post({
        kind: "test.payout",
        reference: "po_test",
        postings: [
          Ledger.debit(LedgerAccount.merchantAvailable(u1), held),
          Ledger.credit(LedgerAccount.merchantInTransit(u1), held)
        ]
      })
      const short = yield* Effect.flip(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" })))
      expect(short).toMatchObject({
        key: "refund.balance.insufficient",
        shortfall: { needed: ars(150000n), available: ars(10000n), missing: ars(140000n) }
      })
      expect(short.message).toContain("100.00 ARS")
      const [entriesBefore, eventsBefore, booksBefore] = before
      expect(yield* entries).toBe(entriesBefore + 1)
      expect(yield* events).toBe(eventsBefore)
      expect(yield* books).toEqual(booksBefore)
      expect(yield* refunds.list(u1, payment.id)).toEqual([])
      expect(yield* refusal(refunds.list(u2, payment.id))).toEqual({ key: "payment.not.found" })
      expect(yield* refusal(refunds.get(u1, payment.id, Refund.RefundId.make("rfd_none")))).toEqual({
        key: "refund.not.found"
      })
      yield* expectLedgerOk
    })
  },
  {
    name: "refunds: pending at the bank then failed late, the money returns and the refund is FAILED once",
    run: Effect.gen(function* () {
      yield* seedUser()
      const refunds = yield* Refunds.Refunds
      const bank = yield* SandboxBank.SandboxBank
      const payment = yield* paidPayment(150000n)
      yield* fund(100000n)
      const full = ars(150000n)
      const before = yield* available()
      yield* bank.failTransfersLate(senderCbu, "cuenta cerrada")
      const refund = yield* refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" }))
      expect(refund.status).toBe("PENDING")
      expect(yield* available()).toEqual(minus(before, full))
      expect(yield* inTransit()).toEqual(full)
      expect((yield* (yield* Payments.Payments).getPublic(payment.id)).refund).toMatchObject({
        pending: true
      })
      // Pending refunds count: nothing more can be refunded meanwhile.
      expect(yield* refusal(refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" })))).toEqual({
        key: "refund.payment.fully_refunded"
      })
      yield* expectLedgerOk
      yield* checkLater
      const report = yield* runDue
      expect(report.refunds).toMatchObject({ failed: 1 })
      const failed = yield* refunds.get(u1, payment.id, refund.refund_id)
      expect(failed).toMatchObject({ status: "FAILED" })
      expect(failed.failure_reason).toContain("cuenta cerrada")
      expect(yield* available()).toEqual(before)
      expect(yield* inTransit()).toEqual(ars(0n))
      yield* checkLater
      expect((yield* runDue).refunds).toMatchObject({ failed: 0, completed: 0 })
      expect(yield* available()).toEqual(before)
      yield* expectLedgerOk
      // A failed refund does not count: the payment can be refunded again.
      yield* bank.clearFailures(senderCbu)
      const again = yield* refunds.create(u1, payment.id, refundReq({ refund_type: "FULL" }))
      expect(again).toMatchObject({ status: "SUCCESS", amount: full })
      yield* expectLedgerOk
    })
  },
  {
    name: "refunds: a send that timed out after the bank applied it is asked about, never sent twice",
    run: Effect.gen(function* () {
      yield* seedUser()
      const refunds = yield* Refunds.Refunds
      const bank = yield* SandboxBank.SandboxBank
      const payment = yield* paidPayment(150000n)
      yield* bank.timeOutTransfers(1)
      const refund = yield* refunds.create(
        u1,
        payment.id,
        refundReq({ refund_type: "PARTIAL", amount: "100" })
      )
      expect(refund.status).toBe("PENDING")
      yield* checkLater
      expect((yield* runDue).refunds).toMatchObject({ completed: 1, resent: 0 })
      expect((yield* refunds.get(u1, payment.id, refund.refund_id)).status).toBe("SUCCESS")
      expect((yield* books).filter((t) => t.reference === refund.refund_id)).toHaveLength(1)
      expect(yield* inTransit()).toEqual(ars(0n))
      yield* expectLedgerOk
    })
  }
]
