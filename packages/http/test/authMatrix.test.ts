/**
 * The authorization matrix: every route of `CobroApi` is either public or protected, and every
 * protected route refuses a missing, malformed, unknown or expired token with the right 401, keeps
 * one account's resources out of another account's reach, and tells user and partner tokens apart
 * where SPEC says so. Routes come from the API definition, so a new one cannot be forgotten.
 */
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import {
  Auth,
  BankAccount,
  Customer,
  Customers,
  Ids,
  Outbox,
  PaymentRequest,
  Payments,
  Principal,
  Refund,
  Refunds,
  Schedule,
  Schedules,
  SecondFactor,
  SecondFactors,
  Split,
  Splits
} from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { Faucet, SandboxAccount, SandboxAccounts, SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, Option, Schema, TestClock } from "effect"
import * as TestSecondFactors from "./secondFactors.js"
import { merchant, raw, serverLayer, tokenFor } from "./support.js"
import {
  apiRoutes,
  expectError,
  fillPath,
  request,
  type RawResponse,
  type Route,
  type Style,
  styleOf
} from "./apiRoutes.js"

// ---------------------------------------------------------------------------------------------
// A world of two merchants: A owns one resource of every kind, B owns nothing of A's

let worlds = 0

const registerPartner = (name: string) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name,
        redirect_url: "https://socio.example.com/callback"
      })
    )
  )

type Partner = Effect.Effect.Success<ReturnType<typeof registerPartner>>

const partnerToken = (partner: Partner, user: Ids.UserId) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const { code } = yield* auth.issueCode(partner.partner.partner_id, user)
    const grant = yield* auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: partner.client_id,
        client_secret: partner.client_secret
      })
    )
    return grant.access_token
  })

/** The merchants' CUIT (see `support.merchant`): the holder of their own bank accounts. */
const merchantCuit = BankAccount.makeCuit("30", "71234567")

const cbu = (n: number) => BankAccount.makeCbu("2850590", String(n).padStart(13, "0"))

const makeWorld = Effect.gen(function* () {
  const n = ++worlds
  const bank = yield* SandboxBank.SandboxBank
  const a = yield* merchant(`authz_a${n}`, { alias_prefix: `aa${n}` })
  const b = yield* merchant(`authz_b${n}`, { alias_prefix: `bb${n}` })
  const A = a.user.user_id
  const B = b.user.user_id
  const partner = yield* registerPartner(`Socio ${n}`)
  const otherPartner = yield* registerPartner(`Otro Socio ${n}`)
  const tokens = {
    aUser: yield* tokenFor(A, a.client_id, a.client_secret),
    aPartner: yield* partnerToken(partner, A),
    /** Another partner's token for A (same account, another partner). */
    aOtherPartner: yield* partnerToken(otherPartner, A),
    bUser: yield* tokenFor(B, b.client_id, b.client_secret),
    bPartner: yield* partnerToken(partner, B)
  }
  const asA = Principal.Principal.User({ user_id: A })
  const asAPartner = Principal.Principal.Partner({ user_id: A, partner_id: partner.partner.partner_id })

  const payment = yield* (yield* Payments.Payments).create(
    Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
      user_id: A,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      external_id: `order-${n}`
    })
  )

  const faucet = yield* Faucet.Faucet
  // A paid payment of A's, with a refund.
  const paid = yield* (yield* Payments.Payments).create(
    Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
      user_id: A,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      external_id: `paid-${n}`
    })
  )
  yield* faucet.send(A, paid.cvu, new Faucet.FaucetRequest({ amount: 1500 }))
  const refund = yield* (yield* Refunds.Refunds).create(
    A,
    paid.id,
    Schema.decodeUnknownSync(Refund.RefundRequest)({ refund_type: "PARTIAL", amount: "1.00" })
  )
  const customer = yield* (yield* Customers.Customers).create(
    A,
    Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
      user_id: A,
      alias: "cliente",
      customer_id: "c1",
      name: "Juan Cliente"
    })
  )
  yield* faucet.send(A, customer.bank_info.cvu, new Faucet.FaucetRequest({ amount: 100 }))
  const received = (yield* (yield* Outbox.Outbox).list(0, 100_000)).find(
    ({ event }) => event.type === "customer.payment_received" && event.user_id === A
  )
  const transaction_id = String(received?.event.payload["transactionId"])

  const splits = yield* Splits.Splits
  const split = yield* splits.create(
    asA,
    Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({ external_id: `split-${n}` })
  )
  yield* faucet.send(A, split.cvu, new Faucet.FaucetRequest({ amount: 100 }))

  const payee = (k: number) =>
    Effect.gen(function* () {
      const account = cbu(n * 10 + k)
      yield* bank.registerHolder({
        account,
        cuit: BankAccount.makeCuit("20", String(40000000 + n * 10 + k)),
        name: `Proveedor ${n}-${k}`
      })
      return account
    })
  const codeFor = (id: Ids.VerificationRequestId) =>
    Effect.map(
      Effect.flatMap(SecondFactor.SandboxSecondFactor, (s) => s.codeFor(id)),
      Option.getOrThrow
    )
  const accounts = (address: string) =>
    splits.createAccounts(asA, Schema.decodeUnknownSync(Split.PayoutAccountList)([{ address }]))
  const verified = yield* accounts(yield* payee(1))
  const active = yield* splits.verifyAccounts(
    asA,
    Schema.decodeUnknownSync(Split.VerifyAccountsRequest)({
      request_id: verified.request_id,
      code: yield* codeFor(verified.request_id)
    })
  )
  const pending = yield* accounts(yield* payee(2))

  const own = cbu(n * 10)
  yield* bank.registerHolder({ account: own, cuit: merchantCuit, name: `Tienda ${n}` })
  const schedule = yield* (yield* Schedules.Schedules).create(
    asAPartner,
    Schema.decodeUnknownSync(Schedule.CreateScheduleRequest)({
      schedule_type: "payout",
      frequency: "daily",
      payload: { address: own }
    })
  )

  // A webhook delivery of A's (its own event, with a webhook URL).
  const event = yield* Outbox.makeEvent({
    type: "payment.updated",
    user_id: A,
    webhook_url: "https://hooks.example.com/a",
    payload: { message: "Payment updated", paymentId: payment.id, externalId: `order-${n}` }
  })
  yield* (yield* Outbox.Outbox).append(event)

  // A's second factor: e-mail codes enrolled, another enrolment in progress (its code
  // `enrol_code`), and a code of the enrolled factor (`factor_code`) that changes it.
  const factors = yield* SecondFactors.SecondFactors
  const email = (yield* (yield* UserRepository.UserRepository).findById(A)).pipe(Option.getOrThrow).email
  yield* factors.enrolEmail(A, {})
  yield* factors.confirm(A, { code: yield* TestSecondFactors.lastCode(email) })
  yield* factors.sendFactorCode(A)
  yield* factors.enrolEmail(A, { current_code: yield* TestSecondFactors.lastCode(email) })
  const enrol_code = yield* TestSecondFactors.lastCode(email)
  yield* factors.sendFactorCode(A)
  const factor_code = yield* TestSecondFactors.lastCode(email)

  // A bank account A registered at the sandbox bank.
  const sandboxAccount = yield* (yield* SandboxAccounts.SandboxAccounts).register(
    A,
    new SandboxAccount.RegisterRequest({})
  )

  return {
    A,
    B,
    tokens,
    sandbox_cbu: sandboxAccount.cbu,
    event_id: event.event_id,
    payment_id: payment.id,
    payment_cvu: payment.cvu,
    payment_expiration: payment.expiration_timestamp,
    paid_payment_id: paid.id,
    refund_id: refund.refund_id,
    customer_id: customer.customer_id,
    transaction_id,
    split_payment_id: split.split_payment_id,
    account_id: active.accounts[0]!.account_id,
    pending_request_id: pending.request_id,
    pending_code: yield* codeFor(pending.request_id),
    schedule_id: schedule.schedule_id,
    own_address: own,
    enrol_code,
    factor_code
  }
})

type World = Effect.Effect.Success<typeof makeWorld>

// ---------------------------------------------------------------------------------------------
// The classification of every route

/** Routes SPEC lets anyone call (no Authorization header). */
const PUBLIC: ReadonlySet<string> = new Set([
  "POST /payments/",
  "GET /payments/:paymentId/public",
  "POST /users/:id/tokens",
  "POST /auth/tokens"
])

interface Call {
  readonly path: string
  readonly body?: unknown
}

interface Protected {
  /** A request the owner's token may make on A's resource (and that reaches the handler). */
  readonly call: (w: World) => Call
  /** The token of A that succeeds: its user token, or a partner token on partner-only routes. */
  readonly owner: "user" | "partner"
  /** The 403 a user token gets on routes that need a partner token (SPEC). */
  readonly userTokenRefused?: string
  /** The success body: an envelope, a status envelope, the bare payment or a CSV file. */
  readonly success: "envelope" | "status" | "bare" | "csv"
  /**
   * What B's token gets for the same request: an error key with its status (the route addresses
   * A's resource by id), or `list` (B's own list, without A's resource), or nothing to check.
   */
  readonly foreign:
    | { readonly status: number; readonly key: string }
    | { readonly list: (w: World, body: unknown) => ReadonlyArray<string> }
    | undefined
}

const notFound = (key: string) => ({ status: 404, key }) as const
const later = (w: World) => DateTime.formatIso(DateTime.add(w.payment_expiration, { days: 1 }))

const PROTECTED: Readonly<Record<string, Protected>> = {
  "GET /payments/": {
    call: (w) => ({ path: `/payments/?user_id=${w.A}` }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "GET /payments/:paymentId": {
    call: (w) => ({ path: fillPath("/payments/:paymentId", { paymentId: w.payment_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("payment.not.found")
  },
  "PUT /payments/:paymentId/expiration": {
    call: (w) => ({
      path: fillPath("/payments/:paymentId/expiration", { paymentId: w.payment_id }),
      body: { expiration_timestamp: later(w) }
    }),
    owner: "user",
    success: "bare",
    foreign: notFound("payment.not.found")
  },
  "PUT /payments/:paymentId/price": {
    call: (w) => ({
      path: fillPath("/payments/:paymentId/price", { paymentId: w.payment_id }),
      body: { amount: 2000, currency: "ARS" }
    }),
    owner: "user",
    success: "bare",
    foreign: notFound("payment.not.found")
  },
  "PUT /payments/:paymentId/metadata": {
    call: (w) => ({
      path: fillPath("/payments/:paymentId/metadata", { paymentId: w.payment_id }),
      body: { motive: "nuevo motivo" }
    }),
    owner: "user",
    success: "envelope",
    // docs/decisions/0003-payments.md: a non-owner's motive change is 403 (SPEC: "rejected"), not 404.
    foreign: { status: 403, key: "payment.metadata.forbidden" }
  },
  "POST /payments/:paymentId/refunds": {
    call: (w) => ({
      path: fillPath("/payments/:paymentId/refunds", { paymentId: w.paid_payment_id }),
      body: { refund_type: "PARTIAL", amount: "1.00", currency: "ARS" }
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("payment.not.found")
  },
  "GET /payments/:paymentId/refunds": {
    call: (w) => ({ path: fillPath("/payments/:paymentId/refunds", { paymentId: w.paid_payment_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("payment.not.found")
  },
  "GET /payments/:paymentId/refunds/:refundId": {
    call: (w) => ({
      path: fillPath("/payments/:paymentId/refunds/:refundId", {
        paymentId: w.paid_payment_id,
        refundId: w.refund_id
      })
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("payment.not.found")
  },
  "POST /customers/": {
    call: (w) => ({
      path: "/customers/",
      body: { user_id: w.A, alias: "otro", customer_id: "c2", name: "Otro Cliente" }
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "PATCH /customers/:customer_id/alias": {
    call: (w) => ({
      path: fillPath("/customers/:customer_id/alias", { customer_id: w.customer_id }),
      body: { alias: "nuevo", create_new_cvu: false }
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("customer.not.found")
  },
  "GET /customers/": {
    call: (w) => ({ path: `/customers/?user_id=${w.A}` }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "GET /customers/:customer_id/transactions/:transaction_id": {
    call: (w) => ({
      path: fillPath("/customers/:customer_id/transactions/:transaction_id", {
        customer_id: w.customer_id,
        transaction_id: w.transaction_id
      })
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("customer.not.found")
  },
  "GET /customers/:customer_id": {
    call: (w) => ({ path: fillPath("/customers/:customer_id", { customer_id: w.customer_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("customer.not.found")
  },
  "GET /customers/:customer_id/transactions": {
    call: (w) => ({ path: fillPath("/customers/:customer_id/transactions", { customer_id: w.customer_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("customer.not.found")
  },
  "GET /users/:user_id/balance": {
    call: (w) => ({ path: fillPath("/users/:user_id/balance", { user_id: w.A }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "GET /transactions/payouts": {
    call: (w) => ({ path: `/transactions/payouts?user_id=${w.A}` }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "GET /payments/export.csv": {
    call: (w) => ({ path: `/payments/export.csv?user_id=${w.A}` }),
    owner: "user",
    success: "csv",
    foreign: notFound("user.not.found")
  },
  "GET /customers/:customer_id/transactions/export.csv": {
    call: (w) => ({
      path: fillPath("/customers/:customer_id/transactions/export.csv", { customer_id: w.customer_id })
    }),
    owner: "user",
    success: "csv",
    foreign: notFound("customer.not.found")
  },
  "GET /transactions/payouts/export.csv": {
    call: (w) => ({ path: `/transactions/payouts/export.csv?user_id=${w.A}` }),
    owner: "user",
    success: "csv",
    foreign: notFound("user.not.found")
  },
  "GET /refunds/export.csv": {
    call: (w) => ({ path: `/refunds/export.csv?payment_id=${w.paid_payment_id}` }),
    owner: "user",
    success: "csv",
    foreign: notFound("payment.not.found")
  },
  "GET /users/:user_id/account": {
    call: (w) => ({ path: fillPath("/users/:user_id/account", { user_id: w.A }) }),
    owner: "partner",
    userTokenRefused: "account.partner_token.required",
    success: "status",
    foreign: notFound("user.not.found")
  },
  "PATCH /users/:user_id": {
    call: (w) => ({ path: fillPath("/users/:user_id", { user_id: w.A }), body: { cancellation_period: 24 } }),
    owner: "user",
    success: "status",
    foreign: notFound("user.not.found")
  },
  "POST /transactions/schedules": {
    call: (w) => ({
      path: "/transactions/schedules",
      body: { schedule_type: "payout", frequency: "weekly", payload: { address: w.own_address } }
    }),
    owner: "partner",
    userTokenRefused: "schedule.partner.required",
    success: "status",
    foreign: undefined
  },
  "GET /transactions/schedules": {
    call: () => ({ path: "/transactions/schedules" }),
    owner: "partner",
    success: "status",
    foreign: {
      list: (_, body) =>
        (body as { data: { schedules: ReadonlyArray<{ schedule_id: string }> } }).data.schedules.map(
          (s) => s.schedule_id
        )
    }
  },
  "GET /transactions/schedules/:schedule_id": {
    call: (w) => ({ path: fillPath("/transactions/schedules/:schedule_id", { schedule_id: w.schedule_id }) }),
    owner: "partner",
    success: "status",
    foreign: notFound("schedule.not.found")
  },
  "PATCH /transactions/schedules/:schedule_id": {
    call: (w) => ({
      path: fillPath("/transactions/schedules/:schedule_id", { schedule_id: w.schedule_id }),
      body: { frequency: "monthly" }
    }),
    owner: "partner",
    userTokenRefused: "schedule.partner.required",
    success: "status",
    foreign: notFound("schedule.not.found")
  },
  "POST /split/payments": {
    call: () => ({ path: "/split/payments", body: { external_id: "split-nuevo" } }),
    owner: "user",
    success: "envelope",
    foreign: undefined
  },
  "GET /split/payments/:split_payment_id": {
    call: (w) => ({
      path: fillPath("/split/payments/:split_payment_id", { split_payment_id: w.split_payment_id })
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("split_payment.not.found")
  },
  "POST /split/payments/:split_payment_id/payouts": {
    call: (w) => ({
      path: fillPath("/split/payments/:split_payment_id/payouts", { split_payment_id: w.split_payment_id }),
      body: { payouts: [{ account_id: w.account_id, amount: 10 }] }
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("split_payment.not.found")
  },
  "POST /split/accounts": {
    call: (w) => ({ path: "/split/accounts", body: [{ address: w.own_address }] }),
    owner: "user",
    success: "envelope",
    foreign: undefined
  },
  "POST /split/accounts/verify": {
    call: (w) => ({
      path: "/split/accounts/verify",
      body: { request_id: w.pending_request_id, code: w.pending_code }
    }),
    owner: "user",
    success: "envelope",
    foreign: notFound("verification_request.not.found")
  },
  "GET /users/:user_id/second-factor": {
    call: (w) => ({ path: `/users/${w.A}/second-factor` }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "POST /users/:user_id/second-factor/totp": {
    call: (w) => ({ path: `/users/${w.A}/second-factor/totp`, body: { current_code: w.factor_code } }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "POST /users/:user_id/second-factor/email": {
    call: (w) => ({ path: `/users/${w.A}/second-factor/email`, body: { current_code: w.factor_code } }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "POST /users/:user_id/second-factor/confirm": {
    call: (w) => ({ path: `/users/${w.A}/second-factor/confirm`, body: { code: w.enrol_code } }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "POST /users/:user_id/second-factor/code": {
    call: (w) => ({ path: `/users/${w.A}/second-factor/code` }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "POST /users/:user_id/second-factor/remove": {
    call: (w) => ({ path: `/users/${w.A}/second-factor/remove`, body: { code: w.factor_code } }),
    owner: "user",
    success: "envelope",
    foreign: notFound("user.not.found")
  },
  "GET /split/accounts": {
    call: () => ({ path: "/split/accounts" }),
    owner: "user",
    success: "envelope",
    foreign: {
      list: (_, body) =>
        (body as { data: { accounts: ReadonlyArray<{ account_id: string }> } }).data.accounts.map(
          (a) => a.account_id
        )
    }
  },
  "POST /split/accounts/:account_id/disable": {
    call: (w) => ({ path: fillPath("/split/accounts/:account_id/disable", { account_id: w.account_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("payout_account.not.found")
  },
  "POST /cvu/:cvu/faucet": {
    call: (w) => ({ path: fillPath("/cvu/:cvu/faucet", { cvu: w.payment_cvu }), body: { amount: 1500 } }),
    owner: "user",
    success: "envelope",
    foreign: notFound("cvu.not.found")
  },
  "POST /sandbox/bank-accounts": {
    call: () => ({ path: "/sandbox/bank-accounts", body: {} }),
    owner: "user",
    success: "envelope",
    foreign: undefined
  },
  "GET /sandbox/bank-accounts": {
    call: () => ({ path: "/sandbox/bank-accounts" }),
    owner: "user",
    success: "envelope",
    foreign: {
      list: (_, body) =>
        (body as { data: { accounts: ReadonlyArray<{ cbu: string }> } }).data.accounts.map((a) => a.cbu)
    }
  },
  "GET /sandbox/bank-accounts/:cbu": {
    call: (w) => ({ path: fillPath("/sandbox/bank-accounts/:cbu", { cbu: w.sandbox_cbu }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("sandbox_bank_account.not.found")
  },
  "GET /sandbox/bank-accounts/:cbu/transfers": {
    call: (w) => ({ path: fillPath("/sandbox/bank-accounts/:cbu/transfers", { cbu: w.sandbox_cbu }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("sandbox_bank_account.not.found")
  },
  "DELETE /sandbox/bank-accounts/:cbu": {
    call: (w) => ({ path: fillPath("/sandbox/bank-accounts/:cbu", { cbu: w.sandbox_cbu }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("sandbox_bank_account.not.found")
  },
  "GET /sandbox/clock": {
    call: () => ({ path: "/sandbox/clock" }),
    owner: "user",
    success: "envelope",
    foreign: undefined
  },
  "POST /sandbox/clock/advance": {
    call: () => ({ path: "/sandbox/clock/advance", body: { seconds: 1 } }),
    owner: "user",
    success: "envelope",
    foreign: undefined
  },
  "GET /webhooks/deliveries": {
    call: () => ({ path: "/webhooks/deliveries" }),
    owner: "user",
    success: "envelope",
    foreign: {
      list: (_, body) =>
        (body as { data: { deliveries: ReadonlyArray<{ event_id: string }> } }).data.deliveries.map(
          (d) => d.event_id
        )
    }
  },
  "GET /webhooks/deliveries/:event_id": {
    call: (w) => ({ path: fillPath("/webhooks/deliveries/:event_id", { event_id: w.event_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("webhook_delivery.not.found")
  },
  "POST /webhooks/deliveries/:event_id/replay": {
    call: (w) => ({ path: fillPath("/webhooks/deliveries/:event_id/replay", { event_id: w.event_id }) }),
    owner: "user",
    success: "envelope",
    foreign: notFound("webhook_delivery.not.found")
  }
}

/** What B's list must not contain: A's resource of that kind. */
const foreignIds = (w: World, route: Route): ReadonlyArray<string> =>
  route.path.startsWith("/transactions/schedules")
    ? [w.schedule_id]
    : route.path.startsWith("/webhooks/")
      ? [w.event_id]
      : route.path.startsWith("/sandbox/bank-accounts")
        ? [w.sandbox_cbu]
        : [w.account_id]

// ---------------------------------------------------------------------------------------------

const send = (route: Route, call: Call, authorization?: string) => {
  const base = request(route.method, call.path, call.body)
  return raw(
    authorization === undefined ? base : HttpClientRequest.setHeader(base, "authorization", authorization)
  )
}

const expectSuccess = (response: RawResponse, success: Protected["success"], where: string) => {
  const body = response.body as Record<string, unknown>
  expect(response.status, `${where}: ${response.text.slice(0, 300)}`).toBe(200)
  if (success === "envelope")
    expect(body).toMatchObject({ error: false, code: 200, message: expect.any(String) })
  else if (success === "status") expect(body).toMatchObject({ status: "success", error: false })
  else if (success === "csv") expect(response.text).toMatch(/^[a-z_]+(,[a-z_]+)+\r\n/)
  else expect(body).toMatchObject({ id: expect.any(String), payment_status: expect.any(String) })
}

layer(serverLayer({ rateLimits: false }))((it) => {
  describe("route classification", () => {
    it("every route of CobroApi is either public or protected, and the lists name only real routes", () => {
      const ids = apiRoutes.map((r) => r.id)
      const unclassified = ids.filter((id) => !PUBLIC.has(id) && !(id in PROTECTED))
      const both = ids.filter((id) => PUBLIC.has(id) && id in PROTECTED)
      const stale = [...PUBLIC, ...Object.keys(PROTECTED)].filter((id) => !ids.includes(id))
      expect({ unclassified, both, stale }).toEqual({ unclassified: [], both: [], stale: [] })
      expect(new Set(ids).size).toBe(ids.length)
    })

    it("protected routes carry the bearer middleware and public routes none", () => {
      for (const route of apiRoutes)
        expect([route.id, route.secured]).toEqual([route.id, !PUBLIC.has(route.id)])
    })
  })

  describe("public routes need no token", () => {
    const calls: Record<string, Call> = {
      "POST /payments/": { path: "/payments/", body: {} },
      "GET /payments/:paymentId/public": { path: "/payments/VAR-nobody-x/public" },
      "POST /users/:id/tokens": {
        path: "/users/nobody/tokens",
        body: { client_id: "c", client_secret: "s" }
      },
      "POST /auth/tokens": { path: "/auth/tokens", body: { code: "c", client_id: "c", client_secret: "s" } }
    }
    const expected: Record<string, readonly [number, string]> = {
      "POST /payments/": [400, "request.invalid"],
      "GET /payments/:paymentId/public": [404, "payment.not.found"],
      "POST /users/:id/tokens": [401, "auth.credentials.invalid"],
      "POST /auth/tokens": [401, "auth.credentials.invalid"]
    }
    for (const route of apiRoutes.filter((r) => PUBLIC.has(r.id))) {
      it.effect(`${route.id} answers without an Authorization header, in its envelope`, () =>
        Effect.gen(function* () {
          const call = calls[route.id]!
          const [status, key] = expected[route.id]!
          const response = yield* send(route, call)
          const body = response.body as { data?: { field?: string } }
          expectError(
            response,
            styleOf(route),
            status,
            key,
            body.data?.field === undefined ? {} : { field: body.data.field }
          )
        })
      )
    }
  })

  for (const route of apiRoutes.filter((r) => r.id in PROTECTED)) {
    const spec = PROTECTED[route.id]!
    const style: Style = styleOf(route)

    describe(route.id, () => {
      it.effect(`refuses missing, malformed and unknown tokens with a 401 ${style} envelope`, () =>
        Effect.gen(function* () {
          const w = yield* makeWorld
          const call = spec.call(w)
          expectError(yield* send(route, call), style, 401, "auth.token.missing")
          for (const header of ["Basic xyz", "Bearer", "Bearer  ", "bearer a b", "Token abc", "USR-abc"]) {
            expectError(yield* send(route, call, header), style, 401, "auth.token.malformed")
          }
          const unknown = [
            `Bearer USR-${"A".repeat(43)}`,
            `Bearer PAR-${"B".repeat(43)}`,
            "Bearer not-a-token",
            // A real token with one character changed.
            `Bearer ${w.tokens.aUser.slice(0, -1)}${w.tokens.aUser.endsWith("A") ? "B" : "A"}`
          ]
          for (const header of unknown)
            expectError(yield* send(route, call, header), style, 401, "auth.token.invalid")
        })
      )

      it.effect("refuses a user token one hour after it was issued (auth.token.expired)", () =>
        Effect.gen(function* () {
          const w = yield* makeWorld
          const call = spec.call(w)
          const token = w.tokens.aUser
          // Still valid just before the hour (a 403 on partner-only routes, never a 401).
          yield* TestClock.adjust(Duration.minutes(59))
          expect((yield* send(route, call, `Bearer ${token}`)).status).not.toBe(401)
          yield* TestClock.adjust(Duration.minutes(1))
          expectError(yield* send(route, call, `Bearer ${token}`), style, 401, "auth.token.expired")
          yield* TestClock.adjust(Duration.hours(5))
          expectError(yield* send(route, call, `Bearer ${token}`), style, 401, "auth.token.expired")
        })
      )

      const foreign = spec.foreign
      if (foreign !== undefined) {
        it.effect("keeps the first account's resource out of another account's reach", () =>
          Effect.gen(function* () {
            const w = yield* makeWorld
            const call = spec.call(w)
            for (const token of [w.tokens.bUser, w.tokens.bPartner]) {
              const response = yield* send(route, call, `Bearer ${token}`)
              if ("list" in foreign) {
                expect(response.status).toBe(200)
                const ids = foreign.list(w, response.body)
                for (const id of foreignIds(w, route)) expect(ids).not.toContain(id)
              } else if (spec.userTokenRefused !== undefined && token === w.tokens.bUser) {
                // A user token is refused before ownership is looked at.
                expectError(response, style, 403, spec.userTokenRefused)
              } else {
                expectError(response, style, foreign.status, foreign.key)
              }
            }
            // The same request with the owner's token works: the resource exists and is A's.
            const owner = spec.owner === "partner" ? w.tokens.aPartner : w.tokens.aUser
            const response = yield* send(route, call, `Bearer ${owner}`)
            expectSuccess(response, spec.success, route.id)
            if ("list" in foreign) {
              for (const id of foreignIds(w, route)) expect(foreign.list(w, response.body)).toContain(id)
            }
          })
        )
      } else {
        it.effect("acts for the token's own account", () =>
          Effect.gen(function* () {
            const w = yield* makeWorld
            const owner = spec.owner === "partner" ? w.tokens.aPartner : w.tokens.aUser
            expectSuccess(yield* send(route, spec.call(w), `Bearer ${owner}`), spec.success, route.id)
          })
        )
      }
    })
  }

  describe("user tokens and partner tokens", () => {
    const route = (id: string) => apiRoutes.find((r) => r.id === id)!

    it.effect("GET /users/:user_id/account: 403 with a user token, 200 with a partner token", () =>
      Effect.gen(function* () {
        const w = yield* makeWorld
        const r = route("GET /users/:user_id/account")
        const call = PROTECTED[r.id]!.call(w)
        expectError(
          yield* send(r, call, `Bearer ${w.tokens.aUser}`),
          "status",
          403,
          "account.partner_token.required"
        )
        const ok = yield* send(r, call, `Bearer ${w.tokens.aPartner}`)
        expect(ok.status).toBe(200)
        expect(ok.body).toMatchObject({
          status: "success",
          error: false,
          data: { user_id: w.A, alias_prefix: expect.any(String) }
        })
        expect(Object.keys(ok.body as object).sort()).toEqual(["data", "error", "status"])
      })
    )

    it.effect("PATCH /users/:user_id takes the user's own token and a partner token", () =>
      Effect.gen(function* () {
        const w = yield* makeWorld
        const r = route("PATCH /users/:user_id")
        for (const [token, period] of [
          [w.tokens.aUser, 10],
          [w.tokens.aPartner, 20]
        ] as const) {
          const response = yield* send(
            r,
            { path: `/users/${w.A}`, body: { cancellation_period: period } },
            `Bearer ${token}`
          )
          expect(response.status).toBe(200)
          expect(response.body).toMatchObject({
            status: "success",
            error: false,
            data: { cancellation_period: period }
          })
        }
      })
    )

    it.effect("creating and patching a schedule: 403 with a user token, 200 with a partner token", () =>
      Effect.gen(function* () {
        const w = yield* makeWorld
        const create = route("POST /transactions/schedules")
        const patch = route("PATCH /transactions/schedules/:schedule_id")
        const createCall = PROTECTED[create.id]!.call(w)
        const patchCall = PROTECTED[patch.id]!.call(w)
        expectError(
          yield* send(create, createCall, `Bearer ${w.tokens.aUser}`),
          "status",
          403,
          "schedule.partner.required"
        )
        expectError(
          yield* send(patch, patchCall, `Bearer ${w.tokens.aUser}`),
          "status",
          403,
          "schedule.partner.required"
        )
        // Another partner of the same user may not change this partner's schedule (SPEC: 403).
        expectError(
          yield* send(patch, patchCall, `Bearer ${w.tokens.aOtherPartner}`),
          "status",
          403,
          "schedule.forbidden"
        )
        const patched = yield* send(patch, patchCall, `Bearer ${w.tokens.aPartner}`)
        expect(patched.status).toBe(200)
        expect(patched.body).toMatchObject({ status: "success", data: { frequency: "monthly" } })
        const created = yield* send(create, createCall, `Bearer ${w.tokens.aPartner}`)
        expect(created.status).toBe(200)
        expect(created.body).toMatchObject({ status: "success", data: { frequency: "weekly", user_id: w.A } })
      })
    )

    it.effect("a user token reads and lists its own schedules; another partner sees none of them", () =>
      Effect.gen(function* () {
        const w = yield* makeWorld
        const get = route("GET /transactions/schedules/:schedule_id")
        const list = route("GET /transactions/schedules")
        const call = PROTECTED[get.id]!.call(w)
        const own = yield* send(get, call, `Bearer ${w.tokens.aUser}`)
        expect(own.status).toBe(200)
        expect(own.body).toMatchObject({ status: "success", data: { schedule_id: w.schedule_id } })
        expectError(
          yield* send(get, call, `Bearer ${w.tokens.aOtherPartner}`),
          "status",
          404,
          "schedule.not.found"
        )
        const listed = yield* send(
          list,
          { path: "/transactions/schedules" },
          `Bearer ${w.tokens.aOtherPartner}`
        )
        expect(listed.body).toMatchObject({ status: "success", data: { schedules: [] } })
      })
    )
  })
})
