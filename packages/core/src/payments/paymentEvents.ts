import { DateTime, Effect } from "effect"
import { makeEvent, type Outbox, paymentUpdatedMessage } from "../webhooks/Outbox.js"
import type { Payment } from "./Payment.js"

/** What SPEC's "Payment updated" event for `payment` says, before it gets its id and time. */
export const paymentUpdatedInput = (payment: Payment) =>
  ({
    type: "payment.updated",
    user_id: payment.user_id,
    webhook_url: payment.webhook_url,
    payload: { message: paymentUpdatedMessage, paymentId: payment.id, externalId: payment.external_id }
  }) as const

/** SPEC's "Payment updated" event for `payment`. */
export const paymentUpdated = (payment: Payment) => makeEvent(paymentUpdatedInput(payment))

/** Appends SPEC's "Payment updated" event for `payment` to the outbox. */
export const emitPaymentUpdated = (outbox: Outbox["Type"], payment: Payment) =>
  Effect.flatMap(paymentUpdated(payment), outbox.append)

/** Whether the payment's CVU no longer takes money: released, or past its expiry. */
export const isClosed = (payment: Payment, now: DateTime.Utc): boolean =>
  payment.cvu_released || !DateTime.lessThan(now, payment.expiration_timestamp)
