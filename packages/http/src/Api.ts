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
import { Schema, Struct } from "effect"
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
  target: Schema.NullOr(Schema.String),
  target_id: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String)
})

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})

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
      .setPayload(PaymentRequest.CreatePaymentRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(PaymentCreated))
  )
  .add(
    HttpApiEndpoint.get("getPublic", "/payments/:paymentId/public")
      .setPath(paymentId)
      .addSuccess(Envelope(Payment.PublicPayment))
  )
  .addError(EnvelopeErrors)
  .annotate(OpenApi.Title, "Public payment routes")
  .annotate(
    OpenApi.Description,
    "No Authorization header: POST /payments/ names the merchant in `user_id`."
  ) {}

export class Payments extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.get("list", "/payments/")
      .setUrlParams(ListPaymentsParams)
      .addSuccess(Envelope(Schema.Struct({ payments: Schema.Array(PaymentSummary) })))
  )
  .add(
    HttpApiEndpoint.get("get", "/payments/:paymentId").setPath(paymentId).addSuccess(Envelope(PaymentDetail))
  )
  .add(
    HttpApiEndpoint.put("extendExpiration", "/payments/:paymentId/expiration")
      .setPath(paymentId)
      .setPayload(PaymentRequest.ExtendExpirationRequest)
      .addSuccess(PaymentWire)
  )
  .add(
    HttpApiEndpoint.put("reprice", "/payments/:paymentId/price")
      .setPath(paymentId)
      .setPayload(PaymentRequest.RepriceRequest)
      .addSuccess(PaymentWire)
  )
  .add(
    HttpApiEndpoint.put("updateMetadata", "/payments/:paymentId/metadata")
      .setPath(paymentId)
      .setPayload(PaymentRequest.UpdateMetadataRequest)
      .addSuccess(Envelope(PaymentWire))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication) {}

export class Sandbox extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("faucet", "/cvu/:cvu/faucet")
      .setPath(Schema.Struct({ cvu: BankAccount.Cvu }))
      .setPayload(Faucet.FaucetRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(FaucetResult))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Sandbox only: simulates an incoming transfer to one of your CVUs.") {}

const customerId = Schema.Struct({ customer_id: Customer.CustomerId })

export class Customers extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/customers/")
      .setPayload(Customer.CreateCustomerRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Customer.CustomerCreated))
  )
  .add(
    HttpApiEndpoint.patch("changeAlias", "/customers/:customer_id/alias")
      .setPath(customerId)
      .setPayload(Customer.ChangeAliasRequest)
      .addSuccess(Envelope(Customer.CustomerAliasChanged))
  )
  .add(
    HttpApiEndpoint.get("list", "/customers/")
      .setUrlParams(ListCustomersParams)
      .addSuccess(Envelope(Schema.Struct({ customers: Schema.Array(Customer.CustomerSummary) })))
  )
  .add(
    HttpApiEndpoint.get("getTransaction", "/customers/:customer_id/transactions/:transaction_id")
      .setPath(Schema.Struct({ ...customerId.fields, transaction_id: Customer.CustomerTransactionId }))
      .addSuccess(Envelope(Customer.CustomerTransaction))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication) {}

export class UserTokens extends HttpApiGroup.make("userTokens")
  .add(
    HttpApiEndpoint.post("issue", "/users/:id/tokens")
      .setPath(Schema.Struct({ id: Ids.UserId }))
      .setPayload(Auth.TokenRequest)
      .addSuccess(Envelope(Auth.UserToken))
  )
  .addError(EnvelopeErrors) {}

export class PartnerTokens extends HttpApiGroup.make("partnerTokens")
  .add(
    HttpApiEndpoint.post("exchange", "/auth/tokens")
      .setPayload(Auth.CodeExchangeRequest)
      .addSuccess(StatusEnvelope(Auth.PartnerGrant))
  )
  .addError(StatusErrors) {}

const userId = Schema.Struct({ user_id: Ids.UserId })

export class UserAccounts extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("get", "/users/:user_id/account")
      .setPath(userId)
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .add(
    HttpApiEndpoint.patch("update", "/users/:user_id")
      .setPath(userId)
      .setPayload(Accounts.AccountPatch)
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication) {}

const scheduleId = Schema.Struct({ schedule_id: Ids.ScheduleId })

export class Schedules extends HttpApiGroup.make("schedules")
  .add(
    HttpApiEndpoint.post("create", "/transactions/schedules")
      .setPayload(Schedule.CreateScheduleRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.get("list", "/transactions/schedules").addSuccess(
      StatusEnvelope(Schema.Struct({ schedules: Schema.Array(Schedule.PayoutScheduleWire) }))
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/transactions/schedules/:schedule_id")
      .setPath(scheduleId)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.patch("update", "/transactions/schedules/:schedule_id")
      .setPath(scheduleId)
      .setPayload(Schedule.PatchScheduleRequest)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication) {}

const splitPaymentId = Schema.Struct({ split_payment_id: Ids.SplitPaymentId })

export class Splits extends HttpApiGroup.make("splits")
  .add(
    HttpApiEndpoint.post("create", "/split/payments")
      .setPayload(Split.CreateSplitPaymentRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.get("get", "/split/payments/:split_payment_id")
      .setPath(splitPaymentId)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("instructPayouts", "/split/payments/:split_payment_id/payouts")
      .setPath(splitPaymentId)
      .setPayload(Split.InstructPayoutsRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("createAccounts", "/split/accounts")
      .setPayload(Split.PayoutAccountList)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.post("verifyAccounts", "/split/accounts/verify")
      .setPayload(Split.VerifyAccountsRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.get("listAccounts", "/split/accounts").addSuccess(
      Envelope(Schema.Struct({ accounts: Schema.Array(Split.PayoutAccount) }))
    )
  )
  .add(
    HttpApiEndpoint.post("disableAccount", "/split/accounts/:account_id/disable")
      .setPath(Schema.Struct({ account_id: Ids.PayoutAccountId }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.PayoutAccount))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
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
