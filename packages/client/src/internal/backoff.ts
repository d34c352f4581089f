/** How requests are retried: attempts, exponential backoff with full jitter, and waiting. */

export interface RetryOptions {
  /** Retries after the first attempt (0: none). Default 3. */
  readonly retries?: number
  /** The first retry waits up to this long; each further one up to twice as long. Default 200 ms. */
  readonly baseDelayMs?: number
  /** No wait is longer than this, `Retry-After` included. Default 5 000 ms. */
  readonly maxDelayMs?: number
}

export interface RetryPolicy {
  readonly retries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

export const retryPolicy = (options: RetryOptions = {}): RetryPolicy => ({
  retries: Math.max(0, Math.floor(options.retries ?? 3)),
  baseDelayMs: Math.max(0, options.baseDelayMs ?? 200),
  maxDelayMs: Math.max(0, options.maxDelayMs ?? 5_000)
})

/**
 * The wait before retry number `retry` (1 for the first): "full jitter", a uniform draw in
 * [0, min(max, base·2^(retry-1))], so that clients failing together do not retry together. A
 * `Retry-After` of the answer (seconds) is a floor, capped at the maximum.
 */
export const delayOf = (
  policy: RetryPolicy,
  retry: number,
  random: () => number,
  retryAfterSeconds?: number
): number => {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  const jittered = random() * ceiling
  return retryAfterSeconds === undefined
    ? jittered
    : Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterSeconds * 1000))
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export const sleep = (ms: number, signal?: AbortSignal | null): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** `Retry-After` in seconds (a number of seconds; an HTTP date is ignored). */
export const retryAfterOf = (response: Response): number | undefined => {
  const value = response.headers.get("retry-after")
  if (value === null || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined
  return Number(value)
}
