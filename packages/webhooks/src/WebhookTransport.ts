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

export const TransportFailure = Schema.Literal("invalid_url", "refused", "timeout", "network")
export type TransportFailure = typeof TransportFailure.Type

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
