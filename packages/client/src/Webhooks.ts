/**
 * Verifying cobro's webhooks without Effect or Node built-ins: `verifyWebhook(body, headers,
 * secret)` checks the signatures with WebCrypto (Node 20, browsers, edge runtimes) exactly as
 * `@cobro/webhooks` signs and verifies them, and answers the event, typed by its kind.
 *
 * - Every signature header present must verify, and one must be present: the Standard Webhooks
 *   `webhook-signature` (`v1,<base64 HMAC-SHA256(secret, "{id}.{timestamp}.{body}")>`, any one of
 *   its space-separated signatures) and `X-Service-Signature` (`sha256=<hex HMAC-SHA256(secret,
 *   body)>`). The key is the UTF-8 bytes of the client secret.
 * - `webhook-timestamp` must be within `toleranceSeconds` (300) of now, so a captured request
 *   cannot be sent again later; without it the request is refused unless `requireTimestamp` is
 *   false (`X-Service-Signature` covers no time).
 * - Signatures are compared by `crypto.subtle.verify`, in constant time.
 */

/** Why a request did not verify. */
export type WebhookVerificationReason =
  | "missing_signature"
  | "malformed_headers"
  | "timestamp_out_of_tolerance"
  | "signature_mismatch"
  | "malformed_body"

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
  readonly reason: WebhookVerificationReason

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message)
    this.reason = reason
  }
}

/** "Payment updated": read the payment (`getPayment`) for its state. */
export interface PaymentUpdated {
  readonly message: "Payment updated"
  readonly paymentId: string
  readonly externalId?: string
}

/** "Customer payment received": read the transfer (`getCustomerTransaction`). */
export interface CustomerPaymentReceived {
  readonly message: "Customer payment received"
  readonly transactionId: string
  readonly customerId: string
}

/** An account a partner onboarded became ACTIVE (signed with the partner's secret). */
export interface AccountActivated {
  readonly message: "account_activated"
  readonly user_id: string
}

/** A transfer was credited to a split payment; `amount` is its gross amount with two decimals. */
export interface SplitFundsReceived {
  readonly message: "split.funds_received"
  readonly split_payment_id: string
  readonly external_id: string
  readonly amount: string
  readonly hold_until: string | null
}

/** The last payout of a split payment's instruction was settled. */
export interface SplitPayoutsResult {
  readonly message: "split.payouts_result"
  readonly split_payment_id: string
  readonly external_id: string
  readonly payout_status: "SUCCESS" | "PARTIAL_FAILURE" | "FAILED"
}

/** The bank failed a schedule's payout; its amount is back in the available balance. */
export interface PayoutFailed {
  readonly message: "payout.failed"
  readonly payout_id: string
  readonly schedule_id: string
  readonly user_id: string
  readonly amount: string
  readonly reason: string
}

interface Kinds {
  readonly "payment.updated": PaymentUpdated
  readonly "customer.payment_received": CustomerPaymentReceived
  readonly "account.activated": AccountActivated
  readonly "split.funds_received": SplitFundsReceived
  readonly "split.payouts_result": SplitPayoutsResult
  readonly "payout.failed": PayoutFailed
}

/** The event kinds, by the `message` of their bodies. */
const kindOf: Record<string, keyof Kinds> = {
  "Payment updated": "payment.updated",
  "Customer payment received": "customer.payment_received",
  account_activated: "account.activated",
  "split.funds_received": "split.funds_received",
  "split.payouts_result": "split.payouts_result",
  "payout.failed": "payout.failed"
}

interface Delivery {
  /** `webhook-id`: the event id, the same on every retry and replay (deduplicate on it); null if absent. */
  readonly id: string | null
  /** `webhook-timestamp`, in seconds since the epoch; null if absent. */
  readonly timestamp: number | null
  /** The signature headers that were checked. */
  readonly verified: ReadonlyArray<"webhook-signature" | "x-service-signature">
}

/**
 * A verified event: `type` tells its kind and types `body` (the JSON as sent); `unknown` for a
 * kind this version of the client does not know (answer 2xx all the same).
 */
export type WebhookEvent =
  | { [K in keyof Kinds]: Delivery & { readonly type: K; readonly body: Kinds[K] } }[keyof Kinds]
  | (Delivery & { readonly type: "unknown"; readonly body: Readonly<Record<string, unknown>> })

/** Node's `req.headers`, a fetch `Headers`, or any record of header values. */
export type WebhookHeaders =
  | { readonly get: (name: string) => string | null }
  | { readonly [name: string]: string | ReadonlyArray<string> | undefined }

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  readonly toleranceSeconds?: number
  /** Refuse a request without `webhook-timestamp` (default true). */
  readonly requireTimestamp?: boolean
  /** Now, in epoch milliseconds (default `Date.now()`). */
  readonly now?: number
}

const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof headers.get === "function") {
    return (headers as { readonly get: (name: string) => string | null }).get(name) ?? undefined
  }
  const record = headers as { readonly [name: string]: string | ReadonlyArray<string> | undefined }
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === name) {
      const value = record[key]
      return typeof value === "string" ? value : value?.join(", ")
    }
  }
  return undefined
}

const utf8 = new TextEncoder()

const bytesOf = (body: string | Uint8Array | ArrayBuffer): Uint8Array =>
  typeof body === "string" ? utf8.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body)

const concat = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

const fromHex = (hex: string): Uint8Array | undefined =>
  /^(?:[0-9a-f]{2})+$/.test(hex) ? new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16))) : undefined

const fromBase64 = (text: string): Uint8Array | undefined => {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
  } catch {
    return undefined
  }
}

type Key = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>

/** WebCrypto's HMAC verification: a constant-time comparison. */
const matches = (key: Key, signature: Uint8Array | undefined, data: Uint8Array): Promise<boolean> =>
  signature === undefined
    ? Promise.resolve(false)
    : globalThis.crypto.subtle.verify("HMAC", key, signature, data)

const fail = (reason: WebhookVerificationReason, message: string): never => {
  throw new WebhookVerificationError(reason, message)
}

/**
 * Verifies a delivery on its raw body (exactly as received, before parsing) and answers its event;
 * throws `WebhookVerificationError` (answer 401) when it does not verify. `secret`: your client
 * secret (the partner's for `account_activated`); during a rotation, try the old one after the new.
 */
export const verifyWebhook = async (
  body: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {}
): Promise<WebhookEvent> => {
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000)
  const tolerance = options.toleranceSeconds ?? 300
  const id = headerOf(headers, "webhook-id")
  const timestampText = headerOf(headers, "webhook-timestamp")
  const standard = headerOf(headers, "webhook-signature")
  const service = headerOf(headers, "x-service-signature")
  if (secret.length === 0) fail("malformed_headers", "the secret is empty")
  if (standard === undefined && service === undefined)
    fail("missing_signature", "neither webhook-signature nor x-service-signature is present")

  let timestamp: number | null = null
  if (timestampText !== undefined) {
    if (!/^[0-9]{1,15}$/.test(timestampText.trim()))
      fail("malformed_headers", "webhook-timestamp is not a number of seconds")
    timestamp = Number(timestampText.trim())
    if (Math.abs(nowSeconds - timestamp) > tolerance)
      fail(
        "timestamp_out_of_tolerance",
        `webhook-timestamp is ${nowSeconds - timestamp} s from now (tolerance ${tolerance} s)`
      )
  } else if (options.requireTimestamp ?? true) {
    fail("malformed_headers", "webhook-timestamp is missing")
  }

  const raw = bytesOf(body)
  const key = await globalThis.crypto.subtle.importKey(
    "raw",
    utf8.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"]
  )
  const verified: Array<Delivery["verified"][number]> = []
  if (standard !== undefined) {
    if (id === undefined || timestamp === null)
      fail("malformed_headers", "webhook-signature needs webhook-id and webhook-timestamp")
    const signed = concat(utf8.encode(`${id}.${timestamp}.`), raw)
    const candidates = standard
      .split(" ")
      .filter((s) => s.startsWith("v1,"))
      .map((s) => fromBase64(s.slice(3)))
    const results = await Promise.all(candidates.map((signature) => matches(key, signature, signed)))
    if (!results.includes(true)) fail("signature_mismatch", "no webhook-signature matches")
    verified.push("webhook-signature")
  }
  if (service !== undefined) {
    const given = service.trim().toLowerCase()
    const signature = given.startsWith("sha256=") ? fromHex(given.slice(7)) : undefined
    if (!(await matches(key, signature, raw)))
      fail("signature_mismatch", "x-service-signature does not match")
    verified.push("x-service-signature")
  }

  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(raw))
  } catch {
    fail("malformed_body", "the body is not JSON")
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    fail("malformed_body", "the body is not a JSON object")
  const event = parsed as Record<string, unknown>
  const message = event["message"]
  const type = typeof message === "string" && Object.hasOwn(kindOf, message) ? kindOf[message]! : "unknown"
  return { id: id ?? null, timestamp, verified, type, body: event } as WebhookEvent
}
