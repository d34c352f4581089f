/**
 * Per-address and per-user request limits on the public and token routes, as `HttpApiMiddleware`s
 * the routes declare (`internal/api/`), on `@effect/experimental`'s fixed-window limiter (in
 * memory: the limits are per server process). A limit counts a request before its body is
 * decoded: a refused one still counts.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Duration, Effect, Layer, Predicate } from "effect"
import { ApiError, envelopeError, statusError } from "../ApiError.js"
import { HttpConfig, type Limit, type RateLimits } from "../HttpConfig.js"

/** `POST /payments/` and the payer's view: per address, and per merchant (the body's `user_id`). */
export class PublicRateLimit extends HttpApiMiddleware.Tag<PublicRateLimit>()("@cobro/http/PublicRateLimit", {
  failure: envelopeError(429)
}) {}

/** `POST /users/{id}/tokens`: per address, and per user (`user:<id>`). */
export class TokenRateLimit extends HttpApiMiddleware.Tag<TokenRateLimit>()("@cobro/http/TokenRateLimit", {
  failure: envelopeError(429)
}) {}

/** `POST /auth/tokens` (status envelope): per address, and per partner client (`client:<client_id>`). */
export class PartnerTokenRateLimit extends HttpApiMiddleware.Tag<PartnerTokenRateLimit>()(
  "@cobro/http/PartnerTokenRateLimit",
  { failure: statusError(429) }
) {}

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
    yield* count(yield* RateLimiter.RateLimiter, config, config.rateLimits, request, bucket, subject)
  })

/** `check` with the configuration and the limiter in hand. */
const count = (
  limiter: RateLimiter.RateLimiter,
  config: HttpConfig["Type"],
  limits: RateLimits,
  request: HttpServerRequest.HttpServerRequest,
  bucket: Bucket,
  subject: string | undefined
): Effect.Effect<void, ApiError> =>
  Effect.zipRight(
    consume(
      limiter,
      `${bucket}:address:${config.clientAddress(request)}`,
      bucket === "public" ? limits.publicPerAddress : limits.tokensPerAddress
    ),
    subject === undefined
      ? Effect.void
      : consume(
          limiter,
          `${bucket}:subject:${subject}`,
          bucket === "public" ? limits.publicPerUser : limits.tokensPerUser
        )
  )

/** The fallback of `RateLimits.replaysPerUser`. */
const defaultReplays: Limit = { limit: 30, window: Duration.minutes(1) }

/**
 * Counts one webhook replay for the account `userId` (after authentication: a replay is counted
 * per account, whichever token or address asks).
 */
export const checkReplay = (
  userId: string
): Effect.Effect<void, ApiError, HttpConfig | RateLimiter.RateLimiter> =>
  Effect.gen(function* () {
    const config = yield* HttpConfig
    if (config.rateLimits === false) return
    const limiter = yield* RateLimiter.RateLimiter
    yield* consume(limiter, `replays:user:${userId}`, config.rateLimits.replaysPerUser ?? defaultReplays)
  })

/** A string field of the request's JSON body (read once, cached by the request), if any. */
const bodyField = (request: HttpServerRequest.HttpServerRequest, field: string) =>
  request.method === "GET"
    ? Effect.succeed(undefined)
    : request.json.pipe(
        Effect.map((body) =>
          Predicate.hasProperty(body, field) && typeof body[field] === "string" ? body[field] : undefined
        ),
        Effect.orElseSucceed(() => undefined)
      )

/**
 * The middleware counting a request in `bucket`, for the subject `subjectOf` finds in it. The
 * configuration and the limiter are taken once, when the layer is built: with the limits off the
 * middleware does nothing at all (no body read for its subject), and with them on it provides
 * no context of its own to each request.
 */
const limiter = (
  bucket: Bucket,
  subjectOf: (
    request: HttpServerRequest.HttpServerRequest,
    params: Readonly<Record<string, string | undefined>>
  ) => Effect.Effect<string | undefined>
): Effect.Effect<
  Effect.Effect<void, ApiError, HttpRouter.RouteContext | HttpServerRequest.HttpServerRequest>,
  never,
  HttpConfig | RateLimiter.RateLimiter
> =>
  Effect.gen(function* () {
    const config = yield* HttpConfig
    const limits = config.rateLimits
    if (limits === false) return Effect.void
    const limiter = yield* RateLimiter.RateLimiter
    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const route = yield* HttpRouter.RouteContext
      const subject = yield* subjectOf(request, route.params)
      yield* count(limiter, config, limits, request, bucket, subject)
    })
  })

export const layer: Layer.Layer<
  PublicRateLimit | TokenRateLimit | PartnerTokenRateLimit,
  never,
  HttpConfig | RateLimiter.RateLimiter
> = Layer.mergeAll(
  Layer.effect(
    PublicRateLimit,
    limiter("public", (request) => bodyField(request, "user_id"))
  ),
  Layer.effect(
    TokenRateLimit,
    limiter("tokens", (_, params) =>
      Effect.succeed(params["id"] === undefined ? undefined : `user:${params["id"]}`)
    )
  ),
  Layer.effect(
    PartnerTokenRateLimit,
    limiter("tokens", (request) =>
      Effect.map(bodyField(request, "client_id"), (id) => (id === undefined ? undefined : `client:${id}`))
    )
  )
)
