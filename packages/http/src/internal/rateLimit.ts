/**
 * Per-address and per-user request limits on the public and token routes, on
 * `@effect/experimental`'s fixed-window limiter (in memory: the limits are per server process).
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Duration, Effect } from "effect"
import { ApiError } from "../ApiError.js"
import { HttpConfig, type Limit, type RateLimits } from "../HttpConfig.js"

export type Bucket = "public" | "tokens"

const consume = (limiter: RateLimiter.RateLimiter, key: string, limit: Limit) =>
  limiter.consume({ key, limit: limit.limit, window: limit.window, algorithm: "fixed-window" }).pipe(
    Effect.asVoid,
    Effect.catchAll((e) => {
      if (!(e instanceof RateLimiter.RateLimitExceeded)) return Effect.die(e)
      const seconds = Math.max(1, Math.ceil(Duration.toSeconds(e.retryAfter)))
      return Effect.fail(
        new ApiError({
          status: 429,
          key: "rate.limit.exceeded",
          detail: `too many requests; retry in ${seconds} s`,
          retry_after: seconds
        })
      )
    })
  )

/** Counts one request of `bucket` from the caller's address and for `subject` (a user or client id). */
export const check = (
  request: HttpServerRequest.HttpServerRequest,
  bucket: Bucket,
  subject: string | undefined
): Effect.Effect<void, ApiError, HttpConfig | RateLimiter.RateLimiter> =>
  Effect.gen(function* () {
    const config = yield* HttpConfig
    if (config.rateLimits === false) return
    const limits: RateLimits = config.rateLimits
    const limiter = yield* RateLimiter.RateLimiter
    const address = config.clientAddress(request)
    yield* consume(
      limiter,
      `${bucket}:address:${address}`,
      bucket === "public" ? limits.publicPerAddress : limits.tokensPerAddress
    )
    if (subject !== undefined) {
      yield* consume(
        limiter,
        `${bucket}:subject:${subject}`,
        bucket === "public" ? limits.publicPerUser : limits.tokensPerUser
      )
    }
  })
