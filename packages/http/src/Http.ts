/**
 * The handlers of every route in `Api.ts`: each decodes nothing itself (the API did), calls one
 * engine service as the authenticated principal and maps domain errors to `ApiError`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Accounts,
  Auth,
  Customer,
  Customers,
  Errors,
  Faucet,
  type Idempotency,
  Payment,
  PaymentRequest,
  Payments,
  Schedules,
  Split,
  Schedule,
  Splits,
  Transfers
} from "@cobro/core"
import { Chunk, Effect, Layer, Option, Schema, Stream } from "effect"
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Api from "./Api.js"
import { ApiError, fromDomain } from "./ApiError.js"
import { Envelope, ok, StatusEnvelope, success } from "./Envelope.js"
import type { HttpConfig } from "./HttpConfig.js"
import { idempotent } from "./internal/idempotent.js"
import * as RateLimit from "./internal/rateLimit.js"
import { CurrentPrincipal } from "./Security.js"

const domain = <A, R>(effect: Effect.Effect<A, Errors.DomainError, R>): Effect.Effect<A, ApiError, R> =>
  Effect.mapError(effect, fromDomain)

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0] ?? request.url

/**
 * An envelope whose `data.<field>` is an array written as the stream yields it, so a list of any
 * length is sent in constant memory. Callers check access before, so the stream only fails on a
 * storage defect (the connection is then cut, never a half-valid 200 that looks complete).
 *
 * Each chunk of `items` (a storage page) is encoded and written as one piece of the body, not one
 * piece per item. With a write per item, the items' buffers queued behind the socket lived long
 * enough to leave V8's young generation, and their memory came back only at a full collection:
 * the peak grew with the length of the list (GET /payments: 311 MB over 10,000 payments, 446 MB
 * over 100,000). With a write per page it is the same for both.
 */
const streamedList = <A, I, E>(
  message: string,
  field: string,
  item: Schema.Schema<A, I>,
  items: Stream.Stream<A, E>
): HttpServerResponse.HttpServerResponse => {
  const encode = Schema.encodeSync(item)
  const open = `{"message":${JSON.stringify(message)},"error":false,"code":200,"data":{${JSON.stringify(field)}:[`
  const body = Stream.make(open).pipe(
    Stream.concat(
      items.pipe(
        Stream.orDie,
        Stream.chunks,
        Stream.filter(Chunk.isNonEmpty),
        Stream.mapAccum(true, (first, chunk) => {
          let json = ""
          for (const value of chunk) json += `,${JSON.stringify(encode(value))}`
          return [false, first ? json.slice(1) : json] as const
        })
      )
    ),
    Stream.concat(Stream.make("]}}")),
    Stream.encodeText
  )
  return HttpServerResponse.stream(body, { contentType: "application/json" })
}

const ownList = (principal: { readonly user_id: string }, user_id: string) =>
  user_id === principal.user_id
    ? Effect.void
    : Effect.fail(ApiError.of(404, "user.not.found", `user ${user_id} not found`))

/** The reply schemas of the idempotent routes, built once (not per request). */
const replies = {
  paymentCreated: Envelope(Api.PaymentCreated),
  faucetResult: Envelope(Api.FaucetResult),
  customerCreated: Envelope(Customer.CustomerCreated),
  payoutScheduleWireStatus: StatusEnvelope(Schedule.PayoutScheduleWire),
  splitPaymentView: Envelope(Split.SplitPaymentView),
  verificationRequestView: Envelope(Split.VerificationRequestView),
  payoutAccount: Envelope(Split.PayoutAccount)
}

const toCreated = (payment: Payment.Payment): typeof Api.PaymentCreated.Type => ({
  id: payment.id,
  payment_status: payment.payment_status,
  quotes: payment.quotes.map((q) => ({ cvu: q.address, alias: q.alias })),
  payment_url: payment.payment_url,
  expiration_timestamp: payment.expiration_timestamp
})

const PublicPaymentsLive = HttpApiBuilder.group(Api.CobroApi, "publicPayments", (handlers) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          yield* RateLimit.check(request, "public", payload.user_id)
          return yield* idempotent({
            scope: `public:${payload.user_id}`,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(PaymentRequest.CreatePaymentRequest)(payload),
            schema: replies.paymentCreated,
            run: domain(Effect.map(payments.create(payload), (p) => ok("payment.created", toCreated(p))))
          })
        })
      )
      .handle("getPublic", ({ path, request }) =>
        Effect.gen(function* () {
          yield* RateLimit.check(request, "public", undefined)
          const view = yield* domain(payments.getPublic(path.paymentId))
          return ok("payment.found", view)
        })
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

const PaymentsLive = HttpApiBuilder.group(Api.CobroApi, "payments", (handlers) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const accounts = yield* Accounts.Accounts
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          yield* ownList(principal, urlParams.user_id)
          return streamedList(
            "payments.found",
            "payments",
            Api.PaymentSummary,
            payments.list(principal.user_id, urlParams)
          )
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const payment = yield* domain(payments.get(principal.user_id, path.paymentId))
          return ok("payment.found", yield* domain(detailOf(payment, accounts)))
        })
      )
      .handle("extendExpiration", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(payments.extendExpiration(principal.user_id, path.paymentId, payload))
        )
      )
      .handle("reprice", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(payments.reprice(principal.user_id, path.paymentId, payload))
        )
      )
      .handle("updateMetadata", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(
            Effect.map(payments.updateMotive(principal.user_id, path.paymentId, payload.motive), (p) =>
              ok("payment.metadata.updated", p)
            )
          )
        )
      )
  })
)

const SandboxLive = HttpApiBuilder.group(Api.CobroApi, "sandbox", (handlers) =>
  Effect.gen(function* () {
    const faucet = yield* Effect.serviceOption(Faucet.Faucet)
    return handlers.handle("faucet", ({ headers, path, payload, request }) =>
      Effect.gen(function* () {
        if (Option.isNone(faucet)) {
          return yield* ApiError.of(404, "route.not.found", "the faucet exists only in sandbox mode")
        }
        const principal = yield* CurrentPrincipal
        return yield* idempotent({
          scope: principal.user_id,
          key: headers["idempotency-key"],
          method: request.method,
          path: pathOf(request),
          body: () => Schema.encodeSync(Faucet.FaucetRequest)(payload),
          schema: replies.faucetResult,
          run: domain(
            Effect.map(faucet.value.send(principal.user_id, path.cvu, payload), ({ outcome, transfer }) =>
              ok("faucet.transfer.sent", faucetResult(transfer, outcome))
            )
          )
        })
      })
    )
  })
)

const faucetResult = (
  transfer: {
    readonly bank_transaction_id: string
    readonly cvu: (typeof Api.FaucetResult.Type)["cvu"]
    readonly amount: { readonly minor: bigint }
    readonly sender_cuit: string
  },
  outcome: Transfers.IngestOutcome
): typeof Api.FaucetResult.Type => ({
  transaction_id: transfer.bank_transaction_id,
  cvu: transfer.cvu,
  amount: Number(transfer.amount.minor) / 100,
  currency: "ARS",
  sender_cuit: transfer.sender_cuit,
  outcome: outcome._tag === "Credited" ? "credited" : outcome._tag === "Bounced" ? "bounced" : "duplicate",
  target: outcome._tag === "Credited" ? outcome.target : null,
  target_id: outcome._tag === "Credited" ? outcome.target_id : null,
  reason: outcome._tag === "Bounced" ? outcome.reason : null
})

const CustomersLive = HttpApiBuilder.group(Api.CobroApi, "customers", (handlers) =>
  Effect.gen(function* () {
    const customers = yield* Customers.Customers
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Customer.CreateCustomerRequest)(payload),
            schema: replies.customerCreated,
            run: domain(
              Effect.map(customers.create(principal.user_id, payload), (c) =>
                ok("customer.created", Customer.CustomerCreated.fromCustomer(c))
              )
            )
          })
        })
      )
      .handle("changeAlias", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(
            Effect.map(customers.changeAlias(principal.user_id, path.customer_id, payload), (c) =>
              ok("customer.alias.updated", Customer.CustomerAliasChanged.fromCustomer(c))
            )
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          yield* ownList(principal, urlParams.user_id)
          return streamedList(
            "customers.found",
            "customers",
            Customer.CustomerSummary,
            Stream.map(
              customers.list(principal.user_id, urlParams.user_id),
              Customer.CustomerSummary.fromCustomer
            )
          )
        })
      )
      .handle("getTransaction", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(
            Effect.map(
              customers.getTransaction(principal.user_id, path.customer_id, path.transaction_id),
              (t) => ok("customer.transaction.found", t)
            )
          )
        )
      )
  })
)

const UserTokensLive = HttpApiBuilder.group(Api.CobroApi, "userTokens", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    return handlers.handle("issue", ({ path, payload, request }) =>
      Effect.gen(function* () {
        yield* RateLimit.check(request, "tokens", `user:${path.id}`)
        return ok("token.issued", yield* domain(auth.issueUserToken(path.id, payload)))
      })
    )
  })
)

const PartnerTokensLive = HttpApiBuilder.group(Api.CobroApi, "partnerTokens", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    return handlers.handle("exchange", ({ payload, request }) =>
      Effect.gen(function* () {
        yield* RateLimit.check(request, "tokens", `client:${payload.client_id}`)
        return success(yield* domain(auth.exchangeCode(payload)))
      })
    )
  })
)

const AccountsLive = HttpApiBuilder.group(Api.CobroApi, "accounts", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts.Accounts
    return handlers
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(accounts.getAccount(principal, path.user_id), success))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(accounts.updateAccount(principal, path.user_id, payload), success))
        )
      )
  })
)

const SchedulesLive = HttpApiBuilder.group(Api.CobroApi, "schedules", (handlers) =>
  Effect.gen(function* () {
    const schedules = yield* Schedules.Schedules
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Schedule.CreateScheduleRequest)(payload),
            schema: replies.payoutScheduleWireStatus,
            run: domain(Effect.map(schedules.create(principal, payload), success))
          })
        })
      )
      .handle("list", () =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.list(principal), (list) => success({ schedules: list })))
        )
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.get(principal, path.schedule_id), success))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.patch(principal, path.schedule_id, payload), success))
        )
      )
  })
)

const SplitsLive = HttpApiBuilder.group(Api.CobroApi, "splits", (handlers) =>
  Effect.gen(function* () {
    const splits = yield* Splits.Splits
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Split.CreateSplitPaymentRequest)(payload),
            schema: replies.splitPaymentView,
            run: domain(Effect.map(splits.create(principal, payload), (v) => ok("split.created", v)))
          })
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(splits.get(principal, path.split_payment_id), (v) => ok("split.found", v)))
        )
      )
      .handle("instructPayouts", ({ headers, path, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Split.InstructPayoutsRequest)(payload),
            schema: replies.splitPaymentView,
            run: domain(
              Effect.map(splits.instructPayouts(principal, path.split_payment_id, payload), (v) =>
                ok("split.payouts.accepted", v)
              )
            )
          })
        })
      )
      .handle("createAccounts", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Split.PayoutAccountList)(payload),
            schema: replies.verificationRequestView,
            run: domain(
              Effect.map(splits.createAccounts(principal, payload), (v) => ok("payout_accounts.created", v))
            )
          })
        })
      )
      .handle("verifyAccounts", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => Schema.encodeSync(Split.VerifyAccountsRequest)(payload),
            schema: replies.verificationRequestView,
            run: domain(
              Effect.map(splits.verifyAccounts(principal, payload), (v) => ok("payout_accounts.verified", v))
            )
          })
        })
      )
      .handle("listAccounts", () =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(
            Effect.map(splits.listAccounts(principal), (accounts) =>
              ok("payout_accounts.found", { accounts })
            )
          )
        )
      )
      .handle("disableAccount", ({ headers, path, request }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* idempotent({
            scope: principal.user_id,
            key: headers["idempotency-key"],
            method: request.method,
            path: pathOf(request),
            body: () => null,
            schema: replies.payoutAccount,
            run: domain(
              Effect.map(splits.disableAccount(principal, path.account_id), (v) =>
                ok("payout_account.disabled", v)
              )
            )
          })
        })
      )
  })
)

/** Every group's handlers; needs the engine's services (the faucet only in sandbox mode). */
export const handlers = Layer.mergeAll(
  PublicPaymentsLive,
  PaymentsLive,
  SandboxLive,
  CustomersLive,
  UserTokensLive,
  PartnerTokensLive,
  AccountsLive,
  SchedulesLive,
  SplitsLive
)

/** The services the handlers use (the faucet is optional: present in sandbox mode). */
export type Requirements =
  | Payments.Payments
  | Accounts.Accounts
  | Customers.Customers
  | Auth.Auth
  | Schedules.Schedules
  | Splits.Splits
  | Idempotency.Idempotency
  | HttpConfig
  | RateLimiter.RateLimiter
