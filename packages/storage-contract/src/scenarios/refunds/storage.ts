/**
 * Refunds stored and their money: the repository's contract (exact, one per id, ordered, paged), and
 * what a FULL refund and an OVERPAID payment's refunds return, the commission staying earned.
 */
import { expect } from "@effect/vitest"
import { Balances, Ids, Money, Payments, Refund, Refunds } from "@cobro/core"
import { RefundRepository } from "@cobro/core/ports"
import { DateTime, Effect, Option, TestClock } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, expectLedgerOk, seedUser, u1, u2 } from "../fixtures.js"
import {
  available,
  books,
  commission,
  credited,
  entries,
  events,
  fund,
  inTransit,
  minus,
  paidPayment,
  record,
  refundReq,
  refusal,
  senderCbu,
  senderCuit
} from "./helpers.js"

export const refundStorageScenarios: ReadonlyArray<Scenario> = [
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
  }
]
