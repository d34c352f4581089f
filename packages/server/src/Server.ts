/**
 * The reference server: the engine over the configured storage, the HTTP API (with `/docs` and
 * `/openapi.json`; in sandbox mode its sandbox routes work), and the background work, on one port.
 *
 * Start-up order: storage (opened and migrated), the engine and the background work first, then
 * the port opens, then the API. Shutdown is the reverse: the port stops accepting and the
 * requests in flight finish, the workers finish their current run, then the database closes.
 */
import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Path from "@effect/platform/Path"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { BindConfig } from "@cobro/bank-bind"
import { CobroHttp, type HttpConfig, Pages, RequestId } from "@cobro/http"
import { NodeHttp } from "@cobro/http/node"
import { Config, Console, Context, Duration, Effect, Layer, Logger, Option, Redacted } from "effect"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as Admin from "./Admin.js"
import { banner, version } from "./Banner.js"
import * as Background from "./Background.js"
import * as BankRoutes from "./BankRoutes.js"
import * as Health from "./Health.js"
import * as Metrics from "./Metrics.js"
import * as RateLimits from "./RateLimits.js"
import * as Reference from "./Reference.js"
import * as RequestLog from "./RequestLog.js"
import { type ServerConfig, variables } from "./ServerConfig.js"
import { metricsExposure, problemsOf, ServerConfigError, startProblem } from "./ServerConfig.js"
import * as Services from "./Services.js"
import * as Tracing from "./Tracing.js"

export { bankLine, banner, localUrl, metricsLine, version } from "./Banner.js"

/** The client address behind one trusted proxy: the last `X-Forwarded-For` entry (the one it added). */
export const forwardedAddress = (request: HttpServerRequest.HttpServerRequest): string => {
  const header = request.headers["x-forwarded-for"]
  const last = header
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .at(-1)
  return last ?? Option.getOrElse(request.remoteAddress, () => "unknown")
}

/** The client address of a request without a proxy in front: the peer's. */
const clientAddress = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

/**
 * The key of the onboarding form's CSRF tokens, derived from the secret key: every instance with
 * the same `COBRO_SECRET_KEY` accepts the forms the others render.
 */
export const csrfKeyOf = (config: ServerConfig): Redacted.Redacted<Uint8Array> =>
  Redacted.make(
    new Uint8Array(
      Crypto.createHmac("sha256", Redacted.value(config.secretKey)).update("cobro/csrf/v1").digest()
    )
  )

const httpSettings = (config: ServerConfig): Partial<HttpConfig.Settings> => ({
  csrfKey: csrfKeyOf(config),
  ...(config.trustProxy ? { clientAddress: forwardedAddress } : {}),
  rateLimits: config.rateLimits ? config.limits : false,
  corsOrigins: config.corsOrigins,
  dashboard: {
    secondFactor: config.mode === "production",
    secureCookie: config.mode === "production",
    idleTimeout: config.dashboard.idleTimeout,
    absoluteTimeout: config.dashboard.sessionLifetime,
    apiBaseUrl: config.publicUrl,
    sandbox: config.mode === "sandbox"
  }
})

/** What `NodeHttpServer.layer` (and `layerTest`) provide. */
export type NodeServer = Layer.Layer.Success<ReturnType<typeof NodeHttpServer.layer>>

/**
 * What the API is served on of the server's context (`CobroHttp.restricted`): each request starts
 * on the context its server was served in and copies it at every provide, so it holds only what
 * a request reads from it: the node:http server's services (files, paths, etags), the API, and
 * the engine's `Context.Reference`s (read where set, their defaults otherwise). The routes are
 * built beside it, on the server's context; each keeps the services it calls.
 */
const servedOn = [
  HttpServer.HttpServer,
  HttpPlatform.HttpPlatform,
  Etag.Generator,
  FileSystem.FileSystem,
  Path.Path,
  HttpApi.Api,
  Pages.PageRouter,
  ...CobroHttp.engineReferences
] as const

/** `GET /metrics` on the API's port, unless it has its own address or is not served (production without a token). */
const metricsOnApi = (config: ServerConfig) => {
  const exposure = metricsExposure(config)
  return exposure._tag === "Open" || exposure._tag === "Token"
    ? Metrics.routes(config.metricsToken).pipe(Layer.provide(Metrics.layer(version)))
    : Layer.empty
}

/** `GET /metrics` on its own listener at `COBRO_METRICS_ADDR`, when set; a failure to listen names it. */
const metricsOwnListener = (config: ServerConfig) => {
  const exposure = metricsExposure(config)
  if (exposure._tag !== "Address") return Metrics.noListener
  const { host, port } = exposure.address
  return Metrics.listener(exposure.address, config.metricsToken).pipe(
    Layer.provide(Metrics.layer(version)),
    Layer.mapError(
      (error) =>
        new ServerConfigError({
          problems: [
            `${variables.metricsAddress}: cannot listen on ${host}:${port}: ${String((error.cause as Error | undefined)?.message ?? error.cause)}`
          ]
        })
    )
  )
}

// Middleware given to `serve` runs inside the HTTP server span; `Tracing.traceContext` outermost,
// so that everything inside (a request log line included) is annotated with the trace id; the
// request's id (`RequestId.middleware`) outside the request log, so that its line has the id too.
const api = (config: ServerConfig, bankRoutes: ReturnType<typeof BankRoutes.layer>) =>
  CobroHttp.restricted(
    HttpApiBuilder.serve((app) =>
      Tracing.traceContext(RequestId.middleware(RequestLog.middleware(Reference.compression(app))))
    ),
    servedOn
  ).pipe(
    Layer.provide(
      Layer.mergeAll(
        CobroHttp.layer(httpSettings(config)).pipe(Layer.provide(RateLimits.layer(config))),
        Health.routes,
        Reference.home,
        metricsOnApi(config),
        bankRoutes
      )
    )
  )

/**
 * The whole server of `config.mode` over `http`: storage and the engine first, then the
 * background work, then `http` (the port), then the API. Shutdown runs in
 * reverse: the API and the port go first (requests in flight finish), then the background runs
 * finish, then the database closes. `layer` passes node:http on `config.port`; tests pass
 * `NodeHttpServer.layerTest`.
 */
export const layerWith = <HttpError>(
  config: ServerConfig,
  http: Layer.Layer<NodeServer, HttpError>
): Layer.Layer<
  Services.Services | NodeServer | Health.Lifecycle | Metrics.Listener,
  Services.LayerError | ServerConfigError | HttpError
> => Health.stopFirst(config.shutdownDelay).pipe(Layer.provideMerge(serving(config, http)))

/** `layerWith` without its first step of a shutdown (`/readyz` turns 503, then `shutdownDelay`). */
const serving = <HttpError>(
  config: ServerConfig,
  http: Layer.Layer<NodeServer, HttpError>
): Layer.Layer<
  Services.Services | NodeServer | Health.Lifecycle | Metrics.Listener,
  Services.LayerError | ServerConfigError | HttpError
> => {
  const background = Layer.mergeAll(
    Background.layer(config.jobInterval),
    Background.webSessionsPurge({
      idle: config.dashboard.idleTimeout,
      absolute: config.dashboard.sessionLifetime
    }),
    config.bank === "sandbox" ? Layer.empty : Background.reconciliation(config.reconcileInterval)
  )
  const bankRoutes = BankRoutes.layer(config, config.trustProxy ? forwardedAddress : clientAddress)
  const served = Layer.merge(api(config, bankRoutes), metricsOwnListener(config))
  const server =
    config.mode === "sandbox"
      ? served.pipe(
          Layer.provideMerge(http),
          Layer.provideMerge(Layer.provideMerge(background, Services.layerSandbox(config)))
        )
      : served.pipe(
          Layer.provideMerge(http),
          Layer.provideMerge(Layer.provideMerge(background, Services.layerProduction(config)))
        )
  // Built first and released last: everything runs under its tracer, and the last spans are sent.
  return Layer.provide(server, Tracing.layer(config.tracing, version)).pipe(
    Layer.provideMerge(Health.layerLifecycle)
  )
}

/** How long a shutdown waits for the requests in flight before it cuts their connections. */
export const drainTimeout = Duration.seconds(30)

/**
 * Stops `server` accepting connections and waits until the requests in flight are answered
 * (idle keep-alive connections are closed as they become idle), up to `drainTimeout`. It runs
 * first on shutdown, while the API's handler is still attached.
 */
export const drain = (server: Http.Server): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    const idle = setInterval(() => server.closeIdleConnections(), 100)
    const force = setTimeout(() => server.closeAllConnections(), Duration.toMillis(drainTimeout))
    server.close(() => {
      clearInterval(idle)
      clearTimeout(force)
      resume(Effect.void)
    })
    server.closeIdleConnections()
  })

/**
 * The node:http server the API runs on: what node's HTTP parser refuses before routing (headers
 * over 16 KiB, a malformed request) is answered with the error envelope, not a bare status line;
 * a response keeps no `close` listener once closed (`NodeHttp.dropCloseListeners`).
 */
export const createHttpServer = (): Http.Server => {
  const server = Http.createServer()
  server.on("clientError", NodeHttp.onClientError)
  // Registered before the API's handler (added when the server listens), so that it runs first.
  server.on("request", (_request, response) => NodeHttp.dropCloseListeners(response))
  return server
}

/**
 * The server on node:http at `port` (`config.port`; tests pass 0). On shutdown `/readyz` turns 503
 * first and the port stays open for `config.shutdownDelay`; then it is drained while the API's
 * handler is still attached: a request that arrives on a kept-alive connection meanwhile (a bank
 * event, say) is answered, never left on a connection without a handler that would keep the
 * close waiting.
 */
export const layer = (config: ServerConfig, port: number = config.port) =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const server = createHttpServer()
      return Health.stopFirst(config.shutdownDelay).pipe(
        Layer.provideMerge(
          Layer.scopedDiscard(Effect.addFinalizer(() => drain(server))).pipe(
            Layer.provideMerge(
              serving(
                config,
                NodeHttpServer.layer(() => server, { port })
              )
            )
          )
        )
      )
    })
  )

/** Where `/metrics` listens on its own (`COBRO_METRICS_ADDR`), once it does; none when it does not. */
export const metricsAddress: Effect.Effect<
  Option.Option<HttpServer.Address>,
  never,
  Metrics.Listener
> = Effect.map(Metrics.Listener, (listener) => listener.address)

/**
 * Lets V8's young generation grow again once the server has started: `bin/cobro.js serve` holds it
 * at its initial size during the start, so the start's long-lived allocations do not
 * leave an idle server with its maximum. A no-op when the server was not started that way.
 */
export const releaseYoungGeneration = (): void => {
  const release = (globalThis as Record<symbol, unknown>)[Symbol.for("cobro.releaseYoungGeneration")]
  if (typeof release === "function") release()
}

/**
 * Runs the server until interrupted (SIGINT/SIGTERM under `NodeRuntime.runMain`), printing the
 * banner once it listens and, in sandbox mode, creating the demo merchant on first start.
 */
export const run = (config: ServerConfig) =>
  Effect.scoped(
    Effect.gen(function* () {
      const refused = startProblem(config)
      if (Option.isSome(refused)) return yield* new ServerConfigError({ problems: [refused.value] })
      if (config.bank === "bind")
        yield* Effect.mapError(
          Config.all([BindConfig.config, BindConfig.ingressConfig]),
          (error) => new ServerConfigError({ problems: [...new Set(problemsOf(error))] })
        )
      const context = yield* Layer.build(layer(config))
      const { address } = Context.get(context, HttpServer.HttpServer)
      const demo = config.mode === "sandbox" ? yield* Effect.provide(Admin.ensureDemo(), context) : undefined
      if (config.mode !== "sandbox") {
        yield* Effect.logWarning("production mode: 2FA codes are the sandbox's (no second-factor provider)")
      }
      yield* Effect.sync(releaseYoungGeneration)
      const { address: metrics } = Context.get(context, Metrics.Listener)
      yield* Console.log(banner(config, address, demo, metrics).join("\n"))
      yield* Effect.addFinalizer(() =>
        Console.log("cobro: stopping: no new requests; finishing requests and background work in flight")
      )
      return yield* Effect.never
    })
  ).pipe(
    Logger.withMinimumLogLevel(config.logLevel),
    Effect.provide(RequestLog.layer(config.logFormat)),
    Effect.onInterrupt(() => Console.log("cobro: stopped"))
  )
