/**
 * `Cobro`, the Promise client: one method per route of the API, typed from the OpenAPI document,
 * each answering the route's whole JSON body (the envelope, as curl shows it) and throwing
 * `CobroError` for an error answer and `CobroNetworkError` when no answer came. `api` is the
 * underlying openapi-fetch client, for any route by its path, with the same tokens, keys and
 * retries.
 */
import * as accounts from "./internal/api/accounts.js"
import * as customers from "./internal/api/customers.js"
import * as exports from "./internal/api/exports.js"
import * as payments from "./internal/api/payments.js"
import * as payouts from "./internal/api/payouts.js"
import * as sandbox from "./internal/api/sandbox.js"
import * as secondFactor from "./internal/api/secondFactor.js"
import * as splits from "./internal/api/splits.js"
import * as webhooks from "./internal/api/webhooks.js"
import type { Client } from "openapi-fetch"
import type { paths } from "./generated/openapi.js"
import type { CallOptions } from "./internal/call.js"
import { type CobroOptions, connect } from "./internal/connect.js"
import type { MerchantQuery, Query, RequestBody } from "./internal/routeTypes.js"

export type { Credentials } from "./internal/tokens.js"
export type { RetryOptions } from "./internal/backoff.js"
export type { CallOptions } from "./internal/call.js"
export type { MerchantQuery, Query, RequestBody } from "./internal/routeTypes.js"
export type { CobroOptions } from "./internal/connect.js"
export type { ExportRequest } from "./internal/api/exports.js"

export class Cobro {
  /** The openapi-fetch client, for any route by its path (answers `{ data, error, response }`). */
  readonly api: Client<paths>
  /** The merchant the client acts for by default (`userId`, else `credentials.userId`). */
  readonly userId: string | undefined

  constructor(options: CobroOptions) {
    this.api = connect(options)
    this.userId = options.userId ?? options.credentials?.userId
  }

  // --- payments ---------------------------------------------------------------------------------

  /** POST /payments/: a payment with its own CVU and alias (public: the body's `user_id` names the merchant). */
  createPayment(body: RequestBody<"/payments/", "post">, options?: CallOptions) {
    return payments.createPayment(this.api, body, options)
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
    return payments.listPayments(this.api, this.merchant(query.user_id, "listPayments"), query, options)
  }

  /** GET /payments/{paymentId}: the whole payment. */
  getPayment(paymentId: string, options?: CallOptions) {
    return payments.getPayment(this.api, paymentId, options)
  }

  /** GET /payments/{paymentId}/public: the payment as its payer sees it (public). */
  getPublicPayment(paymentId: string, options?: CallOptions) {
    return payments.getPublicPayment(this.api, paymentId, options)
  }

  /** PUT /payments/{paymentId}/expiration: a later expiry for a pending payment (answers the bare payment). */
  extendPaymentExpiration(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/expiration", "put">,
    options?: CallOptions
  ) {
    return payments.extendPaymentExpiration(this.api, paymentId, body, options)
  }

  /** PUT /payments/{paymentId}/price: a new price (answers the bare payment). */
  repricePayment(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/price", "put">,
    options?: CallOptions
  ) {
    return payments.repricePayment(this.api, paymentId, body, options)
  }

  /** PUT /payments/{paymentId}/metadata: a new `motive` (answers `null`; read the payment to see it). */
  updatePaymentMetadata(
    paymentId: string,
    body: RequestBody<"/payments/{paymentId}/metadata", "put">,
    options?: CallOptions
  ) {
    return payments.updatePaymentMetadata(this.api, paymentId, body, options)
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
    return payments.refundPayment(this.api, paymentId, body, options)
  }

  /** GET /payments/{paymentId}/refunds: the payment's refunds, oldest first. */
  listRefunds(paymentId: string, options?: CallOptions) {
    return payments.listRefunds(this.api, paymentId, options)
  }

  /** GET /payments/{paymentId}/refunds/{refundId}: one refund, with its status. */
  getRefund(paymentId: string, refundId: string, options?: CallOptions) {
    return payments.getRefund(this.api, paymentId, refundId, options)
  }

  // --- customers --------------------------------------------------------------------------------

  /** POST /customers/: a fixed customer with a permanent CVU and alias. */
  createCustomer(body: RequestBody<"/customers/", "post">, options?: CallOptions) {
    return customers.createCustomer(this.api, body, options)
  }

  /** GET /customers/: a merchant's customers (the client's own when `user_id` is not given). */
  listCustomers(query: MerchantQuery<"/customers/", "get"> = {}, options?: CallOptions) {
    return customers.listCustomers(this.api, this.merchant(query.user_id, "listCustomers"), query, options)
  }

  /** GET /customers/{customer_id}: one fixed customer. */
  getCustomer(customerId: string, options?: CallOptions) {
    return customers.getCustomer(this.api, customerId, options)
  }

  /** GET /customers/{customer_id}/transactions: one page of a customer's transfers, newest first. */
  listCustomerTransactions(
    customerId: string,
    query: Query<"/customers/{customer_id}/transactions", "get"> = {},
    options?: CallOptions
  ) {
    return customers.listCustomerTransactions(this.api, customerId, query, options)
  }

  /** Every transfer of a customer, newest first, page after page: `for await (const t of …)`. */
  allCustomerTransactions(
    customerId: string,
    query: Query<"/customers/{customer_id}/transactions", "get"> = {},
    options?: CallOptions
  ) {
    return customers.allCustomerTransactions(this.api, customerId, query, options)
  }

  /** PATCH /customers/{customer_id}/alias: a new alias, on the same CVU or a new one. */
  changeCustomerAlias(
    customerId: string,
    body: RequestBody<"/customers/{customer_id}/alias", "patch">,
    options?: CallOptions
  ) {
    return customers.changeCustomerAlias(this.api, customerId, body, options)
  }

  /** GET /customers/{customer_id}/transactions/{transaction_id}: one transfer of a customer. */
  getCustomerTransaction(customerId: string, transactionId: string, options?: CallOptions) {
    return customers.getCustomerTransaction(this.api, customerId, transactionId, options)
  }

  // --- partners, accounts and payout schedules --------------------------------------------------

  /** POST /auth/tokens: a partner exchanges an onboarding code for the user's `PAR-` token (never retried: a code works once). */
  exchangeCode(body: RequestBody<"/auth/tokens", "post">, options?: CallOptions) {
    return accounts.exchangeCode(this.api, body, options)
  }

  /** GET /users/{user_id}/account: the account's configuration (partner token). */
  getAccount(userId: string, options?: CallOptions) {
    return accounts.getAccount(this.api, userId, options)
  }

  /** PATCH /users/{user_id}: the account's alias prefix and cancellation periods. */
  updateAccount(userId: string, body: RequestBody<"/users/{user_id}", "patch">, options?: CallOptions) {
    return accounts.updateAccount(this.api, userId, body, options)
  }

  /** POST /transactions/schedules: an automatic payout schedule. */
  createSchedule(body: RequestBody<"/transactions/schedules", "post">, options?: CallOptions) {
    return accounts.createSchedule(this.api, body, options)
  }

  /** GET /transactions/schedules: the payout schedules. */
  listSchedules(options?: CallOptions) {
    return accounts.listSchedules(this.api, options)
  }

  /** GET /transactions/schedules/{schedule_id}: one payout schedule. */
  getSchedule(scheduleId: string, options?: CallOptions) {
    return accounts.getSchedule(this.api, scheduleId, options)
  }

  /** PATCH /transactions/schedules/{schedule_id}: frequency, address or status. */
  updateSchedule(
    scheduleId: string,
    body: RequestBody<"/transactions/schedules/{schedule_id}", "patch">,
    options?: CallOptions
  ) {
    return accounts.updateSchedule(this.api, scheduleId, body, options)
  }

  // --- split payments (closed beta) -------------------------------------------------------------

  /** POST /split/payments: a split payment with its own CVU. */
  createSplitPayment(body: RequestBody<"/split/payments", "post">, options?: CallOptions) {
    return splits.createSplitPayment(this.api, body, options)
  }

  /** GET /split/payments/{split_payment_id}: its funds, hold and payouts. */
  getSplitPayment(splitPaymentId: string, options?: CallOptions) {
    return splits.getSplitPayment(this.api, splitPaymentId, options)
  }

  /** POST /split/payments/{split_payment_id}/payouts: the one payouts instruction (starts the hold). */
  instructPayouts(
    splitPaymentId: string,
    body: RequestBody<"/split/payments/{split_payment_id}/payouts", "post">,
    options?: CallOptions
  ) {
    return splits.instructPayouts(this.api, splitPaymentId, body, options)
  }

  /** POST /split/accounts: payout accounts, answered with one 2FA verification request. */
  createPayoutAccounts(body: RequestBody<"/split/accounts", "post">, options?: CallOptions) {
    return splits.createPayoutAccounts(this.api, body, options)
  }

  /** GET /split/accounts: the payout accounts. */
  listPayoutAccounts(options?: CallOptions) {
    return splits.listPayoutAccounts(this.api, options)
  }

  /** POST /split/accounts/verify: the 2FA code of a verification request. */
  verifyPayoutAccounts(body: RequestBody<"/split/accounts/verify", "post">, options?: CallOptions) {
    return splits.verifyPayoutAccounts(this.api, body, options)
  }

  /** POST /split/accounts/{account_id}/disable: no new payouts to the account. */
  disablePayoutAccount(accountId: string, options?: CallOptions) {
    return splits.disablePayoutAccount(this.api, accountId, options)
  }

  // --- second factor (the merchant's own user token) ---------------------------------------------

  /** GET /users/{user_id}/second-factor: whether a factor is enrolled, and which. */
  getSecondFactor(userId?: string, options?: CallOptions) {
    return secondFactor.getSecondFactor(this.api, this.merchant(userId, "getSecondFactor"), options)
  }

  /** POST /users/{user_id}/second-factor/totp: starts a TOTP enrolment (its secret and URI). */
  enrolTotp(
    body: RequestBody<"/users/{user_id}/second-factor/totp", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    return secondFactor.enrolTotp(this.api, this.merchant(options?.userId, "enrolTotp"), body, options)
  }

  /** POST /users/{user_id}/second-factor/email: starts an e-mail enrolment (a code is sent). */
  enrolEmail(
    body: RequestBody<"/users/{user_id}/second-factor/email", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    return secondFactor.enrolEmail(this.api, this.merchant(options?.userId, "enrolEmail"), body, options)
  }

  /** POST /users/{user_id}/second-factor/confirm: confirms the enrolment with a code. */
  confirmSecondFactor(
    body: RequestBody<"/users/{user_id}/second-factor/confirm", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    return secondFactor.confirmSecondFactor(
      this.api,
      this.merchant(options?.userId, "confirmSecondFactor"),
      body,
      options
    )
  }

  /** POST /users/{user_id}/second-factor/code: e-mails a code of the enrolled e-mail factor. */
  sendSecondFactorCode(userId?: string, options?: CallOptions) {
    return secondFactor.sendSecondFactorCode(this.api, this.merchant(userId, "sendSecondFactorCode"), options)
  }

  /** POST /users/{user_id}/second-factor/remove: removes the factor (a code of it proves the owner). */
  removeSecondFactor(
    body: RequestBody<"/users/{user_id}/second-factor/remove", "post">,
    options?: CallOptions & { readonly userId?: string }
  ) {
    return secondFactor.removeSecondFactor(
      this.api,
      this.merchant(options?.userId, "removeSecondFactor"),
      body,
      options
    )
  }

  // --- balance and payouts -----------------------------------------------------------------------

  /** GET /users/{user_id}/balance: the merchant's balance (the client's own by default). */
  getBalance(userId?: string, options?: CallOptions) {
    return payouts.getBalance(this.api, this.merchant(userId, "getBalance"), options)
  }

  /** GET /transactions/payouts: one page of the merchant's payouts, newest first. */
  listPayouts(query: Query<"/transactions/payouts", "get"> = {}, options?: CallOptions) {
    return payouts.listPayouts(this.api, query, options)
  }

  /** Every payout, newest first, page after page: `for await (const payout of cobro.allPayouts())`. */
  allPayouts(query: Query<"/transactions/payouts", "get"> = {}, options?: CallOptions) {
    return payouts.allPayouts(this.api, query, options)
  }

  // --- webhook deliveries -------------------------------------------------------------------------

  /** GET /webhooks/deliveries: one page of the account's deliveries, oldest first, with their attempts. */
  listWebhookDeliveries(query: Query<"/webhooks/deliveries", "get"> = {}, options?: CallOptions) {
    return webhooks.listWebhookDeliveries(this.api, query, options)
  }

  /** Every delivery, oldest first, page after page: `for await (const d of cobro.allWebhookDeliveries())`. */
  allWebhookDeliveries(query: Query<"/webhooks/deliveries", "get"> = {}, options?: CallOptions) {
    return webhooks.allWebhookDeliveries(this.api, query, options)
  }

  /** GET /webhooks/deliveries/{event_id}: one delivery and its attempts. */
  getWebhookDelivery(eventId: string, options?: CallOptions) {
    return webhooks.getWebhookDelivery(this.api, eventId, options)
  }

  /** POST /webhooks/deliveries/{event_id}/replay: sends the event again. */
  replayWebhookDelivery(eventId: string, options?: CallOptions) {
    return webhooks.replayWebhookDelivery(this.api, eventId, options)
  }

  /**
   * A CSV export (GET …/export.csv: `payments`, by default of the client's merchant; `payouts`;
   * `refunds`; a customer's `transactions`) as its bytes arrive: RFC 4180, UTF-8, a header row.
   */
  exportCsv(request: exports.ExportRequest, options?: CallOptions) {
    return exports.exportCsv(this.api, request, () => this.merchant(undefined, "exportCsv"), options)
  }

  // --- sandbox ----------------------------------------------------------------------------------

  /** POST /cvu/{cvu}/faucet (sandbox): a simulated incoming transfer to a CVU. */
  faucet(cvu: string, body: RequestBody<"/cvu/{cvu}/faucet", "post">, options?: CallOptions) {
    return sandbox.faucet(this.api, cvu, body, options)
  }

  /** GET /sandbox/clock (sandbox): the merchant's test clock (its time and how far it is ahead). */
  getClock(options?: CallOptions) {
    return sandbox.getClock(this.api, options)
  }

  /**
   * POST /sandbox/clock/advance (sandbox): moves the merchant's own test clock ahead by `seconds`,
   * or to the instant `to`; what falls due in between (expiries, payouts) runs.
   */
  advanceClock(body: RequestBody<"/sandbox/clock/advance", "post">, options?: CallOptions) {
    return sandbox.advanceClock(this.api, body, options)
  }

  /** POST /sandbox/bank-accounts (sandbox): a bank account of yours at the sandbox bank, for payouts and refunds. */
  registerBankAccount(body: RequestBody<"/sandbox/bank-accounts", "post">, options?: CallOptions) {
    return sandbox.registerBankAccount(this.api, body, options)
  }

  /** GET /sandbox/bank-accounts (sandbox): your sandbox bank accounts. */
  listBankAccounts(options?: CallOptions) {
    return sandbox.listBankAccounts(this.api, options)
  }

  /** GET /sandbox/bank-accounts/{cbu} (sandbox): one of them. */
  getBankAccount(cbu: string, options?: CallOptions) {
    return sandbox.getBankAccount(this.api, cbu, options)
  }

  /** DELETE /sandbox/bank-accounts/{cbu} (sandbox): removes it. */
  removeBankAccount(cbu: string, options?: CallOptions) {
    return sandbox.removeBankAccount(this.api, cbu, options)
  }

  /** GET /sandbox/bank-accounts/{cbu}/transfers (sandbox): the transfers it received (payouts, refunds). */
  listBankAccountTransfers(cbu: string, options?: CallOptions) {
    return sandbox.listBankAccountTransfers(this.api, cbu, options)
  }
}
