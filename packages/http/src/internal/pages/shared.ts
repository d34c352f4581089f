/**
 * What every hosted page's handler needs: a CSP nonce per response, the API's rate limits answered
 * as a page, and a last guard that turns a defect into a logged 500 page.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Crypto } from "@cobro/core"
import { Cause, Duration, Effect, Encoding, Option, Redacted } from "effect"
import type { ApiError } from "../../ApiError.js"
import { HttpConfig } from "../../HttpConfig.js"
import * as RateLimit from "../rateLimit.js"
import * as Csrf from "./csrf.js"
import * as Layout from "./layout.js"

export type Response = HttpServerResponse.HttpServerResponse

export interface PageKit {
  /** A fresh CSP nonce. */
  readonly newNonce: Effect.Effect<string>
  /** The rate limit `bucket` refuses this request with, if any. */
  readonly limited: (
    request: HttpServerRequest.HttpServerRequest,
    bucket: RateLimit.Bucket,
    subject: string | undefined
  ) => Effect.Effect<Option.Option<ApiError>>
  /** The 429 page, with `retry-after`. */
  readonly tooMany: (nonce: string, error: ApiError) => Response
  /** A failure nobody expected: logged with its cause, answered with a page that says only that. */
  readonly guarded: <R>(handler: Effect.Effect<Response, never, R>) => Effect.Effect<Response, never, R>
  /** The pages' CSRF tokens (one key for every form of this server). */
  readonly csrf: Csrf.CsrfShape
  /** `response` with the CSRF cookie set to `token`. */
  readonly withCsrfCookie: (
    request: HttpServerRequest.HttpServerRequest,
    token: string
  ) => (response: Response) => Response
}

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

export const make: Effect.Effect<PageKit, never, Crypto.Crypto | HttpConfig | RateLimiter.RateLimiter> =
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    // The rate limiter's services, given to the handlers (routes may only need request services).
    const limits = yield* Effect.context<HttpConfig | RateLimiter.RateLimiter>()
    const newNonce = Effect.map(crypto.randomBytes(16), Encoding.encodeBase64)
    const config = yield* HttpConfig
    const csrf = yield* Csrf.make(
      config.csrfKey === undefined ? yield* crypto.randomBytes(32) : Redacted.value(config.csrfKey)
    )
    return {
      newNonce,
      csrf,
      withCsrfCookie: (request, token) =>
        HttpServerResponse.unsafeSetCookie(Csrf.COOKIE, token, {
          httpOnly: true,
          sameSite: "strict",
          path: "/",
          maxAge: Duration.seconds(Csrf.TOKEN_LIFETIME_SECONDS),
          secure: first(request.headers["x-forwarded-proto"]) === "https"
        }),
      limited: (request, bucket, subject) =>
        RateLimit.check(request, bucket, subject).pipe(
          Effect.provide(limits),
          Effect.match({ onFailure: Option.some, onSuccess: () => Option.none() })
        ),
      tooMany: (nonce, error) =>
        Layout.messagePage({
          nonce,
          status: 429,
          title: "Demasiados pedidos",
          message: `Recibimos demasiados pedidos desde tu conexión. Esperá ${error.retry_after ?? 60} segundos y volvé a intentar.`,
          headers: { "retry-after": String(error.retry_after ?? 60) }
        }),
      guarded: (handler) =>
        Effect.catchAllDefect(handler, (defect) =>
          Effect.zipRight(
            Effect.logError("hosted page failed", Cause.die(defect)),
            Effect.map(newNonce, (nonce) =>
              Layout.messagePage({
                nonce,
                status: 500,
                title: "Algo salió mal",
                message: "Tuvimos un problema de nuestro lado. Volvé a intentar en unos minutos."
              })
            )
          )
        )
    }
  })
