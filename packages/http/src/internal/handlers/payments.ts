/**
 * The payment routes: `publicPayments` (create a payment and read its public view, rate limited
 * and without a token) and `payments` (the merchant's list, detail and changes of its payments).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Accounts,
  Idempotency,
  MerchantClocks,
  Money,
  type Payment,
  Payments,
  Refund,
  Refunds
} from "@cobro/core"
import { PaymentEncoding } from "@cobro/core/ports"
import { Effect, Schema } from "effect"
import * as Api from "../../Api.js"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import type { PublicRateLimit } from "../rateLimit.js"
import { asPrincipal, domain, type GroupLive, group, ownList, idempotent } from "./shared.js"
import { streamedList } from "./streamedList.js"

const toCreated = (payment: Payment.Payment): typeof Api.PaymentCreated.Type => ({
  id: payment.id,
  payment_status: payment.payment_status,
  quotes: payment.quotes.map((q) => ({ cvu: q.address, alias: q.alias })),
  payment_url: payment.payment_url,
  expiration_timestamp: payment.expiration_timestamp
})

export const PublicPaymentsLive: GroupLive<
  "publicPayments",
  Payments.Payments | Idempotency.Idempotency | PublicRateLimit
> = group("publicPayments", (handlers) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    return handlers
      .handle(
        "create",
        idempotent("publicPayments", "create", ({ payload }) =>
          // On the clock of the merchant the body names (its sandbox test clock, once moved).
          MerchantClocks.run(payload.user_id)(
            domain(
              Idempotency.answering(payments.create(payload), (p) => ok("payment.created", toCreated(p)))
            )
          )
        )
      )
      .handle("getPublic", ({ path }) =>
        Effect.map(domain(payments.getPublic(path.paymentId)), (view) => ok("payment.found", view))
      )
  })
)

const encodeRefund = Schema.encodeSync(Refund.RefundWire)

/**
 * GET /payments/{paymentId}'s answer: the payment as SPEC shows it, with the merchant's
 * `user_info` and its refunds, written from the payment's own encoding (core's
 * `PaymentEncoding`) rather than by the route's schema. The JSON text is the schema's, byte for
 * byte (`paymentDetailWire.test.ts`), written at about half the CPU the schema's encoding takes.
 */
const detailOf = (payment: Payment.Payment, accounts: Accounts.Accounts, refunds: Refunds.Refunds) =>
  Effect.zipWith(accounts.getUser(payment.user_id), refunds.ofPayment(payment), (user, refunded) => {
    const { cvu_released: _released, creation_request: _request, ...wire } = PaymentEncoding.encode(payment)
    return HttpServerResponse.unsafeJson(
      ok("payment.found", {
        ...wire,
        user_info: {
          email: user.email,
          fiat_payments_enabled: true,
          payment_notifications: payment.webhook_url !== null,
          user_id: user.user_id,
          provider: "cobro",
          payment_url: wire.payment_url,
          payment_options: wire.payment_options,
          expiration_timestamp: wire.expiration_timestamp,
          transactions: wire.transactions
        },
        refunds: refunded.refunds.map((r) => encodeRefund(Refund.toWire(r))),
        refunded_amount: Money.format(refunded.refunded)
      })
    )
  })

export const PaymentsLive: GroupLive<
  "payments",
  Payments.Payments | Accounts.Accounts | Refunds.Refunds | Idempotency.Idempotency | Authentication
> = group("payments", (handlers) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const accounts = yield* Accounts.Accounts
    const refunds = yield* Refunds.Refunds
    return handlers
      .handle("list", ({ urlParams }) =>
        asPrincipal((principal) =>
          Effect.zipRight(
            ownList(principal, urlParams.user_id),
            streamedList(
              "payments.found",
              "payments",
              Api.PaymentSummary,
              payments.list(principal.user_id, urlParams)
            )
          )
        )
      )
      .handle("get", ({ path }) =>
        asPrincipal((principal) =>
          payments
            .get(principal.user_id, path.paymentId)
            .pipe(Effect.flatMap((payment) => detailOf(payment, accounts, refunds)))
        )
      )
      .handle("extendExpiration", ({ path, payload }) =>
        asPrincipal((principal) => payments.extendExpiration(principal.user_id, path.paymentId, payload))
      )
      .handle("reprice", ({ path, payload }) =>
        asPrincipal((principal) => payments.reprice(principal.user_id, path.paymentId, payload))
      )
      .handle("updateMetadata", ({ path, payload }) =>
        asPrincipal((principal) =>
          Effect.map(payments.updateMotive(principal.user_id, path.paymentId, payload.motive), (p) =>
            ok("payment.metadata.updated", p)
          )
        )
      )
      .handle(
        "refund",
        idempotent("payments", "refund", ({ path, payload }) =>
          asPrincipal((principal) =>
            Idempotency.answering(refunds.create(principal.user_id, path.paymentId, payload), (r) =>
              ok("refund.created", Refund.toWire(r))
            )
          )
        )
      )
      .handle("refunds", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(refunds.list(principal.user_id, path.paymentId), (all) =>
            ok("refunds.found", { refunds: all.map(Refund.toWire) })
          )
        )
      )
      .handle("getRefund", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(refunds.get(principal.user_id, path.paymentId, path.refundId), (r) =>
            ok("refund.found", Refund.toWire(r))
          )
        )
      )
  })
)
