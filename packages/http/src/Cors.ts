/**
 * CORS, on purpose. Browsers on the host's listed origins (`Settings.corsOrigins`, exact
 * `scheme://host[:port]` strings) may call the routes a payer's page calls: the `publicPayments`
 * group, which takes neither a client secret nor a token (POST /payments/, whose body names the
 * merchant, and GET /payments/{id}/public). No other route ever answers with an
 * `Access-Control-Allow-Origin`: the token routes take a client secret and the rest a bearer
 * token, and both belong on a server.
 *
 * A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) for a browser route
 * from a listed origin is answered 204 with the `Access-Control-*` headers; any other preflight
 * 403 `cors.preflight.refused`, without them, so the browser refuses the call it announced. A
 * plain request from a listed origin to a browser route gets `Access-Control-Allow-Origin` on its
 * answer, errors included, and may read `Request-Id` and `Retry-After`.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as FindMyWay from "find-my-way-ts"
import { Effect, FiberRef } from "effect"
import { CobroApi } from "./Api.js"
import { ApiError } from "./ApiError.js"
import { HttpConfig } from "./HttpConfig.js"
import { errorResponse } from "./internal/boundary.js"
import * as RequestId from "./RequestId.js"

/** The group whose routes browsers may call. */
export const browserGroup = "publicPayments"

/** The request headers a browser may send to a browser route. */
export const allowedHeaders = ["content-type", "idempotency-key", "x-request-id"] as const

/** The answer's headers a browser's script may read. */
export const exposedHeaders = [RequestId.header, "retry-after"] as const

/** How long a browser may keep a preflight's answer, in seconds. */
export const maxAge = 600

/** The methods of each browser route, by path (HEAD with every GET). */
const routes: FindMyWay.Router<ReadonlyArray<string>> = (() => {
  const methods = new Map<FindMyWay.PathInput, Array<string>>()
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      if (group.identifier !== browserGroup) return
      const at = methods.get(endpoint.path) ?? []
      at.push(endpoint.method, ...(endpoint.method === "GET" ? ["HEAD"] : []))
      methods.set(endpoint.path, at)
    }
  })
  const router = FindMyWay.make<ReadonlyArray<string>>({ maxParamLength: Number.MAX_SAFE_INTEGER })
  for (const [path, at] of methods) router.all(path, at)
  return router
})()

/** The methods browsers may use at `url`'s path; none: not a browser route. */
export const methodsAt = (url: string): ReadonlyArray<string> =>
  routes.find("GET", url.split("?")[0] ?? url)?.handler ?? []

/** An origin as `COBRO_CORS_ORIGINS` lists it: `scheme://host[:port]`, nothing more. */
export const isOrigin = (text: string): boolean => {
  try {
    const url = new URL(text)
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === text
  } catch {
    return false
  }
}

const refused = (detail: string) => ApiError.of(403, "cors.preflight.refused", detail)

/**
 * Answers preflights and marks browser routes' answers, as the module says. Applied around the
 * API (`CobroHttp.layer`); it needs nothing from the request's context but the request.
 */
export const middleware: Effect.Effect<(app: HttpApp.Default) => HttpApp.Default, never, HttpConfig> =
  Effect.map(HttpConfig, (config) => {
    const allowed = new Set(config.corsOrigins)
    return (app) =>
      RequestId.middleware(
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const origin = request.headers["origin"]
          const methods = methodsAt(request.url)
          const requested = request.headers["access-control-request-method"]
          if (request.method === "OPTIONS" && origin !== undefined && requested !== undefined) {
            const requestId = yield* FiberRef.get(RequestId.current)
            const refuse = (detail: string) =>
              errorResponse(refused(detail), "envelope", requestId).pipe(
                HttpServerResponse.setHeader("vary", "Origin")
              )
            if (!methods.includes(requested))
              return refuse(
                `${requested} ${request.url.split("?")[0]} is not open to browsers: it takes a client secret or a token, which stay on servers`
              )
            if (!allowed.has(origin)) return refuse(`the origin ${origin} is not one the server allows`)
            return HttpServerResponse.empty({
              status: 204,
              headers: {
                "access-control-allow-origin": origin,
                "access-control-allow-methods": methods.join(", "),
                "access-control-allow-headers": allowedHeaders.join(", "),
                "access-control-max-age": String(maxAge),
                vary: "Origin"
              }
            })
          }
          if (methods.length === 0) return yield* app
          const open = origin !== undefined && allowed.has(origin) && methods.includes(request.method)
          yield* HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(
              HttpServerResponse.setHeaders(
                response,
                open
                  ? {
                      "access-control-allow-origin": origin,
                      "access-control-expose-headers": exposedHeaders.join(", "),
                      vary: "Origin"
                    }
                  : { vary: "Origin" }
              )
            )
          )
          return yield* app
        })
      )
  })
