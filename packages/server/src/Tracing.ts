/**
 * Traces, opt-in. With an OTLP endpoint configured (`ServerConfig.tracing`, from the standard
 * `OTEL_*` variables) every span (the HTTP server span of each request, the engine's `Effect.fn`
 * spans, `@effect/sql`'s statements, the background work) is exported over OTLP/HTTP by
 * `@effect/opentelemetry`'s `OtlpTracer`, which speaks OTLP with Effect's `HttpClient`: no
 * OpenTelemetry SDK runs in the process. Without one, tracing is off: spans are not created (the
 * engine's `Effect.fn` spans become no-ops) and the HTTP middleware skips its span entirely.
 *
 * A request's HTTP span is the root of its trace, or the child of the caller's span when the
 * request carries a W3C `traceparent` (or B3) header. Its trace and span ids are annotated on the
 * request's log lines (`trace_id`, `span_id`) and sent back in a `traceparent` response header.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ConfigProvider, Context, Effect, FiberRef, Function, Layer, Option, Redacted, Tracer } from "effect"
import type { Tracing } from "./ServerConfig.js"

/**
 * Paths whose requests get no span: the orchestrator's probes and the metrics scrape, which come
 * every few seconds and would bury the traces of the API.
 */
export const untracedPaths: ReadonlyArray<string> = ["/healthz", "/readyz", "/metrics"]

const untraced = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const query = request.url.indexOf("?")
  return untracedPaths.includes(query < 0 ? request.url : request.url.slice(0, query))
}

/** No tracer calls at all: the engine's spans are no-ops and the HTTP middleware makes none. */
const disabled: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.zipRight(
    Effect.locallyScoped(FiberRef.currentTracerEnabled, false),
    Effect.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, Function.constTrue)
  )
)

/** Spans exported to `tracing.url`, batched; what is left is sent when the layer is released. */
const exporting = (tracing: Tracing, serviceVersion: string): Layer.Layer<never> =>
  Layer.unwrapScoped(
    OtlpTracer.make({
      url: tracing.url,
      resource: {
        serviceName: tracing.serviceName,
        serviceVersion,
        attributes: tracing.resourceAttributes
      },
      headers: Redacted.value(tracing.headers),
      exportInterval: tracing.exportInterval,
      maxBatchSize: tracing.maxBatchSize
    }).pipe(
      // The resource is the configuration's alone (the exporter would also read the environment's).
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
      Effect.map((tracer) =>
        Layer.merge(
          Layer.setTracer(tracer),
          Layer.scopedDiscard(Effect.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, untraced))
        )
      )
    )
  ).pipe(
    Layer.provide(
      Layer.merge(
        tracing.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf,
        FetchHttpClient.layer
      )
    )
  )

/**
 * Tracing as configured: exported over OTLP/HTTP, or off. Provide it below everything else (it
 * sets the tracer of what is built on top of it, and flushes the last spans when released).
 */
export const layer = (tracing: Option.Option<Tracing>, serviceVersion: string): Layer.Layer<never> =>
  Option.match(tracing, { onNone: () => disabled, onSome: (t) => exporting(t, serviceVersion) })

/** The collector's URL for the banner and logs: without a password or query (they may hold a key). */
export const describeUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    parsed.search = ""
    return parsed.toString()
  } catch {
    return "an OTLP endpoint"
  }
}

/** `traceparent` of a span (W3C Trace Context: version 00, sampled). */
export const traceparent = (span: { readonly traceId: string; readonly spanId: string }): string =>
  `00-${span.traceId}-${span.spanId}-01`

/**
 * The HTTP server span, for the request's logs and its caller: every log line of the request is
 * annotated with `trace_id` and `span_id`, and the response (errors included) carries
 * `traceparent` with them. Nothing when the request has no span (tracing off, or a probe).
 * Runs inside the HTTP span: `HttpApiBuilder.serve(traceContext)`; a middleware that logs the
 * request must run inside this one to get the annotations.
 */
export const traceContext = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  // The span read from the context as `Effect.currentSpan` reads it, without its failure: with
  // tracing off every request has none, and that failure built an `Error` (a stack trace) each time.
  Effect.withFiberRuntime((fiber) => {
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (Option.isNone(span) || span.value._tag !== "Span" || !span.value.sampled) return app
    const { traceId, spanId } = span.value
    const header = traceparent({ traceId, spanId })
    return HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "traceparent", header))
    ).pipe(Effect.zipRight(app), Effect.annotateLogs({ trace_id: traceId, span_id: spanId }))
  })
