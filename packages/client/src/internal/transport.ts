/**
 * The client's `fetch`, under openapi-fetch: every request goes through `send`, which
 *
 * - adds the bearer token to the operations the OpenAPI document secures, and after a 401 drops
 *   the token, fetches another and sends the request once more;
 * - adds an `Idempotency-Key` to every POST that has none (one key for all its attempts);
 * - retries GET, HEAD and the POSTs the document says take an `Idempotency-Key` (the server
 *   answers a repeat with the first answer) on network errors and 500/502/503/504, with
 *   exponential backoff and full jitter; never a 4xx, never another POST, PUT or PATCH;
 * - gives each attempt a time limit, and stops at once when the caller's signal aborts.
 */
import { CobroNetworkError } from "../CobroError.js"
import { delayOf, retryAfterOf, type RetryPolicy, sleep } from "./backoff.js"
import { operationOf } from "./routes.js"
import type { TokenSource } from "./tokens.js"

export type Fetch = (request: Request) => Promise<Response>

export interface TransportOptions {
  readonly fetch: Fetch
  /** The path part of the base URL (`/api/cobro`), removed before matching a request to a route. */
  readonly basePath: string
  readonly retry: RetryPolicy
  /** Each attempt's time limit in milliseconds (until the answer's headers). */
  readonly timeoutMs: number
  readonly random: () => number
  readonly idempotencyKey: () => string
  /** Set once the token source exists (it sends its own requests through this transport). */
  tokens?: TokenSource
}

/** Statuses worth another attempt: the server or a proxy failed, the request may not have run. */
const transient = new Set([500, 502, 503, 504])

/** 503 answers that are final: the request will never succeed (SPEC's deprecated methods). */
const finalKeys = new Set(["payment.method.deprecated"])

const isRetryableAnswer = async (response: Response): Promise<boolean> => {
  if (!transient.has(response.status)) return false
  if (response.status !== 503) return true
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined)
  const key = (body as { message?: unknown } | undefined)?.message
  return !(typeof key === "string" && finalKeys.has(key))
}

class Timeout extends Error {
  override readonly name = "TimeoutError"
}

/** One attempt: `fetch` with a time limit, aborted too when `signal` aborts. */
const attempt = async (
  options: TransportOptions,
  url: string,
  init: RequestInit,
  signal: AbortSignal | null
): Promise<Response> => {
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal?.reason)
  if (signal?.aborted) onAbort()
  signal?.addEventListener("abort", onAbort, { once: true })
  const timer = setTimeout(
    () => controller.abort(new Timeout(`no answer within ${options.timeoutMs} ms`)),
    options.timeoutMs
  )
  try {
    return await options.fetch(new Request(url, { ...init, signal: controller.signal }))
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener("abort", onAbort)
  }
}

const discard = (response: Response) => response.body?.cancel().catch(() => {})

/** What `send` needs to know about a request beyond the request itself. */
export interface SendOptions {
  /** Send the bearer token; default: what the document says of the operation (unknown: yes). */
  readonly bearer?: boolean
  /** Whether the request may be sent again; default: GET, HEAD and POSTs taking an Idempotency-Key. */
  readonly retryable?: boolean
}

export const send = async (
  options: TransportOptions,
  request: Request,
  sendOptions: SendOptions = {}
): Promise<Response> => {
  const method = request.method.toUpperCase()
  const url = new URL(request.url)
  const operation = operationOf(method, url.pathname, options.basePath)
  const bearer = sendOptions.bearer ?? operation?.bearer ?? true
  const headers = new Headers(request.headers)
  if (method === "POST" && !headers.has("idempotency-key"))
    headers.set("idempotency-key", options.idempotencyKey())
  const retryable =
    sendOptions.retryable ??
    (method === "GET" || method === "HEAD" || (method === "POST" && operation?.idempotencyKey === true))
  const body = request.body === null ? undefined : await request.arrayBuffer()
  const signal = request.signal
  const tokens = bearer ? options.tokens : undefined
  let refreshed = false
  let retries = 0
  let attempts = 0
  for (;;) {
    const token = tokens === undefined ? undefined : await tokens.get()
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
    const init: RequestInit = { method, headers, redirect: request.redirect }
    if (body !== undefined) init.body = body
    let response: Response
    attempts += 1
    try {
      response = await attempt(options, request.url, init, signal)
    } catch (cause) {
      if (signal?.aborted) throw signal.reason
      if (retryable && retries < options.retry.retries) {
        retries += 1
        await sleep(delayOf(options.retry, retries, options.random), signal)
        continue
      }
      throw new CobroNetworkError({ method, url: request.url, attempts, cause })
    }
    if (response.status === 401 && token !== undefined && tokens?.refreshable && !refreshed) {
      // The token expired or was revoked server-side: one new token, one more attempt.
      refreshed = true
      tokens.invalidate(token)
      await discard(response)
      continue
    }
    if (retryable && retries < options.retry.retries && (await isRetryableAnswer(response))) {
      retries += 1
      const wait = delayOf(options.retry, retries, options.random, retryAfterOf(response))
      await discard(response)
      await sleep(wait, signal)
      continue
    }
    return response
  }
}
