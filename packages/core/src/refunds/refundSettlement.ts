/**
 * How a refund hears the outcome of its transfer (`OutgoingTransfers`' settle step, inside its
 * unit of work, after the money moved from the merchant's in transit to the bank, or back to its
 * available balance): SUCCESS with the bank's id, or FAILED with the bank's reason; either way the
 * payment's "Payment updated" event (SPEC's body) goes to its webhook URL.
 */
import { DateTime, Effect, Option } from "effect"
import type { Settlement } from "../outgoing/OutgoingTransfer.js"
import { emitPaymentUpdated } from "../payments/paymentEvents.js"
import { PaymentRepository } from "../payments/PaymentRepository.js"
import { Outbox } from "../webhooks/Outbox.js"
import { Refund, RefundId } from "./Refund.js"
import { RefundRepository } from "./RefundRepository.js"

export const make = Effect.gen(function* () {
  const repo = yield* RefundRepository
  const payments = yield* PaymentRepository
  const outbox = yield* Outbox
  const settlement: Settlement = {
    completedKind: "refund.sent",
    failedKind: "refund.failed",
    settled: (transfer, outcome) =>
      Effect.gen(function* () {
        const found = yield* repo.findByIdForUpdate(RefundId.make(transfer.owner_id))
        if (Option.isNone(found) || found.value.status !== "PENDING") {
          return yield* Effect.dieMessage(
            `refund ${transfer.owner_id} is not PENDING while its transfer settles`
          )
        }
        const refund = found.value
        const now = yield* DateTime.now
        const completed = outcome._tag === "Completed"
        yield* repo.update(
          new Refund({
            ...refund,
            status: completed ? "SUCCESS" : "FAILED",
            bank_transaction_id: outcome.bank_transaction_id ?? refund.bank_transaction_id,
            failure_reason: completed ? null : outcome.reason,
            last_modified_timestamp: now
          })
        )
        const payment = yield* payments.findById(refund.payment_id)
        if (Option.isSome(payment)) yield* emitPaymentUpdated(outbox, payment.value)
        return true
      })
  }
  return settlement
})
