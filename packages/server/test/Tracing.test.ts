/**
 * Traces: with an OTLP endpoint the server exports its spans to a collector this test runs
 * (node:http on 127.0.0.1, OTLP/HTTP), one trace per request with the HTTP span as its root, the
 * engine's and the SQL spans under it; the trace id is in the response's `traceparent` and on the
 * request's log lines. Without one, no span is made at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, HashMap, Layer, List, Logger, Option, Redacted, Tracer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Admin, Server, Tracing } from "../src/index.js"
import { configOf, serverLayer, tempDb } from "./support.js"

interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** An OTLP/HTTP collector on 127.0.0.1: keeps every request, answers 200. */
const collector = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<Received>; readonly server: http.Server }>(
    (resume) => {
      const received: Array<Received> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) })
          res.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            received,
            server
          })
        )
      )
    }
  ),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

interface KeyValue {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: number | string }
}

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<KeyValue>
}

interface Export {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<KeyValue> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<Span> }>
  }>
}

const attribute = (attributes: ReadonlyArray<KeyValue>, key: string): unknown => {
  const found = attributes.find((a) => a.key === key)?.value
  return found?.stringValue ?? found?.intValue
}

const spansOf = (received: ReadonlyArray<Received>): ReadonlyArray<Span> =>
  received.flatMap((r) =>
    (JSON.parse(r.body.toString()) as Export).resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((s) => s.spans)
    )
  )

/** The test server's base URL (requests go through `fetch`: no client span, no `traceparent` sent). */
const baseUrl = Effect.map(HttpServer.HttpServer, (server) => Server.localUrl(server.address))

const payment = (external_id: string) => ({
  user_id: "tienda",
  external_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"]
})

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    }).then(async (r) => ({
      status: r.status,
      traceparent: r.headers.get("traceparent"),
      body: await r.text()
    }))
  )

const merchant = Admin.createUser({
  user_id: "tienda",
  name: "Tienda",
  email: "tienda@example.com",
  cuit: "30712345671",
  status: "ACTIVE"
})

/** Every log line with its annotations. */
const recordingLogger = (lines: Array<{ message: string; annotations: Record<string, unknown> }>) =>
  Logger.add(
    Logger.make(({ message, annotations }) => {
      lines.push({
        message: List.isList(message) ? String(List.toArray(message)) : String(message),
        annotations: Object.fromEntries(HashMap.toEntries(annotations))
      })
    })
  )

describe("traces over OTLP/HTTP", () => {
  it.scopedLive("POST /payments/: the HTTP span is the root, Payments.create its child, SQL under it", () =>
    Effect.gen(function* () {
      const otlp = yield* collector
      const config = yield* configOf({
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_JOB_INTERVAL: "1 hour",
        OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.url}/otlp/`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=s3cret%20key",
        OTEL_SERVICE_NAME: "cobro-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test"
      })
      const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
      const [created, continued] = yield* Effect.gen(function* () {
        yield* merchant
        const url = yield* baseUrl
        const created = yield* post(`${url}/payments/`, payment("order-secret-42"))
        const continued = yield* post(`${url}/payments/`, payment("order-2"), {
          traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        })
        // A credential in a header is exported redacted (the bearer token of a refused request).
        yield* Effect.promise(() =>
          fetch(`${url}/payments/pay_unknown`, { headers: { authorization: "Bearer tok-secret-1234" } })
        )
        // Probes make no span and get no traceparent.
        const probe = yield* Effect.promise(() => fetch(`${url}/healthz`))
        expect(probe.status).toBe(200)
        expect(probe.headers.get("traceparent")).toBeNull()
        return [created, continued] as const
      }).pipe(Effect.provide(serverLayer(config)), Effect.provide(recordingLogger(lines)), Effect.scoped)
      // The server is stopped: what was left has been sent on shutdown.

      expect(created.status).toBe(200)
      expect(otlp.received.length).toBeGreaterThan(0)
      for (const r of otlp.received) {
        expect(r.path).toBe("/otlp/v1/traces")
        expect(r.headers["content-type"]).toBe("application/json")
        expect(r.headers["x-collector-key"]).toBe("s3cret key")
      }
      const resource = (JSON.parse(otlp.received[0]!.body.toString()) as Export).resourceSpans[0]!.resource
      expect(attribute(resource.attributes, "service.name")).toBe("cobro-test")
      expect(attribute(resource.attributes, "service.version")).toBe(Server.version)
      expect(attribute(resource.attributes, "deployment.environment")).toBe("test")

      const spans = spansOf(otlp.received)
      const [, traceId, spanId] =
        /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(created.traceparent ?? "") ?? []
      expect(traceId, `traceparent: ${created.traceparent}`).toBeDefined()
      const trace = spans.filter((s) => s.traceId === traceId)
      const root = trace.find((s) => s.spanId === spanId)!
      expect(root).toMatchObject({ name: "http.server POST", kind: 2 })
      expect(root.parentSpanId ?? "").toBe("")
      expect(attribute(root.attributes, "http.route")).toBe("/payments/")
      expect(Number(attribute(root.attributes, "http.response.status_code"))).toBe(200)

      const create = trace.filter((s) => s.name === "Payments.create")
      expect(create).toHaveLength(1)
      expect(create[0]!.parentSpanId).toBe(root.spanId)
      const sql = trace.filter((s) => s.name === "sql.execute")
      expect(sql.length).toBeGreaterThan(0)
      expect(sql.filter((s) => s.parentSpanId === create[0]!.spanId).length).toBeGreaterThan(0)
      // Every span of the trace hangs from the root.
      const ids = new Set(trace.map((s) => s.spanId))
      for (const s of trace) if (s !== root) expect(ids.has(s.parentSpanId ?? "")).toBe(true)
      // Statements are exported with their placeholders, never with the values bound to them.
      for (const s of sql) expect(JSON.stringify(s.attributes)).not.toContain("order-secret-42")

      // An incoming traceparent: the HTTP span continues the caller's trace.
      expect(continued.status).toBe(200)
      expect(continued.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/)
      const child = spans.find((s) => s.traceId === "0af7651916cd43dd8448eb211c80319c" && s.kind === 2)
      expect(child?.parentSpanId).toBe("b7ad6b7169203331")
      expect(
        spans.some((s) => s.traceId === "0af7651916cd43dd8448eb211c80319c" && s.name === "Payments.create")
      ).toBe(true)

      // The request's log lines carry its trace id (the request log line at least).
      expect(lines.some((l) => l.annotations["trace_id"] === traceId)).toBe(true)
      for (const l of lines.filter((l) => l.annotations["trace_id"] !== undefined)) {
        expect(spans.some((s) => s.traceId === l.annotations["trace_id"])).toBe(true)
      }

      expect(spans.some((s) => attribute(s.attributes, "url.path") === "/healthz")).toBe(false)
      expect(otlp.received.some((r) => r.body.toString().includes("http.request.header.authorization"))).toBe(
        true
      )
      expect(otlp.received.some((r) => r.body.toString().includes("tok-secret-1234"))).toBe(false)
    })
  )

  it.scopedLive("the default protocol is OTLP/HTTP protobuf", () =>
    Effect.gen(function* () {
      const otlp = yield* collector
      const config = yield* configOf({
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_JOB_INTERVAL: "1 hour",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/custom/traces`
      })
      const created = yield* Effect.gen(function* () {
        yield* merchant
        return yield* post(`${yield* baseUrl}/payments/`, payment("order-1"))
      }).pipe(Effect.provide(serverLayer(config)), Effect.scoped)
      expect(created.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
      expect(otlp.received.length).toBeGreaterThan(0)
      for (const r of otlp.received) {
        expect(r.path).toBe("/custom/traces")
        expect(r.headers["content-type"]).toBe("application/x-protobuf")
      }
      // The trace id is in the encoded spans (protobuf bytes fields: the 16 raw bytes).
      const traceId = Buffer.from(created.traceparent!.slice(3, 35), "hex")
      expect(otlp.received.some((r) => r.body.includes(traceId))).toBe(true)
    })
  )

  it.scopedLive("without an endpoint: no span is made, no traceparent is sent", () =>
    Effect.gen(function* () {
      // Effect's own tracer, counting the spans it is asked for.
      const made: Array<string> = []
      const base = yield* Effect.tracer
      const counting = Tracer.make({
        span: (name, ...rest) => {
          made.push(name)
          return base.span(name, ...rest)
        },
        context: base.context
      })
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      expect(config.tracing).toEqual(Option.none())
      const created = yield* Effect.gen(function* () {
        yield* merchant
        made.length = 0
        return yield* post(`${yield* baseUrl}/payments/`, payment("order-1"))
      }).pipe(Effect.provide(serverLayer(config)), Effect.provide(Layer.setTracer(counting)), Effect.scoped)
      expect(created.status).toBe(200)
      expect(created.traceparent).toBeNull()
      expect(made).toEqual([])
    })
  )
})

describe("the banner", () => {
  it.effect("names where traces go, without the URL's password or query; nothing without an endpoint", () =>
    Effect.gen(function* () {
      const address = { _tag: "TcpAddress", hostname: "0.0.0.0", port: 3000 } as const
      const traced = yield* configOf({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://user:pa55@otel.example.com/v1/traces?key=k3y"
      })
      const lines = Server.banner(traced, address, undefined)
      expect(lines).toContain(
        "  Traces:     exported to https://user:***@otel.example.com/v1/traces (OTLP http/protobuf)"
      )
      expect(lines.join("\n")).not.toMatch(/pa55|k3y/)
      const untraced = yield* configOf({})
      expect(Server.banner(untraced, address, undefined).join("\n")).not.toContain("Traces:")
    })
  )
})

describe("Tracing.traceContext", () => {
  it.scopedLive(
    "annotates the request's log lines with its trace id and answers traceparent, errors too",
    () =>
      Effect.gen(function* () {
        const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
        const app = Effect.gen(function* () {
          yield* Effect.logInfo("handling")
          return yield* Effect.fail(new Error("boom"))
        }).pipe(Effect.as(HttpServerResponse.empty()))
        const response = yield* Effect.flatMap(baseUrl, (url) =>
          Effect.promise(() => fetch(`${url}/x`))
        ).pipe(
          Effect.provide(
            HttpServer.serve(app, Tracing.traceContext).pipe(
              Layer.provideMerge(NodeHttpServer.layer(http.createServer, { port: 0 }))
            )
          ),
          Effect.provide(recordingLogger(lines))
        )
        expect(response.status).toBe(500)
        const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(
          response.headers.get("traceparent") ?? ""
        )!
        const handling = lines.find((l) => l.message.includes("handling"))
        expect(handling?.annotations).toMatchObject({ trace_id: traceId, span_id: spanId })
      })
  )
})

describe("ServerConfig: the OTEL_* variables", () => {
  const tracingOf = (env: Record<string, string>) =>
    Effect.map(configOf(env), (config) => Option.getOrUndefined(config.tracing))
  const problemsOf = (env: Record<string, string>) =>
    Effect.map(Effect.flip(configOf(env)), (error) => error.problems)

  it.effect(
    "no endpoint (or an empty one, OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none): no tracing",
    () =>
      Effect.gen(function* () {
        expect(yield* tracingOf({})).toBeUndefined()
        expect(yield* tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeUndefined()
        const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
        expect(yield* tracingOf({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" })).toBeUndefined()
        expect(yield* tracingOf({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined()
        // Without an endpoint the other variables are not read: a platform-wide value stops nothing.
        expect(
          yield* tracingOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_TRACES_EXPORTER: "zipkin" })
        ).toBeUndefined()
      })
  )

  it.effect("the endpoint gets /v1/traces; the traces endpoint is used as it is; defaults", () =>
    Effect.gen(function* () {
      const base = yield* tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })
      expect(base).toMatchObject({
        url: "http://collector:4318/v1/traces",
        protocol: "http/protobuf",
        serviceName: "cobro",
        resourceAttributes: {},
        maxBatchSize: 512
      })
      expect(Duration.toMillis(base!.exportInterval)).toBe(5000)
      expect(Redacted.value(base!.headers)).toEqual({})
      expect((yield* tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com/otlp/" }))?.url).toBe(
        "https://otel.example.com/otlp/v1/traces"
      )
      expect(
        (yield* tracingOf({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/ingest"
        }))?.url
      ).toBe("http://traces:9999/ingest")
    })
  )

  it.effect("headers, protocol, service name, resource attributes and batching", () =>
    Effect.gen(function* () {
      const tracing = yield* tracingOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=abc%3D%3D, x-team=payments",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=ledger",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "HTTP/JSON",
        OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,deployment.environment=prod%201",
        OTEL_BSP_SCHEDULE_DELAY: "1000",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100"
      })
      expect(tracing).toMatchObject({
        protocol: "http/json",
        serviceName: "from-attributes",
        resourceAttributes: { "deployment.environment": "prod 1" },
        maxBatchSize: 100
      })
      expect(Redacted.value(tracing!.headers)).toEqual({ "api-key": "abc==", "x-team": "ledger" })
      // The headers carry credentials: never printed with the configuration.
      expect(String(tracing!.headers)).not.toContain("abc")
      expect(Duration.toMillis(tracing!.exportInterval)).toBe(1000)
      const named = yield* tracingOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_SERVICE_NAME: "cobro-eu",
        OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes"
      })
      expect(named?.serviceName).toBe("cobro-eu")
    })
  )

  it.effect("a bad value stops the start, naming the variable; all problems at once", () =>
    Effect.gen(function* () {
      const problems = yield* problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key",
        OTEL_RESOURCE_ATTRIBUTES: "a=%E0%A4%A",
        OTEL_BSP_SCHEDULE_DELAY: "10",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "0"
      })
      expect(problems).toEqual([
        expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL/),
        expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json .*"grpc"/),
        expect.stringMatching(/^OTEL_EXPORTER_OTLP_HEADERS must be a list of key=value/),
        expect.stringMatching(/^OTEL_RESOURCE_ATTRIBUTES has a value that is not valid percent-encoding/),
        expect.stringMatching(/^OTEL_BSP_SCHEDULE_DELAY must be an integer of at least 100/),
        expect.stringMatching(/^OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be an integer of at least 1/)
      ])
      expect(
        yield* problemsOf({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_TRACES_EXPORTER: "zipkin"
        })
      ).toEqual([expect.stringMatching(/^OTEL_TRACES_EXPORTER must be otlp or none/)])
      expect(yield* problemsOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://collector/traces" })).toEqual([
        expect.stringMatching(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http or https URL/)
      ])
    })
  )
})
