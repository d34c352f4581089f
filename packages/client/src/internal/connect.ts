/** The openapi-fetch client a `Cobro` sends through: its transport, retries, timeouts and tokens. */
import createClient, { type Client } from "openapi-fetch"
import type { paths } from "../generated/openapi.js"
import { type RetryOptions, retryPolicy } from "./backoff.js"
import { randomKey, recordMethod } from "./call.js"
import { type Credentials, fixed, fromCredentials } from "./tokens.js"
import { type Fetch, send, type TransportOptions } from "./transport.js"

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

/** The client for `options`, answering through the retrying, token-carrying transport. */
export function connect(options: CobroOptions): Client<paths> {
  if (options.credentials !== undefined && options.token !== undefined) {
    throw new TypeError("Cobro: give either credentials or a token, not both")
  }
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
  return createClient<paths>({
    baseUrl,
    fetch: (request: Request) => send(transport, request),
    ...(options.headers === undefined ? {} : { headers: options.headers })
  })
}
