/**
 * `@cobro/client`: the cobro HTTP API from any JavaScript host, with Promises and no Effect.
 *
 * ```ts
 * import { Cobro, CobroError } from "@cobro/client"
 *
 * const cobro = new Cobro({
 *   baseUrl: "http://localhost:3000",
 *   credentials: { userId: "demo", clientId: "…", clientSecret: "…" }
 * })
 * const created = await cobro.createPayment({ user_id: "demo", price: { amount: 1500, currency: "ARS" }, payment_options: ["transfer"] })
 * ```
 */
export {
  Cobro,
  type CobroOptions,
  type Credentials,
  type MerchantQuery,
  type Query,
  type RequestBody,
  type RetryOptions
} from "./Cobro.js"
export { type CallOptions, randomKey } from "./internal/call.js"
export { CobroError, CobroNetworkError, type ErrorDetails } from "./CobroError.js"
export {
  type AccountActivated,
  type CustomerPaymentReceived,
  type PaymentUpdated,
  type PayoutFailed,
  type SplitFundsReceived,
  type SplitPayoutsResult,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason
} from "./Webhooks.js"
export type { components, operations, paths } from "./generated/openapi.js"

import type { components } from "./generated/openapi.js"

/** The API's schemas by name: `Schemas["Payment"]`, `Schemas["CreatePaymentRequest"]`, … */
export type Schemas = components["schemas"]
