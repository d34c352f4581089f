/**
 * `Cobro`, the Promise client: one method per route of the API, typed from the OpenAPI document,
 * each answering the route's whole JSON body (the envelope, as curl shows it) and throwing
 * `CobroError` for an error answer and `CobroNetworkError` when no answer came. `api` is the
 * underlying openapi-fetch client, for any route by its path, with the same tokens, keys and
 * retries.
 */
import createClient, { type Client } from "openapi-fetch"
import type { paths } from "./generated/openapi.js"
import { type RetryOptions, retryPolicy } from "./internal/backoff.js"
import { type CallOptions, callInit, randomKey, recordMethod, unwrap } from "./internal/call.js"
import { paginate } from "./internal/pages.js"
import { type Credentials, fixed, fromCredentials } from "./internal/tokens.js"
import { type Fetch, send, type TransportOptions } from "./internal/transport.js"

export type { Credentials } from "./internal/tokens.js"
export type { RetryOptions } from "./internal/backoff.js"
export type { CallOptions } from "./internal/call.js"

export interface CobroOptions {
  /** The server's address, with the prefix it is mounted under if any: `https://pay.example.com/api/cobro`. */
  readonly baseUrl: string
  /**
   * The merchant's credentials: the client fetches a token with them when first needed, replaces
   * it before it expires, and fetches a new one once after a 401.
   */
  readonly credentials?: Credentials
  /** A token to send as is instead (a partner's `PAR-` token): never refreshed. */
  readonly token?: string
  /**
   * The merchant the client acts for, where a route takes a `user_id` (`listPayments`,
   * `getBalance`, …) and none is given. Default: `credentials.userId`.
   */
  readonly userId?: string
  /** Retries of GET, HEAD and idempotent POSTs on network errors and 5xx (default 3, 200 ms to 5 s). */
  readonly retry?: RetryOptions
  /** Each attempt's time limit in milliseconds, until the answer's headers. Default 30 000. */
  readonly timeoutMs?: number
  /** The `fetch` to send with (default: the global one), for proxies, instrumentation and tests. */
  readonly fetch?: Fetch
  /** Headers added to every request (a `User-Agent` of your own, say). */
  readonly headers?: Record<string, string>
  /** The clock, in epoch milliseconds, that token expiries are measured on. Default `Date.now`. */
  readonly now?: () => number
  /** Randomness in [0, 1) for the backoff's jitter. Default `Math.random`. */
  readonly random?: () => number
}

type Method = "get" | "put" | "post" | "patch"

/** The JSON body a route takes. */
export type RequestBody<P extends keyof paths, M extends Method> =
  NonNullable<paths[P][M]> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never

/** The query parameters a route takes, `user_id` optional (the client's merchant by default). */
export type MerchantQuery<P extends keyof paths, M extends Method> = Omit<Query<P, M>, "user_id"> & {
  readonly user_id?: string
}

/** The query parameters a route takes. */
export type Query<P extends keyof paths, M extends Method> =
  NonNullable<paths[P][M]> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never

export class Cobro {
  /** The openapi-fetch client, for any route by its path (answers `{ data, error, response }`). */
  readonly api: Client<paths>
  /** The merchant the client acts for by default (`userId`, else `credentials.userId`). */
  readonly userId: string | undefined

  constructor(options: CobroOptions) {
    if (options.credentials !== undefined && options.token !== undefined) {
      throw new TypeError("Cobro: give either credentials or a token, not both")
    }
    this.userId = options.userId ?? options.credentials?.userId
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request))
    const transport: TransportOptions = {
      fetch: async (request) => {
        const response = await baseFetch(request)
        recordMethod(response, request.method)
        return response
      },
      basePath: new URL(baseUrl, "http://base.invalid").pathname,
      retry: retryPolicy(options.retry),
      timeoutMs: options.timeoutMs ?? 30_000,
      random: options.random ?? Math.random,
      idempotencyKey: randomKey
    }
    const now = options.now ?? (() => Date.now())
    const credentials = options.credentials
    if (credentials !== undefined) {
      const url = `${baseUrl}/users/${encodeURIComponent(credentials.userId)}/tokens`
      transport.tokens = fromCredentials(
        async () => {
          const request = new Request(url, {
            method: "POST",
            headers: { ...options.headers, "content-type": "application/json" },
            body: JSON.stringify({ client_id: credentials.clientId, client_secret: credentials.clientSecret })
          })
          // Minting a second token harms nothing: the token request is retried like a GET.
          const response = await send(transport, request, { bearer: false, retryable: true })
          const text = await response.text()
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON: the error keeps the text
          }
          return { status: response.status, body }
        },
        { method: "POST", url },
        now
      )
    } else if (options.token !== undefined) {
      transport.tokens = fixed(options.token)
    }
    this.api = createClient<paths>({
      baseUrl,
      fetch: (request: Request) => send(transport, request),
      ...(options.headers === undefined ? {} : { headers: options.headers })
    })
  }

  // --- payments ---------------------------------------------------------------------------------

  /** POST /payments/: a payment with its own CVU and alias (public: the body's `user_id` names the merchant). */
  createPayment(body: RequestBody<"/payments/", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/payments/", { body, ...callInit(options) }))
  }

  /** The `user_id` given, else the client's merchant. */
  private merchant(userId: string | undefined, method: string): string {
    const id = userId ?? this.userId
    if (id === undefined)
      throw new TypeError(
        `Cobro.${method}: give a user_id (the client has no credentials or userId to default to)`
      )
    return id
  }

  /** GET /payments/: a merchant's payments (the client's own when `user_id` is not given). */
  listPayments(query: MerchantQuery<"/payments/", "get"> = {}, options?: CallOptions) {
    const user_id = this.merchant(query.user_id, "listPayments")
    return unwrap(
      this.api.GET("/payments/", { params: { query: { ...query, user_id } }, ...callInit(options) })
    )
  }

  /** GET /payments/{paymentId}: the whole payment. */
  getPayment(paymentId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/payments/{paymentId}", { params: { path: { paymentId } }, ...callInit(options) })
    )
  }

  /** GET /payments/{paymentId}/public: the payment as its payer sees it (public). */
  getPublicPayment(paymentId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/payments/{paymentId}/public", { params: { path: { paymentId } }, ...callInit(options) })
    )
  }

  /** PUT /payments/{paymentId}/expiration: a later expiry for a pending payment (answers the bare payment). */
  extendPaymentExpiration(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/expiration", "put">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.PUT("/payments/{paymentId}/expiration", {
        params: { path: { paymentId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** PUT /payments/{paymentId}/price: a new price (answers the bare payment). */
  repricePayment(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/price", "put">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.PUT("/payments/{paymentId}/price", {
        params: { path: { paymentId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** PUT /payments/{paymentId}/metadata: a new `motive` (answers `null`; read the payment to see it). */
  updatePaymentMetadata(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/metadata", "put">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.PUT("/payments/{paymentId}/metadata", {
        params: { path: { paymentId } },
        body,
        ...callInit(options)
      })
    )
  }

  /**
   * POST /payments/{paymentId}/refunds: sends a paid payment's money (FULL: what is left; PARTIAL:
   * `amount`) back to the account it came from. Retries reuse one `Idempotency-Key`.
   */
  refundPayment(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/refunds", "post">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.POST("/payments/{paymentId}/refunds", {
        params: { path: { paymentId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** GET /payments/{paymentId}/refunds: the payment's refunds, oldest first. */
  listRefunds(paymentId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/payments/{paymentId}/refunds", { params: { path: { paymentId } }, ...callInit(options) })
    )
  }

  /** GET /payments/{paymentId}/refunds/{refundId}: one refund, with its status. */
  getRefund(paymentId: string, refundId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/payments/{paymentId}/refunds/{refundId}", {
        params: { path: { paymentId, refundId } },
        ...callInit(options)
      })
    )
  }

  // --- customers --------------------------------------------------------------------------------

  /** POST /customers/: a fixed customer with a permanent CVU and alias. */
  createCustomer(body: RequestBody<"/customers/", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/customers/", { body, ...callInit(options) }))
  }

  /** GET /customers/: a merchant's customers (the client's own when `user_id` is not given). */
  listCustomers(query: MerchantQuery<"/customers/", "get"> = {}, options?: CallOptions) {
    const user_id = this.merchant(query.user_id, "listCustomers")
    return unwrap(
      this.api.GET("/customers/", { params: { query: { ...query, user_id } }, ...callInit(options) })
    )
  }

  /** GET /customers/{customer_id}: one fixed customer. */
  getCustomer(customerId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/customers/{customer_id}", {
        params: { path: { customer_id: customerId } },
        ...callInit(options)
      })
    )
  }

  /** GET /customers/{customer_id}/transactions: one page of a customer's transfers, newest first. */
  listCustomerTransactions(
    customerId: string,
    query: Query<"/customers/{customer_id}/transactions", "get"> = {},
    options?: CallOptions
  ) {
    return unwrap(
      this.api.GET("/customers/{customer_id}/transactions", {
        params: { path: { customer_id: customerId }, query },
        ...callInit(options)
      })
    )
  }

  /** Every transfer of a customer, newest first, page after page: `for await (const t of …)`. */
  allCustomerTransactions(
    customerId: string,
    query: Query<"/customers/{customer_id}/transactions", "get"> = {},
    options?: CallOptions
  ) {
    return paginate(async (cursor) => {
      const page = await this.listCustomerTransactions(
        customerId,
        { ...query, ...(cursor === undefined ? {} : { cursor }) },
        options
      )
      return { items: page.data.transactions, next: page.data.next_cursor }
    }, query.cursor)
  }

  /** PATCH /customers/{customer_id}/alias: a new alias, on the same CVU or a new one. */
  changeCustomerAlias(
    customerId: string,
    body: RequestBody<"/customers/{customer_id}/alias", "patch">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.PATCH("/customers/{customer_id}/alias", {
        params: { path: { customer_id: customerId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** GET /customers/{customer_id}/transactions/{transaction_id}: one transfer of a customer. */
  getCustomerTransaction(customerId: string, transactionId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/customers/{customer_id}/transactions/{transaction_id}", {
        params: { path: { customer_id: customerId, transaction_id: transactionId } },
        ...callInit(options)
      })
    )
  }

  // --- partners, accounts and payout schedules --------------------------------------------------

  /** POST /auth/tokens: a partner exchanges an onboarding code for the user's `PAR-` token (never retried: a code works once). */
  exchangeCode(body: RequestBody<"/auth/tokens", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/auth/tokens", { body, ...callInit(options) }))
  }

  /** GET /users/{user_id}/account: the account's configuration (partner token). */
  getAccount(userId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/users/{user_id}/account", {
        params: { path: { user_id: userId } },
        ...callInit(options)
      })
    )
  }

  /** PATCH /users/{user_id}: the account's alias prefix and cancellation periods. */
  updateAccount(userId: string, body: RequestBody<"/users/{user_id}", "patch">, options?: CallOptions) {
    return unwrap(
      this.api.PATCH("/users/{user_id}", {
        params: { path: { user_id: userId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** POST /transactions/schedules: an automatic payout schedule. */
  createSchedule(body: RequestBody<"/transactions/schedules", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/transactions/schedules", { body, ...callInit(options) }))
  }

  /** GET /transactions/schedules: the payout schedules. */
  listSchedules(options?: CallOptions) {
    return unwrap(this.api.GET("/transactions/schedules", { ...callInit(options) }))
  }

  /** GET /transactions/schedules/{schedule_id}: one payout schedule. */
  getSchedule(scheduleId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/transactions/schedules/{schedule_id}", {
        params: { path: { schedule_id: scheduleId } },
        ...callInit(options)
      })
    )
  }

  /** PATCH /transactions/schedules/{schedule_id}: frequency, address or status. */
  updateSchedule(
    scheduleId: string,
    body: RequestBody<"/transactions/schedules/{schedule_id}", "patch">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.PATCH("/transactions/schedules/{schedule_id}", {
        params: { path: { schedule_id: scheduleId } },
        body,
        ...callInit(options)
      })
    )
  }

  // --- split payments (closed beta) -------------------------------------------------------------

  /** POST /split/payments: a split payment with its own CVU. */
  createSplitPayment(body: RequestBody<"/split/payments", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/split/payments", { body, ...callInit(options) }))
  }

  /** GET /split/payments/{split_payment_id}: its funds, hold and payouts. */
  getSplitPayment(splitPaymentId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/split/payments/{split_payment_id}", {
        params: { path: { split_payment_id: splitPaymentId } },
        ...callInit(options)
      })
    )
  }

  /** POST /split/payments/{split_payment_id}/payouts: the one payouts instruction (starts the hold). */
  instructPayouts(
    splitPaymentId: string,
    body: RequestBody<"/split/payments/{split_payment_id}/payouts", "post">,
    options?: CallOptions
  ) {
    return unwrap(
      this.api.POST("/split/payments/{split_payment_id}/payouts", {
        params: { path: { split_payment_id: splitPaymentId } },
        body,
        ...callInit(options)
      })
    )
  }

  /** POST /split/accounts: payout accounts, answered with one 2FA verification request. */
  createPayoutAccounts(body: RequestBody<"/split/accounts", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/split/accounts", { body, ...callInit(options) }))
  }

  /** GET /split/accounts: the payout accounts. */
  listPayoutAccounts(options?: CallOptions) {
    return unwrap(this.api.GET("/split/accounts", { ...callInit(options) }))
  }

  /** POST /split/accounts/verify: the 2FA code of a verification request. */
  verifyPayoutAccounts(body: RequestBody<"/split/accounts/verify", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/split/accounts/verify", { body, ...callInit(options) }))
  }

  /** POST /split/accounts/{account_id}/disable: no new payouts to the account. */
  disablePayoutAccount(accountId: string, options?: CallOptions) {
    return unwrap(
      this.api.POST("/split/accounts/{account_id}/disable", {
        params: { path: { account_id: accountId } },
        ...callInit(options)
      })
    )
  }

  // --- second factor (the merchant's own user token) ---------------------------------------------

  /** GET /users/{user_id}/second-factor: whether a factor is enrolled, and which. */
  getSecondFactor(userId?: string, options?: CallOptions) {
    const user_id = this.merchant(userId, "getSecondFactor")
    return unwrap(
      this.api.GET("/users/{user_id}/second-factor", { params: { path: { user_id } }, ...callInit(options) })
    )
  }

  /** POST /users/{user_id}/second-factor/totp: starts a TOTP enrolment (its secret and URI). */
  enrolTotp(
    body: RequestBody<"/users/{user_id}/second-factor/totp", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    const user_id = this.merchant(options?.userId, "enrolTotp")
    return unwrap(
      this.api.POST("/users/{user_id}/second-factor/totp", {
        params: { path: { user_id } },
        body,
        ...callInit(options)
      })
    )
  }

  /** POST /users/{user_id}/second-factor/email: starts an e-mail enrolment (a code is sent). */
  enrolEmail(
    body: RequestBody<"/users/{user_id}/second-factor/email", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    const user_id = this.merchant(options?.userId, "enrolEmail")
    return unwrap(
      this.api.POST("/users/{user_id}/second-factor/email", {
        params: { path: { user_id } },
        body,
        ...callInit(options)
      })
    )
  }

  /** POST /users/{user_id}/second-factor/confirm: confirms the enrolment with a code. */
  confirmSecondFactor(
    body: RequestBody<"/users/{user_id}/second-factor/confirm", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    const user_id = this.merchant(options?.userId, "confirmSecondFactor")
    return unwrap(
      this.api.POST("/users/{user_id}/second-factor/confirm", {
        params: { path: { user_id } },
        body,
        ...callInit(options)
      })
    )
  }

  /** POST /users/{user_id}/second-factor/code: e-mails a code of the enrolled e-mail factor. */
  sendSecondFactorCode(userId?: string, options?: CallOptions) {
    const user_id = this.merchant(userId, "sendSecondFactorCode")
    return unwrap(
      this.api.POST("/users/{user_id}/second-factor/code", {
        params: { path: { user_id } },
        ...callInit(options)
      })
    )
  }

  /** POST /users/{user_id}/second-factor/remove: removes the factor (a code of it proves the owner). */
  removeSecondFactor(
    body: RequestBody<"/users/{user_id}/second-factor/remove", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    const user_id = this.merchant(options?.userId, "removeSecondFactor")
    return unwrap(
      this.api.POST("/users/{user_id}/second-factor/remove", {
        params: { path: { user_id } },
        body,
        ...callInit(options)
      })
    )
  }

  // --- balance and payouts -----------------------------------------------------------------------

  /** GET /users/{user_id}/balance: the merchant's balance (the client's own by default). */
  getBalance(userId?: string, options?: CallOptions) {
    const user_id = this.merchant(userId, "getBalance")
    return unwrap(
      this.api.GET("/users/{user_id}/balance", { params: { path: { user_id } }, ...callInit(options) })
    )
  }

  /** GET /transactions/payouts: one page of the merchant's payouts, newest first. */
  listPayouts(query: Query<"/transactions/payouts", "get"> = {}, options?: CallOptions) {
    return unwrap(this.api.GET("/transactions/payouts", { params: { query }, ...callInit(options) }))
  }

  /** Every payout, newest first, page after page: `for await (const payout of cobro.allPayouts())`. */
  allPayouts(query: Query<"/transactions/payouts", "get"> = {}, options?: CallOptions) {
    return paginate(async (cursor) => {
      const page = await this.listPayouts({ ...query, ...(cursor === undefined ? {} : { cursor }) }, options)
      return { items: page.data.payouts, next: page.data.next_cursor }
    }, query.cursor)
  }

  // --- webhook deliveries -------------------------------------------------------------------------

  /** GET /webhooks/deliveries: one page of the account's deliveries, oldest first, with their attempts. */
  listWebhookDeliveries(query: Query<"/webhooks/deliveries", "get"> = {}, options?: CallOptions) {
    return unwrap(this.api.GET("/webhooks/deliveries", { params: { query }, ...callInit(options) }))
  }

  /** Every delivery, oldest first, page after page: `for await (const d of cobro.allWebhookDeliveries())`. */
  allWebhookDeliveries(query: Query<"/webhooks/deliveries", "get"> = {}, options?: CallOptions) {
    return paginate(async (after) => {
      const page = await this.listWebhookDeliveries(
        { ...query, ...(after === undefined ? {} : { after }) },
        options
      )
      return { items: page.data.deliveries, next: page.data.next_after }
    }, query.after)
  }

  /** GET /webhooks/deliveries/{event_id}: one delivery and its attempts. */
  getWebhookDelivery(eventId: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/webhooks/deliveries/{event_id}", {
        params: { path: { event_id: eventId } },
        ...callInit(options)
      })
    )
  }

  /** POST /webhooks/deliveries/{event_id}/replay: sends the event again. */
  replayWebhookDelivery(eventId: string, options?: CallOptions) {
    return unwrap(
      this.api.POST("/webhooks/deliveries/{event_id}/replay", {
        params: { path: { event_id: eventId } },
        ...callInit(options)
      })
    )
  }

  // --- sandbox ----------------------------------------------------------------------------------

  /** POST /cvu/{cvu}/faucet (sandbox): a simulated incoming transfer to a CVU. */
  faucet(cvu: string, body: RequestBody<"/cvu/{cvu}/faucet", "post">, options?: CallOptions) {
    return unwrap(
      this.api.POST("/cvu/{cvu}/faucet", { params: { path: { cvu } }, body, ...callInit(options) })
    )
  }

  /** GET /sandbox/clock (sandbox): the merchant's test clock (its time and how far it is ahead). */
  getClock(options?: CallOptions) {
    return unwrap(this.api.GET("/sandbox/clock", { ...callInit(options) }))
  }

  /**
   * POST /sandbox/clock/advance (sandbox): moves the merchant's own test clock ahead by `seconds`,
   * or to the instant `to`; what falls due in between (expiries, payouts) runs.
   */
  advanceClock(body: RequestBody<"/sandbox/clock/advance", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/sandbox/clock/advance", { body, ...callInit(options) }))
  }

  /** POST /sandbox/bank-accounts (sandbox): a bank account of yours at the sandbox bank, for payouts and refunds. */
  registerBankAccount(body: RequestBody<"/sandbox/bank-accounts", "post">, options?: CallOptions) {
    return unwrap(this.api.POST("/sandbox/bank-accounts", { body, ...callInit(options) }))
  }

  /** GET /sandbox/bank-accounts (sandbox): your sandbox bank accounts. */
  listBankAccounts(options?: CallOptions) {
    return unwrap(this.api.GET("/sandbox/bank-accounts", { ...callInit(options) }))
  }

  /** GET /sandbox/bank-accounts/{cbu} (sandbox): one of them. */
  getBankAccount(cbu: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/sandbox/bank-accounts/{cbu}", { params: { path: { cbu } }, ...callInit(options) })
    )
  }

  /** DELETE /sandbox/bank-accounts/{cbu} (sandbox): removes it. */
  removeBankAccount(cbu: string, options?: CallOptions) {
    return unwrap(
      this.api.DELETE("/sandbox/bank-accounts/{cbu}", { params: { path: { cbu } }, ...callInit(options) })
    )
  }

  /** GET /sandbox/bank-accounts/{cbu}/transfers (sandbox): the transfers it received (payouts, refunds). */
  listBankAccountTransfers(cbu: string, options?: CallOptions) {
    return unwrap(
      this.api.GET("/sandbox/bank-accounts/{cbu}/transfers", {
        params: { path: { cbu } },
        ...callInit(options)
      })
    )
  }
}
