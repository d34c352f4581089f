/**
 * The CSV export of a merchant's payments (GET /payments/export.csv) at 10,000 and 100,000 rows
 * on SQLite and Postgres: rows per second, and the memory of the process serving it while it
 * streams (peak RSS and peak V8 heap above the idle server's). Flat memory means the peaks at
 * 100,000 rows are those at 10,000. Not part of the tests.
 *
 *   npm run bench:exports    (SQLite, and Postgres when 127.0.0.1:5432 answers)
 *
 * The parent seeds the database (payments stored in batches through the repository); each
 * export runs in a fresh child process (this file with `child`): the API on a real node:http
 * server and a client in the same process reading the file and counting its records, memory
 * sampled every 10 ms.
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Accounts, Auth, BankAccount, type Engine, Ids, Payment, PaymentRequest, Payments } from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { SandboxClocks, SandboxEngine } from "@cobro/bank-sandbox"
import { CobroHttp } from "@cobro/http"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { DateTime, Effect, Layer, Redacted, Schema } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const SIZES = [10_000, 100_000] as const
const BATCH = 500
const pgAdmin = process.env["COBRO_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

type StoreKind = "sqlite" | "postgres"

const storageOf = (kind: StoreKind, location: string): Layer.Layer<Engine.Storage, unknown> => {
  const storage =
    kind === "sqlite"
      ? SqliteStorage.layer({ filename: location })
      : PgStorage.layer({ url: Redacted.make(location), maxConnections: 4 })
  return SandboxClocks.layerWith({ refreshEvery: undefined }).pipe(Layer.provideMerge(storage))
}

const engineOf = (storage: Layer.Layer<Engine.Storage, unknown>) =>
  SandboxEngine.layerSandbox(storage).pipe(Layer.provideMerge(storage))

// --- the parent: seeding ----------------------------------------------------------------------

interface Merchant {
  readonly client_id: string
  readonly client_secret: string
}

/** The merchant `bench` with one payment made through the service (the template of the others). */
const createMerchant = Effect.gen(function* () {
  const accounts = yield* Accounts.Accounts
  const created = yield* accounts.createUser(
    Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
      user_id: "bench",
      name: "Tienda Bench",
      email: "bench@example.com",
      cuit: BankAccount.makeCuit("30", "71234567"),
      account_status: "ACTIVE"
    })
  )
  yield* (yield* Payments.Payments).create(
    Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
      user_id: "bench",
      external_id: "template",
      price: { amount: 1234.56, currency: "ARS" },
      payment_options: ["transfer"],
      motive: 'Pedido de prueba, con "comillas" y ñ'
    })
  )
  return { client_id: created.client_id, client_secret: created.client_secret } satisfies Merchant
})

/** Stores copies of the template (new ids, external ids, CVUs, creation times) from `from` to `to`. */
const seed = (from: number, to: number) =>
  Effect.gen(function* () {
    const repo = yield* PaymentRepository.PaymentRepository
    const template = (yield* repo.findById(Ids.PaymentId.make("VAR-bench-template"))).pipe((o) => {
      if (o._tag === "None") throw new Error("no template payment")
      return o.value
    })
    const start = DateTime.subtract(template.creation_timestamp, { days: 30 })
    for (let i = from; i < to; i += BATCH) {
      const batch: Array<Payment.Payment> = []
      for (let j = i; j < Math.min(to, i + BATCH); j++) {
        const external = `seed-${String(j).padStart(7, "0")}`
        const cvu = BankAccount.makeCvu("0009999", String(j).padStart(13, "0"))
        const quote = template.quotes[0]!
        batch.push(
          new Payment.Payment({
            ...template,
            id: Ids.PaymentId.make(`VAR-bench-${external}`),
            external_id: Schema.decodeSync(Ids.ExternalId)(external),
            quotes: [Payment.Quote.forAmount(quote.amount, cvu, quote.alias)],
            creation_timestamp: DateTime.add(start, { seconds: j }),
            last_modified_timestamp: DateTime.add(start, { seconds: j })
          })
        )
      }
      const results = yield* repo.insertAll(batch)
      if (results.some((r) => r._tag === "Left")) throw new Error(`batch at ${i} not stored`)
    }
  })

// --- the child: one export, measured ----------------------------------------------------------

interface Measured {
  readonly rows: number
  readonly bytes: number
  readonly seconds: number
  /** This process's CPU time (user + system), server and client both, in µs a row. */
  readonly cpuMicrosPerRow: number
  readonly idleRssMb: number
  readonly peakRssMb: number
  readonly idleHeapMb: number
  readonly peakHeapMb: number
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

/** GET the export with node's client, counting records; memory sampled all along. */
const download = (port: number, token: string): Promise<Measured> =>
  new Promise((resolve, reject) => {
    const gc = (globalThis as { gc?: () => void }).gc
    gc?.()
    const idle = process.memoryUsage()
    let peakRss = idle.rss
    let peakHeap = idle.heapUsed
    const sampler = setInterval(() => {
      const m = process.memoryUsage()
      peakRss = Math.max(peakRss, m.rss)
      peakHeap = Math.max(peakHeap, m.heapUsed)
    }, 10)
    const started = performance.now()
    const cpu = process.cpuUsage()
    let rows = -1
    let bytes = 0
    const request = http.get(
      {
        host: "127.0.0.1",
        port,
        path: "/payments/export.csv?user_id=bench",
        headers: { authorization: `Bearer ${token}` }
      },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`))
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          // Records end in CRLF; the fields of these rows hold no line break.
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
        })
        response.once("end", () => {
          clearInterval(sampler)
          const used = process.cpuUsage(cpu)
          resolve({
            cpuMicrosPerRow: Math.round(((used.user + used.system) / Math.max(rows, 1)) * 10) / 10,
            rows,
            bytes,
            seconds: (performance.now() - started) / 1000,
            idleRssMb: mb(idle.rss),
            peakRssMb: mb(peakRss),
            idleHeapMb: mb(idle.heapUsed),
            peakHeapMb: mb(peakHeap)
          })
        })
        response.once("error", reject)
      }
    )
    request.once("error", reject)
  })

const child = (kind: StoreKind, location: string, merchant: Merchant) => {
  const storage = storageOf(kind, location)
  const server = HttpApiBuilder.serve().pipe(
    Layer.provide(CobroHttp.layer()),
    Layer.provideMerge(engineOf(storage)),
    Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" }))
  )
  return Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const { token } = yield* auth.issueUserToken(
      Ids.UserId.make("bench"),
      new Auth.TokenRequest({ client_id: merchant.client_id, client_secret: merchant.client_secret })
    )
    const address = (yield* HttpServer.HttpServer).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const measured = yield* Effect.promise(() => download(port, token))
    console.log(JSON.stringify(measured))
  }).pipe(Effect.provide(server), Effect.scoped)
}

// --- main ---------------------------------------------------------------------------------------

const self = fileURLToPath(import.meta.url)

const measure = (kind: StoreKind, location: string, merchant: Merchant): Measured => {
  const out = execFileSync(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--conditions=@cobro/source",
      self,
      "child",
      kind,
      location,
      JSON.stringify(merchant)
    ],
    { encoding: "utf8", maxBuffer: 1 << 20 }
  )
  return JSON.parse(out.trim().split("\n").at(-1)!) as Measured
}

const runStore = async (kind: StoreKind, location: string) => {
  const engine = engineOf(storageOf(kind, location))
  const results: Array<readonly [number, Measured]> = []
  let merchant: Merchant | undefined
  let have = 0
  for (const size of SIZES) {
    merchant = await Effect.runPromise(
      Effect.gen(function* () {
        const m = merchant ?? (yield* createMerchant)
        yield* seed(have, size - 1)
        return m
      }).pipe(Effect.provide(engine), Effect.scoped)
    )
    have = size - 1
    results.push([size, measure(kind, location, merchant)])
  }
  return results
}

const pgAvailable = async () => {
  const client = new pg.Client({ connectionString: pgAdmin })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

const main = async () => {
  const rows: Array<string> = []
  const report = (store: string, results: ReadonlyArray<readonly [number, Measured]>) => {
    for (const [size, m] of results) {
      if (m.rows !== size) throw new Error(`${store}: ${m.rows} rows exported, ${size} stored`)
      rows.push(
        `| ${store} | ${size.toLocaleString("en")} | ${(m.bytes / 1024 / 1024).toFixed(1)} MB | ${m.seconds.toFixed(2)} s | ${Math.round(m.rows / m.seconds).toLocaleString("en")} | ${m.cpuMicrosPerRow} | ${m.idleRssMb} → ${m.peakRssMb} MB (+${Math.round((m.peakRssMb - m.idleRssMb) * 10) / 10}) | ${m.idleHeapMb} → ${m.peakHeapMb} MB (+${Math.round((m.peakHeapMb - m.idleHeapMb) * 10) / 10}) |`
      )
    }
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-exports-"))
  try {
    report("SQLite", await runStore("sqlite", path.join(dir, "cobro.db")))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }

  if (await pgAvailable()) {
    const name = `cobro_bench_exports_${process.pid}`
    const admin = new pg.Client({ connectionString: pgAdmin })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    const url = new URL(pgAdmin)
    url.pathname = `/${name}`
    try {
      report("Postgres", await runStore("postgres", url.toString()))
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  } else {
    console.log("(Postgres not reachable: skipped)")
  }

  console.log(
    `Node ${process.version}, ${os.cpus().length}× ${os.cpus()[0]?.model ?? "?"}, load ${os.loadavg()[0]!.toFixed(1)}`
  )
  console.log(
    "| store | rows | file | time | rows/s | CPU µs a row | serving process RSS: idle → peak | V8 heap used: idle → peak |"
  )
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const row of rows) console.log(row)
}

if (process.argv[2] === "child") {
  const [, , , kind, location, merchant] = process.argv
  await Effect.runPromise(child(kind as StoreKind, location!, JSON.parse(merchant!) as Merchant))
} else {
  await main()
}
