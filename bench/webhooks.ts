/**
 * Webhook delivery through the library, beside a raw baseline in the same run, to one local
 * receiver (node:http on 127.0.0.1 answering 200 at once). Not part of the tests.
 *
 *   npm run bench:webhooks        (memory, SQLite, and Postgres when 127.0.0.1:5432 answers)
 *
 * - throughput: N events already in the outbox, then `deliverDue` until none is left (claim with
 *   a lease, sign, POST, record the attempt); the baseline is a plain `fetch` loop POSTing the
 *   same body and headers N times with the same concurrency;
 * - latency: events appended one by one at a steady rate while the background worker polls every
 *   POLL ms; the time from the append to the receiver seeing the request (enqueue to first
 *   attempt), p50 and p99; the baseline is the same measure for a direct `fetch`.
 *
 * Appends a section to bench/results.md (BENCH_NO_WRITE=1 to only print).
 */
import { Accounts, Engine, Ids, Outbox } from "@cobro/core"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { NodeTransport, Signature, Webhooks, WebhooksConfig } from "@cobro/webhooks"
import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const N = Number(process.env["BENCH_N"] ?? 2000)
const LATENCY_EVENTS = Number(process.env["BENCH_LATENCY_N"] ?? 300)
const LATENCY_GAP_MS = 5
const POLL = Duration.millis(Number(process.env["BENCH_POLL_MS"] ?? 100))
const CONCURRENCY = WebhooksConfig.defaults.concurrency
const pgAdmin = process.env["COBRO_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

// ---------------------------------------------------------------------------------------------
// The receiver: answers 200 at once, notes when each webhook-id first arrived.

const arrivals = new Map<string, number>()
let received = 0
const receiver = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const id = String(req.headers["webhook-id"])
    if (!arrivals.has(id)) arrivals.set(id, performance.now())
    received++
    res.writeHead(200)
    res.end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const perSecond = (count: number, millis: number) => Math.round((count / millis) * 1000)

// ---------------------------------------------------------------------------------------------
// The raw baseline: a plain fetch loop with the same headers (signed once, outside the timing).

const body = JSON.stringify({ message: "Payment updated", paymentId: "VAR-bench-o-1", externalId: "o-1" })
const rawPost = (id: string) =>
  fetch(receiverUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...Signature.headers({
        secret: "cs_bench",
        eventId: id,
        timestamp: Math.floor(Date.now() / 1000),
        body
      })
    },
    body
  }).then((r) => r.arrayBuffer())

const rawThroughput = async () => {
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) await rawPost(`raw-${next++}`)
    })
  )
  return perSecond(N, performance.now() - start)
}

const rawLatency = async () => {
  const latencies: Array<number> = []
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const id = `raw-latency-${i}`
    const sent = performance.now()
    await rawPost(id)
    latencies.push(arrivals.get(id)! - sent)
    await new Promise((r) => setTimeout(r, LATENCY_GAP_MS))
  }
  return latencies
}

// ---------------------------------------------------------------------------------------------
// The library.

const engine = (storage: Layer.Layer<Engine.Storage, unknown>) =>
  Webhooks.layer({ pollInterval: POLL }).pipe(
    Layer.provideMerge(
      Layer.merge(NodeTransport.layer({ mode: "sandbox" }), SandboxEngine.layerSandbox(storage))
    )
  )

const merchant = Effect.flatMap(Accounts.Accounts, (a) =>
  a.createUser(
    Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
      user_id: "bench",
      name: "Bench",
      email: "bench@example.com",
      cuit: "20123456786",
      account_status: "ACTIVE"
    })
  )
)

const append = (n: number) =>
  Effect.gen(function* () {
    const event = yield* Outbox.makeEvent({
      type: "payment.updated",
      user_id: Ids.UserId.make("bench"),
      webhook_url: receiverUrl,
      payload: { message: "Payment updated", paymentId: `VAR-bench-o-${n}`, externalId: `o-${n}` }
    })
    yield* (yield* Outbox.Outbox).append(event)
    return event.event_id
  })

const libraryThroughput = (storage: Layer.Layer<Engine.Storage, unknown>) =>
  Effect.gen(function* () {
    yield* merchant
    for (let i = 0; i < N; i++) yield* append(i)
    const webhooks = yield* Webhooks.Webhooks
    const start = performance.now()
    let delivered = 0
    while (true) {
      const report = yield* webhooks.deliverDue()
      delivered += report.delivered
      if (report.attempted === 0) break
    }
    const elapsed = performance.now() - start
    if (delivered !== N) throw new Error(`delivered ${delivered} of ${N}`)
    return perSecond(N, elapsed)
  }).pipe(Effect.scoped, Effect.provide(engine(storage)))

const libraryLatency = (storage: Layer.Layer<Engine.Storage, unknown>) =>
  Effect.gen(function* () {
    yield* merchant
    const appended: Array<readonly [string, number]> = []
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const at = performance.now()
      appended.push([yield* append(i), at])
      yield* Effect.sleep(Duration.millis(LATENCY_GAP_MS))
    }
    while (appended.some(([id]) => !arrivals.has(id))) yield* Effect.sleep("20 millis")
    return appended.map(([id, at]) => arrivals.get(id)! - at)
  }).pipe(Effect.provide(Webhooks.layerWorker.pipe(Layer.provideMerge(engine(storage)))))

interface Row {
  readonly backend: string
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
}

const measure = async (
  backend: string,
  storage: () => Layer.Layer<Engine.Storage, unknown>
): Promise<Row> => {
  const throughput = await Effect.runPromise(libraryThroughput(storage()))
  const latencies = await Effect.runPromise(libraryLatency(storage()))
  return { backend, perSecond: throughput, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-webhooks-"))
let sqliteFiles = 0
const rows: Array<Row> = []
// Warm up the receiver and both HTTP clients before measuring anything.
await Promise.all(Array.from({ length: 50 }, (_, i) => rawPost(`warmup-${i}`)))
const raw = { perSecond: await rawThroughput(), latencies: await rawLatency() }
rows.push(await measure("memory", () => Engine.layerMemoryStorage))
rows.push(
  await measure("SQLite", () =>
    SqliteStorage.layer({ filename: path.join(tmp, `bench-${sqliteFiles++}.db`) })
  )
)
const admin = new pg.Client({ connectionString: pgAdmin })
const pgUp = await admin.connect().then(
  () => true,
  () => false
)
if (pgUp) {
  // A fresh database per measurement, dropped afterwards.
  const names = [`cobro_bench_wh_${process.pid}_a`, `cobro_bench_wh_${process.pid}_b`]
  for (const name of names) {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  }
  const urlOf = (name: string) => {
    const url = new URL(pgAdmin)
    url.pathname = `/${name}`
    return url.toString()
  }
  let n = 0
  try {
    rows.push(
      await measure("Postgres", () =>
        PgStorage.layer({ url: Redacted.make(urlOf(names[n++]!)), maxConnections: 10 })
      )
    )
  } finally {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
} else {
  console.warn(`Postgres at ${pgAdmin} is not reachable: skipping it`)
}
fs.rmSync(tmp, { recursive: true, force: true })
receiver.close()

const rawP50 = percentile(raw.latencies, 50)
const rawP99 = percentile(raw.latencies, 99)
const ms = (x: number) => x.toFixed(1)
const date = new Date().toISOString().slice(0, 10)
const cpus = os.cpus()
const machine = `${cpus.length}× ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.platform()} ${os.release()}, Node ${process.versions.node}`
/** A markdown table with padded columns (as Prettier writes them). */
const markdownTable = (header: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)]
}
const table = [
  `## Webhooks — ${date} — ${machine}`,
  "",
  `\`npm run bench:webhooks\` (\`bench/webhooks.ts\`): deliveries to a node:http receiver on 127.0.0.1 that`,
  `answers 200 at once. Throughput: ${N} events in the outbox, then \`deliverDue\` until done (batch`,
  `${WebhooksConfig.defaults.batchSize}, concurrency ${CONCURRENCY}), against a plain \`fetch\` loop with the same concurrency,`,
  `headers and body. Latency: ${LATENCY_EVENTS} events appended ${LATENCY_GAP_MS} ms apart while the background worker polls`,
  `every ${Duration.toMillis(POLL)} ms, from the append to the receiver seeing the request, against a direct \`fetch\`.`,
  `Ratios are library ÷ raw (throughput: higher is better; latency: how many times slower).`,
  "",
  ...markdownTable(
    [
      "storage",
      "deliveries/s",
      "raw fetch/s",
      "ratio",
      "p50 ms",
      "p99 ms",
      "raw p50 ms",
      "raw p99 ms",
      "p50 ratio"
    ],
    rows.map((r) => [
      r.backend,
      String(r.perSecond),
      String(raw.perSecond),
      (r.perSecond / raw.perSecond).toFixed(2),
      ms(r.p50),
      ms(r.p99),
      ms(rawP50),
      ms(rawP99),
      (r.p50 / rawP50).toFixed(1)
    ])
  ),
  ""
].join("\n")

console.log(`\n${table}`)
console.log(`(receiver saw ${received} requests)`)
if (process.env["BENCH_NO_WRITE"] !== "1") {
  fs.appendFileSync(path.join(import.meta.dirname, "results.md"), `\n${table}`)
  console.log("appended to bench/results.md")
}
