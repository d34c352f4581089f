/**
 * How a refund hears the outcome of its transfer (`OutgoingTransfers`' settle step, inside its
 * unit of work, after the money moved from the merchant's in transit to the bank, or back to its
 * available balance): SUCCESS with the bank's id, or FAILED with the bank's reason; either way the
 * payment's "Payment updated" event (SPEC's body) goes to its webhook URL.
 */
import { Effect, Option } from "effect"
import { ownerSettlement } from "../outgoing/Settlement.js"
import { emitPaymentUpdated } from "../payments/paymentEvents.js"
import { PaymentRepository } from "../payments/PaymentRepository.js"
import { Outbox } from "../webhooks/Outbox.js"
import { Refund, RefundId } from "./Refund.js"
import { RefundRepository } from "./RefundRepository.js"

/** The refunds' settlement, for the engine's `Settlements` registry. */
export const refundSettlement = Effect.gen(function* () {
  const repo = yield* RefundRepository
  const payments = yield* PaymentRepository
  const outbox = yield* Outbox
  return ownerSettlement<Refund>({
    purpose: "refund",
    completedKind: "refund.sent",
    failedKind: "refund.failed",
    name: "refund",
    lock: (transfer) => repo.findByIdForUpdate(RefundId.make(transfer.owner_id)),
    waiting: (refund) => refund.status === "PENDING",
    settle: (refund, outcome, _, now) =>
      Effect.succeed(
        new Refund({
          ...refund,
          status: outcome._tag === "Completed" ? "SUCCESS" : "FAILED",
          bank_transaction_id: outcome.bank_transaction_id ?? refund.bank_transaction_id,
          failure_reason: outcome._tag === "Completed" ? null : outcome.reason,
          last_modified_timestamp: now
        })
      ),
    update: (refund) => repo.update(refund),
    emit: (refund) =>
      Effect.gen(function* () {
        const payment = yield* payments.findById(refund.payment_id)
        if (Option.isSome(payment)) yield* emitPaymentUpdated(outbox, payment.value)
        return true
      })
  })
})
