/**
 * The API's request limits (`HttpConfig.RateLimits`) on the host's `RateLimitStore`, as
 * `HttpApiMiddleware`s the routes declare (`internal/api/`) and the `Limits` the pages and the
 * webhook replays use.
 *
 * The public routes count every request, before its body is decoded. The token routes are a
 * brute-force guard: they count wrong secrets (the handler reports them through `TokenAttempt`)
 * per subject (user id, client id) and per address, and refuse a subject or an address that has
 * used its failures, even with the right secret, until the window ends; every token request also
 * counts toward a ceiling on issuance, far above a fleet's needs.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Crypto } from "@cobro/core"
import { Context, Duration, Effect, Encoding, Layer, Predicate } from "effect"
import { ApiError, envelopeError, statusError } from "../ApiError.js"
import { HttpConfig, type Limit } from "../HttpConfig.js"
import { RateLimitStore, type Count, type Counter } from "../RateLimitStore.js"

/** A wrong secret of the request a token route middleware let through (counted when reported). */
export class TokenAttempt extends Context.Tag("@cobro/http/TokenAttempt")<
  TokenAttempt,
  { readonly failed: Effect.Effect<void> }
>() {}

/** `POST /payments/` and the payer's view: per address, and per merchant (the body's `user_id`). */
export class PublicRateLimit extends HttpApiMiddleware.Tag<PublicRateLimit>()("@cobro/http/PublicRateLimit", {
  failure: envelopeError(429)
}) {}

/** `POST /users/{id}/tokens`: wrong secrets per address and per user (`user:<id>`). */
export class TokenRateLimit extends HttpApiMiddleware.Tag<TokenRateLimit>()("@cobro/http/TokenRateLimit", {
  failure: envelopeError(429),
  provides: TokenAttempt
}) {}

/** `POST /auth/tokens` (status envelope): wrong secrets per address and per client (`client:<client_id>`). */
export class PartnerTokenRateLimit extends HttpApiMiddleware.Tag<PartnerTokenRateLimit>()(
  "@cobro/http/PartnerTokenRateLimit",
  { failure: statusError(429), provides: TokenAttempt }
) {}

export interface LimitsShape {
  /** A public request: per address, and per merchant when `user` is known. */
  readonly publicRequest: (
    request: HttpServerRequest.HttpServerRequest,
    user: string | undefined
  ) => Effect.Effect<void, ApiError>
  /** Refuses a request whose address, or `subject`, has used its wrong secrets. */
  readonly locked: (
    request: HttpServerRequest.HttpServerRequest,
    subject: string | undefined
  ) => Effect.Effect<void, ApiError>
  /** Counts a wrong secret for the request's address and `subject`. */
  readonly failed: (
    request: HttpServerRequest.HttpServerRequest,
    subject: string | undefined
  ) => Effect.Effect<void>
  /** Counts a token request of `subject` toward the ceiling on issuance. */
  readonly tokenRequest: (subject: string | undefined) => Effect.Effect<void, ApiError>
  /** Counts one webhook replay of the account `userId` (whichever token or address asks). */
  readonly replay: (userId: string) => Effect.Effect<void, ApiError>
}

export class Limits extends Context.Tag("@cobro/http/Limits")<Limits, LimitsShape>() {}

const exceeded = (count: Count) => {
  const seconds = Math.max(1, Math.ceil(count.msLeft / 1000))
  return new ApiError({
    status: 429,
    key: "rate.limit.exceeded",
    detail: `too many requests; retry in ${seconds} s`,
    retry_after: seconds
  })
}

/** The fallback of `RateLimits.replaysPerUser`. */
const defaultReplays: Limit = { limit: 30, window: Duration.minutes(1) }

/** Keys longer than this (an address header, a client id from a body) are counted by their hash. */
const MAX_KEY = 100

const off: LimitsShape = {
  publicRequest: () => Effect.void,
  locked: () => Effect.void,
  failed: () => Effect.void,
  tokenRequest: () => Effect.void,
  replay: () => Effect.void
}

export const layerLimits: Layer.Layer<Limits, never, HttpConfig | RateLimitStore | Crypto.Crypto> =
  Layer.effect(
    Limits,
    Effect.gen(function* () {
      const config = yield* HttpConfig
      const limits = config.rateLimits
      if (limits === false) return off
      const store = yield* RateLimitStore
      const crypto = yield* Crypto.Crypto
      const key = (text: string) =>
        text.length <= MAX_KEY
          ? Effect.succeed(text)
          : Effect.map(crypto.sha256(text), (hash) => `sha256:${Encoding.encodeHex(hash)}`)
      const publicPerAddress = store.counter("public-address", limits.publicPerAddress)
      const publicPerUser = store.counter("public-user", limits.publicPerUser)
      const tokensPerUser = store.counter("tokens-user", limits.tokensPerUser)
      const failuresPerClient = store.counter("failures-client", limits.failuresPerClient)
      const failuresPerAddress = store.counter("failures-address", limits.failuresPerAddress)
      const replays = limits.replaysPerUser ?? defaultReplays
      const replaysPerUser = store.counter("replays-user", replays)

      /** Counts one for `text`; refused over `limit`. */
      const consume = (counter: Counter, limit: Limit, text: string) =>
        Effect.flatMap(key(text), (k) =>
          Effect.flatMap(counter.add(k), (count) =>
            count.count > limit.limit ? Effect.fail(exceeded(count)) : Effect.void
          )
        )
      /** Refused when `text` has reached `limit` (without counting). */
      const reached = (counter: Counter, limit: Limit, text: string) =>
        Effect.flatMap(key(text), (k) =>
          Effect.flatMap(counter.read(k), (count) =>
            count.count >= limit.limit ? Effect.fail(exceeded(count)) : Effect.void
          )
        )
      const address = (request: HttpServerRequest.HttpServerRequest) => config.clientAddress(request)

      return {
        publicRequest: (request, user) =>
          Effect.zipRight(
            consume(publicPerAddress, limits.publicPerAddress, address(request)),
            user === undefined ? Effect.void : consume(publicPerUser, limits.publicPerUser, user)
          ),
        locked: (request, subject) =>
          Effect.zipRight(
            reached(failuresPerAddress, limits.failuresPerAddress, address(request)),
            subject === undefined
              ? Effect.void
              : reached(failuresPerClient, limits.failuresPerClient, subject)
          ),
        failed: (request, subject) =>
          Effect.zipRight(
            Effect.flatMap(key(address(request)), failuresPerAddress.add),
            subject === undefined ? Effect.void : Effect.flatMap(key(subject), failuresPerClient.add)
          ).pipe(Effect.asVoid),
        tokenRequest: (subject) =>
          subject === undefined ? Effect.void : consume(tokensPerUser, limits.tokensPerUser, subject),
        replay: (userId) => consume(replaysPerUser, replays, `user:${userId}`)
      }
    })
  )

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

type Subject = (
  request: HttpServerRequest.HttpServerRequest,
  params: Readonly<Record<string, string | undefined>>
) => Effect.Effect<string | undefined>

/**
 * A token route's middleware: refuses a locked address or subject, counts the request toward the
 * ceiling on issuance, and gives the handler the `TokenAttempt` that counts a wrong secret. With
 * the limits off it reads no body.
 */
const tokenGuard = (subjectOf: Subject) =>
  Effect.gen(function* () {
    const limits = yield* Limits
    const on = (yield* HttpConfig).rateLimits !== false
    return Effect.gen(function* () {
      if (!on) return TokenAttempt.of({ failed: Effect.void })
      const request = yield* HttpServerRequest.HttpServerRequest
      const subject = yield* subjectOf(request, (yield* HttpRouter.RouteContext).params)
      yield* limits.locked(request, subject)
      yield* limits.tokenRequest(subject)
      return TokenAttempt.of({ failed: limits.failed(request, subject) })
    })
  })

/**
 * `effect` (a token route's handler) with a wrong secret (`auth.credentials.invalid`) reported to
 * the middleware's `TokenAttempt`. A wrong, used or expired code with the right partner secret is
 * not a guess at a secret and is not counted.
 */
export const countingWrongSecrets = <A, R>(
  effect: Effect.Effect<A, ApiError, R>
): Effect.Effect<A, ApiError, R | TokenAttempt> =>
  Effect.flatMap(TokenAttempt, (attempt) =>
    Effect.tapError(effect, (error) =>
      error.key === "auth.credentials.invalid" ? attempt.failed : Effect.void
    )
  )

export const layer: Layer.Layer<
  PublicRateLimit | TokenRateLimit | PartnerTokenRateLimit,
  never,
  HttpConfig | Limits
> = Layer.mergeAll(
  Layer.effect(
    PublicRateLimit,
    Effect.gen(function* () {
      const limits = yield* Limits
      if ((yield* HttpConfig).rateLimits === false) return Effect.void
      return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.flatMap(bodyField(request, "user_id"), (user) => limits.publicRequest(request, user))
      )
    })
  ),
  Layer.effect(
    TokenRateLimit,
    tokenGuard((_, params) => Effect.succeed(params["id"] === undefined ? undefined : `user:${params["id"]}`))
  ),
  Layer.effect(
    PartnerTokenRateLimit,
    tokenGuard((request) =>
      Effect.map(bodyField(request, "client_id"), (id) => (id === undefined ? undefined : `client:${id}`))
    )
  )
)
