/**
 * The HTTP contract: every route of SPEC (plus DESIGN's extra split routes) with exactly the
 * request and response shapes SPEC gives. Handlers live in `internal/handlers/` (put together in
 * `Http.ts`); this module is what the OpenAPI document and the typed client are made from.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  Accounts,
  Auth,
  BankAccount,
  Customer,
  Faucet,
  Ids,
  Payment,
  PaymentRequest,
  Schedule,
  Split,
  Wire
} from "@cobro/core"
import type { Money } from "@cobro/core"
import { Option, Schema, Struct } from "effect"
import { envelopeError, statusError, statuses } from "./ApiError.js"
import { Envelope, StatusEnvelope } from "./Envelope.js"
import * as OpenApiFix from "./internal/openApi.js"
import { Authentication, PartnerAuthentication } from "./Security.js"

// ---------------------------------------------------------------------------------------------
// Wire shapes that are not core classes

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

/** GET /payments/{paymentId} `data`: the payment with `user_info`. */
export const PaymentDetail = Schema.Struct({ ...PaymentWire.fields, user_info: UserInfo })

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

export const ListCustomersParams = Schema.Struct({ user_id: Ids.UserId })

/** What the sandbox faucet did with the simulated transfer. */
export const FaucetResult = Schema.Struct({
  transaction_id: Schema.String,
  cvu: BankAccount.Cvu,
  amount: Schema.Number,
  currency: Schema.Literal("ARS"),
  sender_cuit: Schema.String,
  /** `credited` to a payment, customer or split; `bounced` back to the sender; `duplicate`. */
  outcome: Schema.Literal("credited", "bounced", "duplicate"),
  target: Wire.Omittable(Schema.String),
  target_id: Wire.Omittable(Schema.String),
  reason: Wire.Omittable(Schema.String)
})

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})

// ---------------------------------------------------------------------------------------------
// Request body examples

/**
 * The payload schema with the request body the API reference shows and its "Try it" sends,
 * written as on the wire. The example is decoded with the schema itself (the document carries
 * it encoded again): an example the schema refuses is left out rather than published, and
 * `test/openapi.test.ts` fails on every request body without a valid example.
 */
export const withExample = <A, I>(schema: Schema.Schema<A, I>, example: NoInfer<I>): Schema.Schema<A, I> => {
  const decoded = Schema.decodeUnknownOption(schema)(example)
  return Option.isSome(decoded) ? schema.annotations({ examples: [decoded.value] }) : schema
}

// ---------------------------------------------------------------------------------------------
// Errors: every status a route can answer with, in the route's envelope

/** The `{message, error, code, data}` error bodies, one member per status. */
export const EnvelopeErrors = Schema.Union(...statuses.map(envelopeError))

/** The `{status, error, message, data}` error bodies of partner and account routes. */
export const StatusErrors = Schema.Union(...statuses.map(statusError))

// ---------------------------------------------------------------------------------------------
// Routes

const paymentId = Schema.Struct({ paymentId: Ids.PaymentId })

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
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Payments")
  .annotate(
    OpenApi.Description,
    "One-off payments with their own CVU and alias. Creating one and the payer's view are public (POST /payments/ names the merchant in `user_id`); the rest needs the merchant's bearer token."
  ) {}

export class Sandbox extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("faucet", "/cvu/:cvu/faucet")
      .annotateContext(
        OpenApi.annotations({
          summary: "Simulate an incoming transfer (sandbox)",
          description:
            "Sends `amount` pesos to one of your CVUs (a payment's, a fixed customer's or a split payment's) as a payer's bank would, from `cuit` if given: the transfer is credited, or bounced to the sender when the CVU is closed. Only in sandbox mode."
        })
      )
      .setPath(Schema.Struct({ cvu: BankAccount.Cvu }))
      .setPayload(withExample(Faucet.FaucetRequest, { amount: 1500 }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(FaucetResult))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(OpenApi.Description, "Sandbox only: simulates an incoming transfer to one of your CVUs.") {}

const customerId = Schema.Struct({ customer_id: Customer.CustomerId })

export class Customers extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/customers/")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a fixed customer",
          description:
            "A fixed customer has a permanent CVU and an alias made of the account's `alias_prefix` and the `alias` suffix; every transfer to it updates its balance and sends its webhook. Needs the account's alias prefix (400 `user.alias.prefix.not.set` without it)."
        })
      )
      .setPayload(
        withExample(Customer.CreateCustomerRequest, {
          user_id: "demo",
          alias: "cliente-1",
          customer_id: "customer-1",
          name: "Juana Pérez"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Customer.CustomerCreated))
  )
  .add(
    HttpApiEndpoint.patch("changeAlias", "/customers/:customer_id/alias")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a fixed customer's alias",
          description:
            "With `create_new_cvu` true a new CVU is assigned and the old one released. With false the CVU is kept and the alias changed; when the bank refuses that, a new CVU is assigned instead."
        })
      )
      .setPath(customerId)
      .setPayload(withExample(Customer.ChangeAliasRequest, { alias: "cliente-1b", create_new_cvu: false }))
      .addSuccess(Envelope(Customer.CustomerAliasChanged))
  )
  .add(
    HttpApiEndpoint.get("list", "/customers/")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a merchant's fixed customers",
          description:
            "Every fixed customer of `user_id` (the token's own account) with its bank data and balance."
        })
      )
      .setUrlParams(ListCustomersParams)
      .addSuccess(Envelope(Schema.Struct({ customers: Schema.Array(Customer.CustomerSummary) })))
  )
  .add(
    HttpApiEndpoint.get("getTransaction", "/customers/:customer_id/transactions/:transaction_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a fixed customer's transaction",
          description:
            'One transfer a fixed customer received, with its amount, fees and date: what the "Customer payment received" webhook asks the receiver to confirm.'
        })
      )
      .setPath(Schema.Struct({ ...customerId.fields, transaction_id: Customer.CustomerTransactionId }))
      .addSuccess(Envelope(Customer.CustomerTransaction))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customers")
  .annotate(
    OpenApi.Description,
    "Fixed customers: a permanent CVU and alias per customer of the merchant."
  ) {}

export class UserTokens extends HttpApiGroup.make("userTokens")
  .add(
    HttpApiEndpoint.post("issue", "/users/:id/tokens")
      .annotateContext(
        OpenApi.annotations({
          summary: "Issue a user token",
          description:
            "Exchanges the merchant's `client_id` and `client_secret` for a bearer token (1 hour). Public: no Authorization header."
        })
      )
      .setPath(Schema.Struct({ id: Ids.UserId }))
      .setPayload(withExample(Auth.TokenRequest, { client_id: "cli_…", client_secret: "cs_…" }))
      .addSuccess(Envelope(Auth.UserToken))
  )
  .addError(EnvelopeErrors)
  .annotate(OpenApi.Title, "Authentication")
  .annotate(
    OpenApi.Description,
    "Bearer tokens: a merchant's (`USR-`) from its `client_id` and `client_secret`, a partner's (`PAR-`) from an onboarding code. Public routes."
  ) {}

export class PartnerTokens extends HttpApiGroup.make("partnerTokens")
  .add(
    HttpApiEndpoint.post("exchange", "/auth/tokens")
      .annotateContext(
        OpenApi.annotations({
          summary: "Exchange an onboarding code for a partner token",
          description:
            "The partner exchanges the single-use `code` (valid 5 minutes) it received at its redirect URL, with its own `client_id` and `client_secret`, for a `PAR-` token bound to the onboarded user."
        })
      )
      .setPayload(withExample(Auth.CodeExchangeRequest, { code: "…", client_id: "…", client_secret: "…" }))
      .addSuccess(StatusEnvelope(Auth.PartnerGrant))
  )
  .addError(StatusErrors)
  .annotate(OpenApi.Title, "Authentication") {}

const userId = Schema.Struct({ user_id: Ids.UserId })

export class UserAccounts extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("get", "/users/:user_id/account")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read an account's configuration",
          description:
            "Needs a partner token for that user (a user token is 403): status, alias prefix, cancellation periods, tolerance, payout schedule and the partner's commission."
        })
      )
      .setPath(userId)
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .add(
    HttpApiEndpoint.patch("update", "/users/:user_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change an account's configuration",
          description:
            "Needs a partner token. Only the fields sent change: `alias_prefix`, `cancellation_period` (hours, 1\u2013200), `cancellation_period_minutes` (5\u201320160, takes priority), `automatic_cancellation`. The account need not be active."
        })
      )
      .setPath(userId)
      .setPayload(
        withExample(Accounts.AccountPatch, {
          alias_prefix: "tienda",
          cancellation_period: 48,
          automatic_cancellation: true
        })
      )
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication)
  .annotate(OpenApi.Title, "Accounts")
  .annotate(OpenApi.Description, "An onboarded merchant's account configuration, with a partner token.") {}

const scheduleId = Schema.Struct({ schedule_id: Ids.ScheduleId })

export class Schedules extends HttpApiGroup.make("schedules")
  .add(
    HttpApiEndpoint.post("create", "/transactions/schedules")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a payout schedule",
          description:
            "Needs a partner token. Sweeps the merchant's available balance to `payload.address` (a CVU, CBU or alias whose holder is the merchant) `bi_daily`, `daily`, `weekly` or `monthly`, in Buenos Aires time."
        })
      )
      .setPayload(
        withExample(Schedule.CreateScheduleRequest, {
          schedule_type: "payout",
          frequency: "daily",
          payload: { address: "demo.payouts" }
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.get("list", "/transactions/schedules")
      .annotateContext(
        OpenApi.annotations({
          summary: "List payout schedules",
          description:
            "Needs a partner token: the payout schedules the calling partner created for the token's user."
        })
      )
      .addSuccess(StatusEnvelope(Schema.Struct({ schedules: Schema.Array(Schedule.PayoutScheduleWire) })))
  )
  .add(
    HttpApiEndpoint.get("get", "/transactions/schedules/:schedule_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a payout schedule",
          description: "Needs a partner token; only schedules the calling partner created."
        })
      )
      .setPath(scheduleId)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.patch("update", "/transactions/schedules/:schedule_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a payout schedule",
          description:
            "Needs a partner token. Changes `frequency`, `address` or `schedule_status`; another partner's schedule is 403."
        })
      )
      .setPath(scheduleId)
      .setPayload(withExample(Schedule.PatchScheduleRequest, { frequency: "weekly" }))
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication)
  .annotate(OpenApi.Title, "Schedules")
  .annotate(OpenApi.Description, "Payout schedules that sweep a merchant's balance, with a partner token.") {}

const splitPaymentId = Schema.Struct({ split_payment_id: Ids.SplitPaymentId })

export class Splits extends HttpApiGroup.make("splits")
  .add(
    HttpApiEndpoint.post("create", "/split/payments")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a split payment",
          description:
            "Closed beta. A dedicated CVU and alias that receives one or more transfers; the funds are distributed later to verified payout accounts."
        })
      )
      .setPayload(
        withExample(Split.CreateSplitPaymentRequest, {
          external_id: "split-1001",
          webhook_url: "https://example.com/webhooks/cobro"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.get("get", "/split/payments/:split_payment_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a split payment",
          description:
            "Closed beta. Its `payment_status`, the amount credited, `payout_status`, `hold_until` and the state of each payout."
        })
      )
      .setPath(splitPaymentId)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("instructPayouts", "/split/payments/:split_payment_id/payouts")
      .annotateContext(
        OpenApi.annotations({
          summary: "Instruct a split payment's payouts",
          description:
            "Closed beta. The single payouts instruction: amounts to verified, active payout accounts within the received balance. Starts the 12-hour hold (`hold_until`); the payouts run after it and their result is sent by webhook."
        })
      )
      .setPath(splitPaymentId)
      .setPayload(
        withExample(Split.InstructPayoutsRequest, { payouts: [{ account_id: "pa_…", amount: 1000 }] })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("createAccounts", "/split/accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create payout accounts",
          description:
            "Closed beta. Always a list, even of one account. Answers a verification request (`request_id`, `exp_timestamp`); one second-factor code verifies every account of the request."
        })
      )
      .setPayload(
        withExample(Split.PayoutAccountList, [{ address: "demo.payouts", label: "Cuenta principal" }])
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.post("verifyAccounts", "/split/accounts/verify")
      .annotateContext(
        OpenApi.annotations({
          summary: "Verify payout accounts",
          description:
            "Closed beta. The second-factor `code` of a verification request activates its accounts."
        })
      )
      .setPayload(withExample(Split.VerifyAccountsRequest, { request_id: "vr_…", code: "123456" }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.get("listAccounts", "/split/accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List payout accounts",
          description: "Closed beta. The account's payout accounts in every state."
        })
      )
      .addSuccess(Envelope(Schema.Struct({ accounts: Schema.Array(Split.PayoutAccount) })))
  )
  .add(
    HttpApiEndpoint.post("disableAccount", "/split/accounts/:account_id/disable")
      .annotateContext(
        OpenApi.annotations({
          summary: "Disable a payout account",
          description:
            "Closed beta. Blocks new payouts to the account; its history stays. To change an address, create and verify a new account."
        })
      )
      .setPath(Schema.Struct({ account_id: Ids.PayoutAccountId }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.PayoutAccount))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Splits")
  .annotate(
    OpenApi.Description,
    "Closed beta: split payments, verified payout accounts and the 12-hour hold."
  ) {}

/** The whole API. */
export class CobroApi extends HttpApi.make("cobro")
  .add(PublicPayments)
  .add(Payments)
  .add(Customers)
  .add(UserTokens)
  .add(PartnerTokens)
  .add(UserAccounts)
  .add(Schedules)
  .add(Splits)
  .add(Sandbox)
  .annotate(OpenApi.Title, "cobro")
  .annotate(OpenApi.Version, "1.0.0")
  // Every error leaves as an `ApiError` envelope: drop HttpApi's default decode-error body.
  .annotate(OpenApi.Transform, OpenApiFix.transform)
  .annotate(
    OpenApi.Description,
    "Bank-transfer payments for Argentina: one-off payments with their own CVU and alias, fixed customers, partner onboarding, payout schedules and split payments."
  ) {}
