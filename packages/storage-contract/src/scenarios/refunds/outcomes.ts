/**
 * Refunds refused and sent: each rule refused with its own key and nothing written, and the transfer
 * out pending then failed late, or timed out after the bank applied it, settled once.
 */
import { expect } from "@effect/vitest"
import { Ids, Ledger, LedgerAccount, Payments, Refund, Refunds } from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Effect } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, createRequest, expectLedgerOk, runDue, seedUser, u1, u2 } from "../fixtures.js"
import {
  available,
  books,
  checkLater,
  entries,
  events,
  fund,
  inTransit,
  minus,
  otherCbu,
  paidPayment,
  payFrom,
  refundReq,
  refusal,
  senderCbu
} from "./helpers.js"

export const refundOutcomeScenarios: ReadonlyArray<Scenario> = [
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
