/**
 * The two ways a call fails. `CobroError`: the server answered with an error status; `message` is
 * the envelope's dotted key (`payment.not.found`, stable, documented in docs/errors.md) and
 * `details` the envelope's `data` (`detail` for people, `field` for the input at fault,
 * `retry_after` on 429), `requestId` the answer's `Request-Id` (quote it to support: the server's
 * log lines of that request carry it). `CobroNetworkError`: no answer came (connection refused or reset, DNS,
 * a timeout), after the retries the request allowed.
 */

/** The `data` of an error envelope. */
export interface ErrorDetails {
  /** A sentence for people; do not parse it. */
  readonly detail?: string
  /** The input at fault: a body path (`price.amount`), a parameter or a header name, or `body`. */
  readonly field?: string
  /** On 429: seconds to wait. */
  readonly retry_after?: number
  readonly [key: string]: unknown
}

export class CobroError extends Error {
  override readonly name = "CobroError"
  /** The HTTP status. */
  readonly status: number
  /** The envelope's `data`; empty when the answer was not an envelope. */
  readonly details: ErrorDetails
  /** The answer's body as received (parsed JSON, or text). */
  readonly body: unknown
  readonly method: string
  readonly url: string
  /** The answer's `Request-Id` header (else the envelope's `request_id`), if it had one. */
  readonly requestId: string | undefined

  constructor(args: {
    readonly status: number
    readonly body: unknown
    readonly method: string
    readonly url: string
    readonly requestId?: string | null | undefined
  }) {
    const envelope = isRecord(args.body) ? args.body : undefined
    const key = typeof envelope?.["message"] === "string" ? envelope["message"] : `http.${args.status}`
    super(key)
    this.status = args.status
    this.body = args.body
    this.method = args.method
    this.url = args.url
    const fromBody = envelope?.["request_id"]
    this.requestId = args.requestId ?? (typeof fromBody === "string" ? fromBody : undefined)
    const data = envelope?.["data"]
    this.details = isRecord(data)
      ? (data as ErrorDetails)
      : typeof args.body === "string" && args.body !== ""
        ? { detail: args.body.slice(0, 500) }
        : {}
  }

  /** The envelope's sentence for people, if any. */
  get detail(): string | undefined {
    return this.details.detail
  }

  override toString(): string {
    const detail = this.detail === undefined ? "" : `: ${this.detail}`
    const requestId = this.requestId === undefined ? "" : ` [request ${this.requestId}]`
    return `CobroError ${this.status} ${this.message} (${this.method} ${this.url})${detail}${requestId}`
  }
}

export class CobroNetworkError extends Error {
  override readonly name = "CobroNetworkError"
  readonly method: string
  readonly url: string
  /** How many times the request was sent. */
  readonly attempts: number

  constructor(args: {
    readonly method: string
    readonly url: string
    readonly attempts: number
    readonly cause: unknown
  }) {
    const reason = args.cause instanceof Error ? args.cause.message : String(args.cause)
    super(`${args.method} ${args.url} got no answer after ${args.attempts} attempt(s): ${reason}`, {
      cause: args.cause
    })
    this.method = args.method
    this.url = args.url
    this.attempts = args.attempts
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
