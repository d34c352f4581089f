/**
 * What spans cost when nobody exports them: create-payment through the server's HTTP API in
 * process (a web handler: no socket, no client), on SQLite, with tracing off as the server runs
 * without an OTLP endpoint (`Tracing.layer` of none: no tracer call, no HTTP span) beside
 * Effect's default tracer on (every span made, then dropped: what the server did before). The
 * two run in the same process on the same database, in alternating rounds, so drift and noise
 * fall on both. Not part of the tests.
 *
 *   npm run bench:tracing     (BENCH_N creations per batch, default 100; BENCH_ROUNDS pairs, default 40)
 *
 * Appends a section to bench/results.md (BENCH_NO_WRITE=1 to only print).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { CobroHttp } from "@cobro/http"
import { Admin, ServerConfig, Services, Tracing } from "@cobro/server"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const N = Number(process.env["BENCH_N"] ?? 100)
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 40)
const WARMUP = 1000

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-tracing-"))
const env = new Map([
  ["COBRO_DATABASE_URL", path.join(dir, "cobro.db")],
  ["COBRO_RATE_LIMITS", "false"]
])
const config = await Effect.runPromise(
  Effect.withConfigProvider(ServerConfig.load, ConfigProvider.fromMap(env))
)

await Effect.runPromise(
  Admin.createUser({
    user_id: "bench",
    name: "Bench",
    email: "bench@example.com",
    cuit: "30712345671",
    status: "ACTIVE"
  }).pipe(Effect.provide(Services.layer(config)))
)

type Variant = "off" | "on"

/** The API over the engine on the database; `off` as the server without an endpoint. */
const handlerOf = (variant: Variant) => {
  const api = Layer.merge(CobroHttp.layer({ rateLimits: false }), HttpServer.layerContext).pipe(
    Layer.provide(Services.layer(config))
  )
  return HttpApiBuilder.toWebHandler(
    variant === "off" ? Layer.provide(api, Tracing.layer(Option.none(), "bench")) : api,
    { middleware: Tracing.traceContext }
  )
}

const handlers = { off: handlerOf("off"), on: handlerOf("on") }
let sequence = 0

const create = async (variant: Variant): Promise<Response> => {
  const response = await handlers[variant].handler(
    new Request("http://bench/payments/", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        user_id: "bench",
        external_id: `order-${++sequence}`,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"]
      })
    })
  )
  if (response.status !== 200) throw new Error(`${variant}: ${response.status} ${await response.text()}`)
  await response.arrayBuffer()
  return response
}

interface Batch {
  /** Wall-clock µs per creation. */
  readonly wall: number
  /** CPU µs per creation (this process, user + system): what other processes on the host do not move. */
  readonly cpu: number
}

const batch = async (variant: Variant, n: number): Promise<Batch> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < n; i++) await create(variant)
  const wall = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { wall: (wall * 1000) / n, cpu: (used.user + used.system) / n }
}

// What each variant is: a span and its traceparent, or none.
const probes = { off: await create("off"), on: await create("on") }
if (probes.off.headers.has("traceparent") || !probes.on.headers.has("traceparent")) {
  throw new Error("the variants are not what they claim (traceparent off/on)")
}

await batch("off", WARMUP)
await batch("on", WARMUP)
const batches: Record<Variant, Array<Batch>> = { off: [], on: [] }
for (let r = 0; r < ROUNDS; r++) {
  // Short batches in pairs, the order alternating: a burst of load on the host falls on one pair.
  const order: ReadonlyArray<Variant> = r % 2 === 0 ? ["off", "on"] : ["on", "off"]
  for (const variant of order) batches[variant].push(await batch(variant, N))
}
await handlers.off.dispose()
await handlers.on.dispose()
fs.rmSync(dir, { recursive: true, force: true })

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const summary = (key: keyof Batch) => {
  const off = median(batches.off.map((b) => b[key]))
  const on = median(batches.on.map((b) => b[key]))
  const paired = median(batches.on.map((b, i) => b[key] / batches.off[i]![key]))
  return `| ${key === "wall" ? "wall clock" : "CPU"} | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(on - off).toFixed(0)} | ${paired.toFixed(3)} |`
}
const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU"

const table = [
  `## Tracing — ${new Date().toISOString().slice(0, 10)} — ${os.cpus().length}× ${cpu}, Node ${process.versions.node}`,
  "",
  `\`npm run bench:tracing\`: create-payment through the HTTP API in process, SQLite, ${ROUNDS} alternating pairs of batches of ${N} (after ${WARMUP} of each), load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ")}.`,
  "",
  "| µs per creation (median of batches) | tracing off (no endpoint) | on, nothing exported | on − off | on ÷ off (median of pairs) |",
  "| --- | --- | --- | --- | --- |",
  summary("wall"),
  summary("cpu"),
  ""
].join("\n")

console.log(`\n${table}`)
if (process.env["BENCH_NO_WRITE"] !== "1") {
  fs.appendFileSync(path.join(import.meta.dirname, "results.md"), `\n${table}`)
  console.log("appended to bench/results.md")
}
