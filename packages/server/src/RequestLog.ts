/**
 * The server's logs: the format `COBRO_LOG_FORMAT` names (Effect's own loggers) with timestamps in
 * real time, and one line per request once it is answered.
 *
 * Effect stamps a line with the clock of the fiber that logs it, which in the sandbox is the
 * merchant's test clock when the work is that merchant's: a log would jump days ahead and back.
 * Every line carries real time instead, and a line logged on a merchant's moved clock carries that
 * clock's time in `merchant_clock`.
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
import { Pages, Security } from "@cobro/http"
import {
  Clock,
  Context,
  DefaultServices,
  Effect,
  FiberRef,
  FiberRefs,
  HashMap,
  type Layer,
  Logger,
  LogLevel,
  Option
} from "effect"
import * as FindMyWay from "find-my-way-ts"
import * as Metrics from "./Metrics.js"
import type { LogFormat } from "./ServerConfig.js"

/** The field of a line logged on a clock other than real time: that clock's time (ISO 8601). */
export const merchantClockField = "merchant_clock"

/**
 * `logger` with the line's time read from `real`; when the fiber that logs runs on another clock
 * (a merchant's moved test clock), that clock's time goes in `merchant_clock`.
 */
export const onRealTime = <Message, Output>(
  logger: Logger.Logger<Message, Output>,
  real: Clock.Clock
): Logger.Logger<Message, Output> =>
  Logger.mapInputOptions(logger, (options) => {
    const clock = Context.get(
      FiberRefs.getOrDefault(options.context, DefaultServices.currentServices),
      Clock.Clock
    )
    if (clock === real) return options
    const now = real.unsafeCurrentTimeMillis()
    return {
      ...options,
      date: new Date(now),
      annotations:
        options.date.getTime() === now
          ? options.annotations
          : HashMap.set(options.annotations, merchantClockField, options.date.toISOString())
    }
  })

const loggerOf = (format: LogFormat): Logger.Logger<unknown, void> => {
  switch (format) {
    case "json":
      return Logger.withConsoleLog(Logger.jsonLogger)
    case "pretty":
      return Logger.prettyLoggerDefault
    case "logfmt":
      return Logger.withConsoleLog(Logger.logfmtLogger)
  }
}

/**
 * Effect's logger of `format`, in place of the default one (logfmt), on real time: the `Clock`
 * this layer is built on (the system's, or a test's).
 */
export const layer = (format: LogFormat): Layer.Layer<never> =>
  Logger.replaceEffect(
    Logger.defaultLogger,
    Effect.map(Effect.clock, (real) => onRealTime(loggerOf(format), real))
  )

/** The route label of a request no route matches. */
export const unmatched = "unmatched"

/** Routes polled by machines: their lines are debug lines. */
const probes = new Set(["/healthz", "/readyz", "/metrics"])

/**
 * A matcher over the routes of the server's router (the API, the hosted pages, the docs, the
 * sandbox and probe routes), built once from them in the router library the server routes with,
 * with its configuration: the same route the request reached, and its template. A lookup, not a
 * second run of the router: this runs on every request.
 */
const makeMatcher = Effect.gen(function* () {
  // `HttpApiBuilder.serve` provides the router to the app it serves (and so to this middleware).
  const service = yield* Effect.serviceOption(HttpApiBuilder.Router)
  if (Option.isNone(service)) return () => unmatched
  // The hosted pages have a router of their own (`Pages.PageRouter`, which `CobroHttp.layer` provides).
  const pages = yield* Effect.serviceOption(Pages.PageRouter)
  const routers = [yield* service.value.router, ...(Option.isSome(pages) ? [yield* pages.value.router] : [])]
  const templates = FindMyWay.make<string>(yield* FiberRef.get(HttpRouter.currentRouterConfig))
  for (const route of routers.flatMap((router) => [...router.routes])) {
    if (route.method === "*") templates.all(route.path, route.path)
    else templates.on(route.method, route.path, route.path)
  }
  return (request: HttpServerRequest.HttpServerRequest): string =>
    (
      templates.find(request.method, request.url) ??
      (request.method === "HEAD" ? templates.find("GET", request.url) : undefined)
    )?.handler ?? unmatched
})

/**
 * The request log as an `HttpApp` middleware: the line is written after the app answered (or
 * failed, or the client went away: status 499, as the platform reports it). A line below the
 * minimum log level is not built at all (the metrics are recorded either way): this runs on
 * every request.
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
  let matcher: ((request: HttpServerRequest.HttpServerRequest) => string) | undefined
  return Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const started = performance.now()
    return Effect.flatMap(Effect.exit(app), (exit) => {
      const elapsed = performance.now() - started
      const answer = (match: (request: HttpServerRequest.HttpServerRequest) => string) => {
        const route = match(request)
        const status = HttpServerError.exitResponse(exit).status
        // The same route, status and time feed the HTTP metrics (`Metrics.recordRequest`).
        const recorded = Metrics.recordRequest(request.method, route, status, elapsed / 1000)
        const level = probes.has(route) ? LogLevel.Debug : status >= 500 ? LogLevel.Error : LogLevel.Info
        if (LogLevel.lessThan(level, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) {
          return Effect.zipRight(recorded, exit)
        }
        const principal = fiber.getFiberRef(Security.requestPrincipal)
        const line = Effect.logWithLevel(level, "request").pipe(
          Effect.annotateLogs({
            "http.method": request.method,
            "http.route": route,
            "http.status": status,
            duration_ms: Math.round(elapsed * 10) / 10,
            ...Option.match(principal, {
              onNone: () => ({}),
              onSome: (p) =>
                p._tag === "Partner"
                  ? { user_id: p.user_id, partner_id: p.partner_id }
                  : { user_id: p.user_id }
            })
          })
        )
        return Effect.zipRight(Effect.zipRight(recorded, line), exit)
      }
      if (matcher !== undefined) return answer(matcher)
      return Effect.flatMap(makeMatcher, (made) => answer((matcher = made)))
    })
  })
}
