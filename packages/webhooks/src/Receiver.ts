/**
 * For host apps that receive cobro webhooks: check that a request was signed with your client
 * secret, recently. Give it the raw body exactly as received (before any JSON parsing).
 *
 * - Every signature header present must verify; at least one must be present. With the Standard
 *   Webhooks headers, any one of the space-separated `v1,` signatures may match (key rotation).
 * - The `webhook-timestamp` must be within `toleranceSeconds` (5 minutes by default) of now, so a
 *   captured request cannot be replayed later. `X-Service-Signature` alone carries no timestamp:
 *   it is accepted only when `requireTimestamp` is false.
 * - Signatures are compared in constant time.
 *
 * Then answer 2xx at once and do the work afterwards (SPEC: more than 3 seconds risks a timeout),
 * and deduplicate on `webhook-id`: a delivery is at least once.
 */
import { Clock, Effect, Either, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { headerNames, serviceSignature, standardSignatureBase64 } from "./Signature.js"

export const defaultToleranceSeconds = 5 * 60

export const VerificationFailure = Schema.Literal(
  "missing_signature",
  "malformed_headers",
  "timestamp_out_of_tolerance",
  "signature_mismatch"
)
export type VerificationFailure = typeof VerificationFailure.Type

export class WebhookVerificationError extends Schema.TaggedError<WebhookVerificationError>()(
  "WebhookVerificationError",
  { reason: VerificationFailure, message: Schema.String }
) {}

/** Node's `req.headers`, a fetch `Headers`, or any record of header values. */
export type HeadersInput =
  | { readonly get: (name: string) => string | null }
  | { readonly [name: string]: string | ReadonlyArray<string> | undefined }

export interface VerifyInput {
  /** Your client secret, as issued (the partner's secret for `account_activated`). */
  readonly secret: string
  readonly headers: HeadersInput
  /** The raw request body. */
  readonly body: string | Uint8Array
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  readonly toleranceSeconds?: number
  /** Refuse requests without the Standard Webhooks timestamp (default true). */
  readonly requireTimestamp?: boolean
}

export interface VerifiedWebhook {
  /** `webhook-id`: the event id, the same on every retry; null if absent. */
  readonly id: string | null
  /** `webhook-timestamp` in seconds; null if absent. */
  readonly timestamp: number | null
  /** Which signatures were checked. */
  readonly verified: ReadonlyArray<"webhook-signature" | "x-service-signature">
}

const headerOf = (headers: HeadersInput, name: string): string | undefined => {
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

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "utf8")
  const y = Buffer.from(b, "utf8")
  // The expected signature's length is public (fixed by the algorithm); only its bytes are secret.
  return x.length === y.length && timingSafeEqual(x, y)
}

const fail = (reason: VerificationFailure, message: string) =>
  Either.left(new WebhookVerificationError({ reason, message }))

/** Verifies against `now` (epoch milliseconds or a Date): for callers outside Effect. */
export const verifySync = (
  input: VerifyInput & { readonly now: number | Date }
): Either.Either<VerifiedWebhook, WebhookVerificationError> => {
  const nowSeconds = Math.floor((typeof input.now === "number" ? input.now : input.now.getTime()) / 1000)
  const tolerance = input.toleranceSeconds ?? defaultToleranceSeconds
  const id = headerOf(input.headers, headerNames.id)
  const timestampText = headerOf(input.headers, headerNames.timestamp)
  const standard = headerOf(input.headers, headerNames.signature)
  const service = headerOf(input.headers, headerNames.service)
  if (input.secret.length === 0) return fail("malformed_headers", "the secret is empty")
  if (standard === undefined && service === undefined) {
    return fail("missing_signature", "neither webhook-signature nor x-service-signature is present")
  }

  let timestamp: number | null = null
  if (timestampText !== undefined) {
    if (!/^[0-9]{1,15}$/.test(timestampText.trim())) {
      return fail("malformed_headers", "webhook-timestamp is not a number of seconds")
    }
    timestamp = Number(timestampText.trim())
    if (Math.abs(nowSeconds - timestamp) > tolerance) {
      return fail(
        "timestamp_out_of_tolerance",
        `webhook-timestamp is ${nowSeconds - timestamp} s from now (tolerance ${tolerance} s)`
      )
    }
  } else if (input.requireTimestamp ?? true) {
    return fail("malformed_headers", "webhook-timestamp is missing")
  }

  const verified: Array<VerifiedWebhook["verified"][number]> = []
  if (standard !== undefined) {
    if (id === undefined || timestamp === null) {
      return fail("malformed_headers", "webhook-signature needs webhook-id and webhook-timestamp")
    }
    const expected = standardSignatureBase64(input.secret, id, timestamp, input.body)
    const matches = standard
      .split(" ")
      .filter((s) => s.startsWith("v1,"))
      .some((s) => sameText(s.slice(3), expected))
    if (!matches) return fail("signature_mismatch", "no webhook-signature matches")
    verified.push("webhook-signature")
  }
  if (service !== undefined) {
    if (!sameText(service.trim().toLowerCase(), serviceSignature(input.secret, input.body))) {
      return fail("signature_mismatch", "x-service-signature does not match")
    }
    verified.push("x-service-signature")
  }
  return Either.right({ id: id ?? null, timestamp, verified })
}

/** Verifies against the current `Clock` time. */
export const verify = (input: VerifyInput): Effect.Effect<VerifiedWebhook, WebhookVerificationError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => verifySync({ ...input, now }))
