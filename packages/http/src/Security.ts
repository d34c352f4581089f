/**
 * Bearer authentication. A user token (`USR-…`) acts for its user; a partner token (`PAR-…`)
 * acts for the one user it was issued for. The middleware resolves the token to a `Principal`
 * that handlers read from `CurrentPrincipal`; a missing, malformed, unknown, revoked or expired
 * token is a 401 before any handler runs.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Auth, Principal } from "@cobro/core"
import { Context, Effect, FiberRef, Layer, Option } from "effect"
import { globalValue } from "effect/GlobalValue"
import { ApiError, envelopeError, fromDomain, statusError } from "./ApiError.js"

export class CurrentPrincipal extends Context.Tag("@cobro/http/CurrentPrincipal")<
  CurrentPrincipal,
  Principal.Principal
>() {}

/** Bearer authentication on routes with the `{message, error, code, data}` envelope. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@cobro/http/Authentication", {
  failure: envelopeError(401),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** Bearer authentication on partner and account routes (`{status, error, data}` envelope). */
export class PartnerAuthentication extends HttpApiMiddleware.Tag<PartnerAuthentication>()(
  "@cobro/http/PartnerAuthentication",
  {
    failure: statusError(401),
    provides: CurrentPrincipal,
    security: { bearer: HttpApiSecurity.bearer }
  }
) {}

/**
 * Who the request being served authenticated as, once its token checked: set on the request's
 * fiber by the authentication middleware, so a host's request log, running around the whole app,
 * reads it after the answer (`none` for routes without auth and for refused tokens).
 */
export const requestPrincipal: FiberRef.FiberRef<Option.Option<Principal.Principal>> = globalValue(
  Symbol.for("@cobro/http/Security/requestPrincipal"),
  () => FiberRef.unsafeMake(Option.none<Principal.Principal>())
)

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i

/** The token of an `Authorization: Bearer <token>` header. */
export const bearerToken = (authorization: string | undefined): Option.Option<string> => {
  const match = authorization === undefined ? null : BEARER.exec(authorization)
  return match === null ? Option.none() : Option.some(match[1]!)
}

const authenticate = Effect.gen(function* () {
  const auth = yield* Auth.Auth
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const header = request.headers["authorization"]
    const token = bearerToken(header)
    if (Option.isNone(token)) {
      return yield* ApiError.of(
        401,
        header === undefined ? "auth.token.missing" : "auth.token.malformed",
        header === undefined
          ? "this route needs an Authorization: Bearer <token> header"
          : "the Authorization header must be: Bearer <token>"
      )
    }
    return yield* auth.authenticate(token.value).pipe(
      Effect.mapError(fromDomain),
      Effect.tap((principal) => FiberRef.set(requestPrincipal, Option.some(principal)))
    )
  })
})

export const layerAuthentication: Layer.Layer<Authentication, never, Auth.Auth> = Layer.effect(
  Authentication,
  Effect.map(authenticate, (run) => Authentication.of({ bearer: () => run }))
)

export const layerPartnerAuthentication: Layer.Layer<PartnerAuthentication, never, Auth.Auth> = Layer.effect(
  PartnerAuthentication,
  Effect.map(authenticate, (run) => PartnerAuthentication.of({ bearer: () => run }))
)
