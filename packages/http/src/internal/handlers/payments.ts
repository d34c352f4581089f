/**
 * The payment routes: `publicPayments` (create a payment and read its public view, rate limited
 * and without a token) and `payments` (the merchant's list, detail and changes of its payments).
 */
import { Accounts, type Idempotency, type Payment, Payments } from "@cobro/core"
import { Effect } from "effect"
import * as Api from "../../Api.js"
import { ok } from "../../Envelope.js"
import { type Authentication, CurrentPrincipal } from "../../Security.js"
import type { PublicRateLimit } from "../rateLimit.js"
import { asPrincipal, domain, type GroupLive, group, ownList } from "./shared.js"
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
      .handle("create", ({ payload }) =>
        domain(Effect.map(payments.create(payload), (p) => ok("payment.created", toCreated(p))))
      )
      .handle("getPublic", ({ path }) =>
        Effect.map(domain(payments.getPublic(path.paymentId)), (view) => ok("payment.found", view))
      )
  })
)

/** A payment as SPEC shows it, with the merchant's `user_info` (the detailed read). */
const detailOf = (payment: Payment.Payment, accounts: Accounts.Accounts) =>
  Effect.map(accounts.getUser(payment.user_id), (user) => ({
    ...payment,
    user_info: {
      email: user.email,
      fiat_payments_enabled: true,
      payment_notifications: payment.webhook_url !== null,
      user_id: user.user_id,
      provider: "cobro",
      payment_url: payment.payment_url,
      payment_options: payment.payment_options,
      expiration_timestamp: payment.expiration_timestamp,
      transactions: payment.transactions
    }
  }))

export const PaymentsLive: GroupLive<"payments", Payments.Payments | Accounts.Accounts | Authentication> =
  group("payments", (handlers) =>
    Effect.gen(function* () {
      const payments = yield* Payments.Payments
      const accounts = yield* Accounts.Accounts
      return handlers
        .handle("list", ({ urlParams }) =>
          Effect.gen(function* () {
            const principal = yield* CurrentPrincipal
            yield* ownList(principal, urlParams.user_id)
            return yield* streamedList(
              "payments.found",
              "payments",
              Api.PaymentSummary,
              payments.list(principal.user_id, urlParams)
            )
          })
        )
        .handle("get", ({ path }) =>
          asPrincipal((principal) =>
            payments.get(principal.user_id, path.paymentId).pipe(
              Effect.flatMap((payment) => detailOf(payment, accounts)),
              Effect.map((detail) => ok("payment.found", detail))
            )
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
    })
  )
