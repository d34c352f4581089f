/**
 * What every hosted page's handler needs: a CSP nonce per response, the API's rate limits answered
 * as a page, and a last guard that turns a defect into a logged 500 page.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Crypto } from "@cobro/core"
import { Cause, Duration, Effect, Encoding, Option, Redacted } from "effect"
import type { ApiError } from "../../ApiError.js"
import { HttpConfig } from "../../HttpConfig.js"
import { Limits } from "../rateLimit.js"
import * as Csrf from "./csrf.js"
import * as Layout from "./layout.js"

export type Response = HttpServerResponse.HttpServerResponse

export interface PageKit {
  /** A fresh CSP nonce. */
  readonly newNonce: Effect.Effect<string>
  /** The public per-address limit's refusal of this request (which it counts), if any. */
  readonly limited: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Option.Option<ApiError>>
  /** The refusal of a request whose address or `subject` has used its wrong secrets, if any. */
  readonly locked: (
    request: HttpServerRequest.HttpServerRequest,
    subject: string
  ) => Effect.Effect<Option.Option<ApiError>>
  /** Counts a wrong secret (a password) for the request's address and `subject`. */
  readonly failed: (request: HttpServerRequest.HttpServerRequest, subject: string) => Effect.Effect<void>
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

const refusal = <R>(check: Effect.Effect<void, ApiError, R>) =>
  Effect.match(check, { onFailure: Option.some, onSuccess: () => Option.none() })

export const make: Effect.Effect<PageKit, never, Crypto.Crypto | HttpConfig | Limits> = Effect.gen(
  function* () {
    const crypto = yield* Crypto.Crypto
    const limits = yield* Limits
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
      limited: (request) => refusal(limits.publicRequest(request, undefined)),
      locked: (request, subject) => refusal(limits.locked(request, subject)),
      failed: limits.failed,
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
  }
)
