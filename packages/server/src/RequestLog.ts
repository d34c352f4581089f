/**
 * The server's logs: the format `COBRO_LOG_FORMAT` names (Effect's own loggers), and one line per
 * request once it is answered.
 *
 * A request's line carries the route template (`/payments/:paymentId`, never the path a client
 * sent, which may hold a CVU), the method, the status, the duration in milliseconds and, when the
 * request authenticated, the merchant's `user_id` (and `partner_id` for a partner token). It never
 * carries a header, a query, a body or the path itself, so no token, secret or payer account
 * reaches the log through it. A path no route knows is logged as `unmatched`. Probes
 * (`/healthz`, `/readyz`, `/metrics`) are logged at debug level: an orchestrator polls them
 * every few seconds. A 5xx is an error line (its cause is logged apart, where it happened).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Security } from "@cobro/http"
import { Chunk, Effect, FiberRef, Layer, Logger, LogLevel, Option } from "effect"
import * as Metrics from "./Metrics.js"
import type { LogFormat } from "./ServerConfig.js"

/** Effect's logger of `format`, in place of the default one (logfmt). */
export const layer = (format: LogFormat): Layer.Layer<never> => {
  switch (format) {
    case "json":
      return Logger.json
    case "pretty":
      return Logger.pretty
    case "logfmt":
      return Logger.logFmt
  }
}

/** What the route matcher answers in; never sent to a client. */
const ROUTE_HEADER = "x-cobro-route"

/** The route label of a request no route matches. */
export const unmatched = "unmatched"

/** Routes polled by machines: their lines are debug lines. */
const probes = new Set(["/healthz", "/readyz", "/metrics"])

/**
 * A matcher over the routes of the server's router (the API, the hosted pages, the docs, the
 * sandbox and probe routes), built once from them: the same router library finds the same route
 * the request reached, and answers its template.
 */
const makeMatcher = Effect.gen(function* () {
  // `HttpApiBuilder.serve` provides the router to the app it serves (and so to this middleware).
  const service = yield* Effect.serviceOption(HttpApiBuilder.Router)
  if (Option.isNone(service)) return () => Effect.succeed(unmatched)
  const router = yield* service.value.router
  const templates = HttpRouter.fromIterable(
    Chunk.map(router.routes, (route) =>
      HttpRouter.makeRoute(
        route.method,
        route.path,
        Effect.succeed(HttpServerResponse.empty({ headers: { [ROUTE_HEADER]: route.path } }))
      )
    )
  )
  const app = yield* HttpRouter.toHttpApp(templates)
  return (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string> =>
    app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.map((response) => response.headers[ROUTE_HEADER] ?? unmatched),
      Effect.orElseSucceed(() => unmatched)
    )
})

/**
 * The request log as an `HttpApp` middleware: the line is written after the app answered (or
 * failed, or the client went away: status 499, as the platform reports it).
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
  let matcher: ((request: HttpServerRequest.HttpServerRequest) => Effect.Effect<string>) | undefined
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const exit = yield* Effect.exit(app)
    const elapsed = performance.now() - started
    const duration = Math.round(elapsed * 10) / 10
    if (matcher === undefined) matcher = yield* makeMatcher
    const route = yield* matcher(request)
    const status = HttpServerError.exitResponse(exit).status
    // The same route, status and time feed the HTTP metrics (`Metrics.recordRequest`).
    yield* Metrics.recordRequest(request.method, route, status, elapsed / 1000)
    const principal = yield* FiberRef.get(Security.requestPrincipal)
    const level = probes.has(route) ? LogLevel.Debug : status >= 500 ? LogLevel.Error : LogLevel.Info
    yield* Effect.logWithLevel(level, "request").pipe(
      Effect.annotateLogs({
        "http.method": request.method,
        "http.route": route,
        "http.status": status,
        duration_ms: duration,
        ...Option.match(principal, {
          onNone: () => ({}),
          onSome: (p) =>
            p._tag === "Partner" ? { user_id: p.user_id, partner_id: p.partner_id } : { user_id: p.user_id }
        })
      })
    )
    return yield* exit
  })
}
