/**
 * Prometheus metrics at `GET /metrics`: every Effect `Metric` of the process (the engine's
 * counters, the webhook worker's, the HTTP requests counted here) exported through
 * `@effect/opentelemetry` to `@opentelemetry/exporter-prometheus`, which writes the text format.
 * The exporter is a `MetricReader` that never opens a port of its own: the route collects and
 * serializes on each scrape. This is independent of tracing (no tracer, no OpenTelemetry SDK).
 *
 * States of the database (the webhook backlog, outgoing transfers in flight) are read at scrape
 * time rather than counted, so every instance sharing one database reports the same values. So is
 * the connection pool's use on Postgres, which is this process's own.
 *
 * With `COBRO_METRICS_TOKEN` set, a scrape needs `Authorization: Bearer <token>`. With
 * `COBRO_METRICS_ADDR` set, the route is on a listener of its own there (`listener`), not on the
 * API's port. Production serves it only in one of those two ways (`ServerConfig.metricsExposure`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as OtelResource from "@effect/opentelemetry/Resource"
import { Metrics, type OutgoingTransfer } from "@cobro/core"
import { ApiError } from "@cobro/http"
import { SqlMonitoring } from "@cobro/sql"
import type { SqlClient } from "@effect/sql"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import {
  Context,
  DateTime,
  Effect,
  Layer,
  Metric,
  MetricBoundaries,
  MetricKey,
  Option,
  Redacted
} from "effect"
import * as Crypto from "node:crypto"
import * as Http from "node:http"

// --- HTTP requests -----------------------------------------------------------------------------

const requests = MetricKey.counter("cobro_http_requests", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})

const duration = MetricKey.histogram(
  "cobro_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time to answer an HTTP request, by route template and method, in seconds"
)

/** Labelled metrics by `method route status`: bounded by the routes, made once each. */
const labelledByRequest = new Map<
  string,
  { readonly count: Metric.Metric.Counter<number>; readonly time: Metric.Metric.Histogram<number> }
>()

/**
 * Counts one answered request. `route` is the route's template (`/payments/:paymentId`) or
 * `unmatched`, never the path a client sent: a label per id would grow without bound.
 */
export const recordRequest = (
  method: string,
  route: string,
  status: number,
  seconds: number
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const key = `${method} ${route} ${status}`
    let metrics = labelledByRequest.get(key)
    if (metrics === undefined) {
      metrics = {
        count: Metrics.labelled(requests, { route, method, status: String(status) }),
        time: Metrics.labelled(duration, { route, method })
      }
      labelledByRequest.set(key, metrics)
    }
    return Effect.zipRight(Metric.increment(metrics.count), Metric.update(metrics.time, seconds))
  })

// --- Database state ----------------------------------------------------------------------------

const gaugeKey = (name: string, description: string) => MetricKey.gauge(name, { description })
const gauge = (name: string, description: string) => Metric.fromMetricKey(gaugeKey(name, description))

const webhooksPending = gauge("cobro_webhook_deliveries_pending", "Webhook deliveries waiting for an attempt")
const webhooksOldestPending = gauge(
  "cobro_webhook_oldest_pending_age_seconds",
  "Age of the oldest pending webhook delivery's event, in seconds (0 when none is pending)"
)
const webhooksDead = gauge(
  "cobro_webhook_deliveries_dead",
  "Webhook deliveries that exhausted their retries or whose URL is refused, until replayed"
)
const inFlight = gaugeKey(
  "cobro_outgoing_transfers_in_flight",
  "Outgoing transfers whose outcome is not final yet, by kind and state (SENDING: the bank's answer is unknown or the transfer is not sent yet; PENDING: accepted by the bank)"
)
const oldestInFlight = gauge(
  "cobro_outgoing_transfers_oldest_in_flight_age_seconds",
  "Age of the oldest outgoing transfer not final yet, in seconds (0 when none is in flight)"
)
/**
 * The metric's `kind` of each purpose of a transfer (the job names of `cobro_jobs_*` where there
 * is one); typed by the purposes, so a new one cannot be left out of the gauges.
 */
const kinds: Record<OutgoingTransfer.TransferPurpose, string> = {
  schedule_payout: "payout_schedule",
  split_payout: "split_payout",
  refund: "refund"
}
const inFlightGauges = Object.entries(kinds).flatMap(([purpose, kind]) =>
  (["SENDING", "PENDING"] as const).map((status) => ({
    purpose,
    status,
    gauge: Metrics.labelled(inFlight, { kind, state: status })
  }))
)

/** Reads the database's state into the gauges; a failure is logged and leaves them as they were. */
const readDatabase: Effect.Effect<void, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const snapshot = yield* SqlMonitoring.read
  // The engine's time: what `created_ms` was stamped with (the sandbox clock in sandbox mode).
  const now = DateTime.toEpochMillis(yield* DateTime.now)
  yield* Metric.set(webhooksPending, snapshot.webhooksPending)
  yield* Metric.set(
    webhooksOldestPending,
    snapshot.webhooksOldestPendingMs === null ? 0 : Math.max(0, now - snapshot.webhooksOldestPendingMs) / 1000
  )
  yield* Metric.set(webhooksDead, snapshot.webhooksDead)
  // Every pair is set, to 0 when none is in flight, so a pair that drained does not keep its count.
  for (const { purpose, status, gauge } of inFlightGauges) {
    const row = snapshot.transfersInFlight.find((r) => r.purpose === purpose && r.status === status)
    yield* Metric.set(gauge, row?.count ?? 0)
  }
  yield* Metric.set(
    oldestInFlight,
    snapshot.transfersOldestInFlightMs === null
      ? 0
      : Math.max(0, now - snapshot.transfersOldestInFlightMs) / 1000
  )
}).pipe(
  Effect.catchAllCause((cause) =>
    Effect.logWarning(
      "metrics: the database's state could not be read; its gauges keep their last values",
      cause
    )
  )
)

// --- Connection pool (Postgres) ----------------------------------------------------------------

const poolOpen = gauge(
  "cobro_db_pool_connections_open",
  "Connections of this process's pool open (in use or idle)"
)
const poolIdle = gauge(
  "cobro_db_pool_connections_idle",
  "Open connections of this process's pool no query holds"
)
const poolInUse = gauge(
  "cobro_db_pool_connections_in_use",
  "Connections of this process's pool held by a query"
)
const poolWaiting = gauge(
  "cobro_db_pool_waiting",
  "Queries and transactions of this process waiting for a connection (the pool is at its maximum)"
)
const poolMax = gauge("cobro_db_pool_connections_max", "The most connections this process's pool opens")

/** Reads the pool's counts into the gauges (a storage with a pool: Postgres). */
const readPool = (pool: SqlMonitoring.ConnectionPool["Type"]): Effect.Effect<void> =>
  Effect.gen(function* () {
    const stats = yield* pool.stats
    yield* Metric.set(poolOpen, stats.total)
    yield* Metric.set(poolIdle, stats.idle)
    yield* Metric.set(poolInUse, Math.max(0, stats.total - stats.idle))
    yield* Metric.set(poolWaiting, stats.waiting)
    yield* Metric.set(poolMax, stats.max)
  })

// --- Exporter and route ------------------------------------------------------------------------

/** Writes every metric of the process in the Prometheus text format. */
export class Exporter extends Context.Tag("@cobro/server/Metrics/Exporter")<
  Exporter,
  { readonly scrape: Effect.Effect<string> }
>() {}

/** The exporter over Effect's metric registry; `version` is the service version of `target_info`. */
export const layer = (version: string): Layer.Layer<Exporter> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const reader = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true })
      const serializer = new PrometheusSerializer("", false, undefined, false, true)
      const scrape = Effect.promise(() => reader.collect()).pipe(
        Effect.map(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
      )
      return Layer.succeed(Exporter, { scrape }).pipe(
        Layer.provideMerge(OtelMetrics.layer(() => reader)),
        Layer.provide(OtelResource.layer({ serviceName: "cobro", serviceVersion: version }))
      )
    })
  )

const unauthorized = (key: string, detail: string) =>
  HttpServerResponse.unsafeJson(ApiError.toWire(ApiError.ApiError.of(401, key, detail), "envelope"), {
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="metrics"' }
  })

/** Whether `header` is `Bearer <token>`, compared in constant time. */
const authorized = (header: string | undefined, token: Redacted.Redacted): boolean => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")
  if (match === null) return false
  const given = Crypto.createHash("sha256").update(match[1]!).digest()
  const expected = Crypto.createHash("sha256").update(Redacted.value(token)).digest()
  return Crypto.timingSafeEqual(given, expected)
}

/**
 * The answer to `GET /metrics`, behind `token` when there is one (401 in the error envelope
 * without it), built on the server's exporter and database.
 */
const scrapeHandler = (token: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function* () {
    const exporter = yield* Exporter
    const context = yield* Effect.context<SqlClient.SqlClient>()
    // Only a storage that keeps a pool provides it (Postgres); without one, no pool gauges.
    const pool = Context.getOption(context, SqlMonitoring.ConnectionPool)
    return Effect.gen(function* () {
      if (Option.isSome(token)) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const header = request.headers["authorization"]
        if (header === undefined) {
          return unauthorized("auth.token.missing", "send Authorization: Bearer <COBRO_METRICS_TOKEN>")
        }
        if (!authorized(header, token.value))
          return unauthorized("auth.token.invalid", "the token is not the metrics token")
      }
      // The pool first: the database's queries would count among its connections in use.
      if (Option.isSome(pool)) yield* readPool(pool.value)
      yield* Effect.provide(readDatabase, context)
      return HttpServerResponse.text(yield* exporter.scrape, {
        contentType: "text/plain; version=0.0.4; charset=utf-8",
        headers: { "cache-control": "no-store" }
      })
    })
  })

/** `GET /metrics` on the API's router, behind `token` when there is one. */
export const routes = (token: Option.Option<Redacted.Redacted>) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(scrapeHandler(token), (handler) => router.get("/metrics", handler))
  )

/** Where the metrics' own listener listens (`listener`), once it does; none without one. */
export class Listener extends Context.Tag("@cobro/server/Metrics/Listener")<
  Listener,
  { readonly address: Option.Option<HttpServer.Address> }
>() {}

/** No listener of its own: `/metrics` is on the API's port, or not served. */
export const noListener: Layer.Layer<Listener> = Layer.succeed(Listener, { address: Option.none() })

/**
 * `GET /metrics` alone on its own node:http listener at `address` (`COBRO_METRICS_ADDR`), behind
 * `token` when there is one; any other path is 404. It closes with the layer.
 */
export const listener = (
  address: { readonly host: string; readonly port: number },
  token: Option.Option<Redacted.Redacted>
): Layer.Layer<Listener, HttpServerError.ServeError, Exporter | SqlClient.SqlClient> =>
  Layer.scoped(
    Listener,
    Effect.gen(function* () {
      const handler = yield* scrapeHandler(token)
      const server = yield* NodeHttpServer.make(() => Http.createServer(), address)
      yield* server.serve(HttpRouter.empty.pipe(HttpRouter.get("/metrics", handler)))
      return { address: Option.some(server.address) }
    })
  )
