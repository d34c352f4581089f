/** The payment routes: `publicPayments` (no token) and `payments` (the merchant's), with their wire shapes. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Payment, PaymentRequest, BankAccount, Refund, Wire } from "@cobro/core"
import type { Money } from "@cobro/core"
import { Schema, Struct } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { PublicRateLimit } from "../rateLimit.js"
import { EnvelopeErrors, IdempotencyHeaders, withExample } from "./shared.js"

/** An amount in integer minor units with its currency (`price` on the wire). */
export type Price = Money.Money

/** A payment as SPEC shows it (the stored payment without its internal fields). */
export const PaymentWire = Schema.Struct(
  Struct.omit(Payment.Payment.fields, "cvu_released", "creation_request")
)

/** Merchant data in the detailed read (SPEC's `user_info`). */
export const UserInfo = Schema.Struct({
  email: Schema.String,
  fiat_payments_enabled: Schema.Boolean,
  payment_notifications: Schema.Boolean,
  user_id: Ids.UserId,
  provider: Schema.String,
  payment_url: Schema.String,
  payment_options: Schema.Array(Payment.PaymentOption),
  expiration_timestamp: Wire.Timestamp,
  transactions: Schema.Array(Payment.Transaction)
})

/**
 * GET /payments/{paymentId} `data`: the payment with `user_info`, its refunds (oldest first) and
 * `refunded_amount` (PENDING and SUCCESS refunds, decimal text; "0.00" when none).
 */
export const PaymentDetail = Schema.Struct({
  ...PaymentWire.fields,
  user_info: UserInfo,
  refunds: Schema.Array(Refund.RefundWire),
  refunded_amount: Schema.String
})

/** POST /payments/ `data`. */
export const PaymentCreated = Schema.Struct({
  id: Ids.PaymentId,
  payment_status: Payment.PaymentStatus,
  quotes: Schema.Array(Schema.Struct({ cvu: BankAccount.Cvu, alias: BankAccount.Alias })),
  payment_url: Schema.String,
  expiration_timestamp: Wire.Timestamp
})

/** An element of GET /payments/ `data.payments`. */
export const PaymentSummary = PaymentWire.pipe(
  Schema.pick(
    "id",
    "external_id",
    "payment_status",
    "price",
    "quotes",
    "payment_options",
    "payment_url",
    "creation_timestamp",
    "last_modified_timestamp",
    "is_deleted"
  )
)

export const ListPaymentsParams = Schema.Struct({
  user_id: Ids.UserId,
  team_id: Schema.optional(Ids.TeamId),
  start_date: Schema.optional(Wire.Timestamp),
  end_date: Schema.optional(Wire.Timestamp)
})

const paymentId = Schema.Struct({ paymentId: Ids.PaymentId })
const refundPath = Schema.Struct({ paymentId: Ids.PaymentId, refundId: Refund.RefundId })

/** Routes anyone may call: creating a payment (the body names the merchant) and the payer's view. */
export class PublicPayments extends HttpApiGroup.make("publicPayments")
  .add(
    HttpApiEndpoint.post("create", "/payments/")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a payment",
          description:
            "Creates a one-off payment with its own CVU and alias, a `payment_url` for the payer and an expiry (5 days, or the account's cancellation period). Public: the body's `user_id` names the merchant. The id is `VAR-{user_id}-{external_id}`; repeating a creation with the same body answers the existing payment, the same `external_id` with another body is 409. A price in USDT, BNB or BRL is quoted in ARS. The crypto and PIX methods are deprecated: 503."
        })
      )
      .setPayload(
        withExample(PaymentRequest.CreatePaymentRequest, {
          user_id: "demo",
          external_id: "order-1001",
          price: { amount: 1500, currency: "ARS" },
          payment_options: ["transfer"],
          motive: "Pedido 1001",
          webhook_url: "https://example.com/webhooks/cobro",
          redirect_url: "https://example.com/orders/1001"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(PaymentCreated))
      .middleware(PublicRateLimit)
  )
  .add(
    HttpApiEndpoint.get("getPublic", "/payments/:paymentId/public")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a payment as its payer sees it",
          description:
            "Public: what a payer's page needs (status, price, quotes, expiry, motive, redirect URL, the merchant's display name). No merchant data beyond that."
        })
      )
      .setPath(paymentId)
      .addSuccess(Envelope(Payment.PublicPayment))
      .middleware(PublicRateLimit)
  )
  .addError(EnvelopeErrors)
  .annotate(OpenApi.Title, "Payments") {}

export class Payments extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.get("list", "/payments/")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a merchant's payments",
          description:
            "Every payment of `user_id` (the token's own account), optionally of one `team_id` and created between `start_date` and `end_date`. No pagination: the list is streamed."
        })
      )
      .setUrlParams(ListPaymentsParams)
      .addSuccess(Envelope(Schema.Struct({ payments: Schema.Array(PaymentSummary) })))
  )
  .add(
    HttpApiEndpoint.get("get", "/payments/:paymentId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a payment",
          description:
            "The whole payment with its transactions, `transaction_fields` once paid, and the merchant's `user_info`. Another account's payment is not found (404)."
        })
      )
      .setPath(paymentId)
      .addSuccess(Envelope(PaymentDetail))
  )
  .add(
    HttpApiEndpoint.put("extendExpiration", "/payments/:paymentId/expiration")
      .annotateContext(
        OpenApi.annotations({
          summary: "Extend a pending payment's expiry",
          description:
            "Moves `expiration_timestamp` of a PENDING payment later. Answers the bare updated payment, without an envelope."
        })
      )
      .setPath(paymentId)
      .setPayload(
        withExample(PaymentRequest.ExtendExpirationRequest, {
          expiration_timestamp: "2030-01-31T23:59:59.000Z"
        })
      )
      .addSuccess(PaymentWire)
  )
  .add(
    HttpApiEndpoint.put("reprice", "/payments/:paymentId/price")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a payment's price",
          description:
            "Sets a new ARS price. A PENDING payment keeps its state with the new quote; a SUCCESS, OVERPAID or UNDERPAID one is settled again against the amount received and its webhook is sent; an EXPIRED one is refused (409). Answers the bare updated payment, without an envelope."
        })
      )
      .setPath(paymentId)
      .setPayload(withExample(PaymentRequest.RepriceRequest, { amount: 1750.5, currency: "ARS" }))
      .addSuccess(PaymentWire)
  )
  .add(
    HttpApiEndpoint.put("updateMetadata", "/payments/:paymentId/metadata")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a payment's motive",
          description:
            "Only `motive` can change; each change is kept in `metadata.motive[]` with the previous value, who made it and when. Only the payment's owner may change it. Answers the whole updated payment in the envelope."
        })
      )
      .setPath(paymentId)
      .setPayload(withExample(PaymentRequest.UpdateMetadataRequest, { motive: "Pedido 1001 (2 unidades)" }))
      .addSuccess(Envelope(PaymentWire))
  )
  .add(
    HttpApiEndpoint.post("refund", "/payments/:paymentId/refunds")
      .annotateContext(
        OpenApi.annotations({
          summary: "Refund a payment",
          description:
            "Sends a paid payment's money (SUCCESS, OVERPAID or UNDERPAID) back to the account it came from (the sender's CBU or CVU and CUIT in its transactions). `FULL` refunds what is left of what the payer sent (all of it for an OVERPAID payment, what arrived for an UNDERPAID one); `PARTIAL` refunds `amount` (a decimal string such as \"250.50\" or a number, at most 2 decimals, ARS). The refunds of a payment never add up to more than the payer sent. The commission and taxes stay earned, so a refund takes more from the merchant's available balance than the payment credited: the balance must cover it (money in transit does not count), else 409 `refund.balance.insufficient` with `data.shortfall` (needed, available, missing). A payment paid from several accounts, or from a sender the bank reported with an invalid CBU/CVU or CUIT (`sender_problems` on its transaction), is refused (409). The refund starts PENDING with its money moved from available to in transit, and becomes SUCCESS when the bank confirms the transfer or FAILED (money back in available, `failure_reason` the bank's) if it fails; each change sends the payment's \"Payment updated\" webhook. Refunding never changes `payment_status`: an OVERPAID payment whose excess is refunded stays paid. With an `Idempotency-Key`, a retry answers the first refund instead of making another."
        })
      )
      .setPath(paymentId)
      .setPayload(
        withExample(Refund.RefundRequest, {
          refund_type: "PARTIAL",
          amount: "250.50",
          currency: "ARS",
          user_id: "demo",
          blame: { team_id: "soporte", mail: "soporte@example.com" }
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Refund.RefundWire))
  )
  .add(
    HttpApiEndpoint.get("refunds", "/payments/:paymentId/refunds")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a payment's refunds",
          description:
            "Every refund of the payment, oldest first, with its status. Another account's payment is not found (404)."
        })
      )
      .setPath(paymentId)
      .addSuccess(Envelope(Schema.Struct({ refunds: Schema.Array(Refund.RefundWire) })))
  )
  .add(
    HttpApiEndpoint.get("getRefund", "/payments/:paymentId/refunds/:refundId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a refund",
          description:
            "One refund of the payment. A refund of another payment, or of another account's, is not found (404)."
        })
      )
      .setPath(refundPath)
      .addSuccess(Envelope(Refund.RefundWire))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Payments")
  .annotate(
    OpenApi.Description,
    "One-off payments with their own CVU and alias. Creating one and the payer's view are public (POST /payments/ names the merchant in `user_id`); the rest needs the merchant's bearer token."
  ) {}
