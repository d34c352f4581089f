/**
 * The HTTP POST of one delivery attempt, as a port: the worker decides what to send and what the
 * answer means; the transport only sends it, within the timeout, following no redirect, refusing
 * the destinations its policy refuses (`NodeTransport` is the implementation, with the SSRF guard).
 */
import { Context, type Duration, type Effect, Schema } from "effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Total time allowed, from the start to the response headers. */
  readonly timeout: Duration.Duration
}

export interface WebhookResponse {
  /** Any status: success or failure is the worker's call (only 2xx is success). */
  readonly status: number
  /** The `Location` header of a redirect (which is not followed); null otherwise. */
  readonly location: string | null
  /** Wall time from the start of the request to the response headers, in milliseconds. */
  readonly durationMs: number
}

/**
 * Why an attempt got no response. `invalid_url`: the URL is not one to send to (not absolute,
 * not http(s), credentials). `forbidden`: the URL names a destination the transport's policy never
 * contacts (`WebhookDestination`: in production a scheme other than https, `localhost`, a
 * non-public IP literal). `refused`: a name resolved to an address the policy refuses (DNS answers
 * change, so this one may pass later). `timeout`, `network`: the receiver did not answer.
 */
export const TransportFailure = Schema.Literal("invalid_url", "forbidden", "refused", "timeout", "network")
export type TransportFailure = typeof TransportFailure.Type

/** Failures no retry can cure, since they come from the URL alone: the delivery is dead at once. */
export const isPermanent = (reason: TransportFailure): boolean =>
  reason === "invalid_url" || reason === "forbidden"

/** The attempt got no HTTP response: why, and how long it took. */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  reason: TransportFailure,
  message: Schema.String,
  durationMs: Schema.Number
}) {}

export class WebhookTransport extends Context.Tag("@cobro/webhooks/WebhookTransport")<
  WebhookTransport,
  {
    readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse, TransportError>
  }
>() {}
