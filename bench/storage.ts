/**
 * Storage throughput through the library, each beside a raw single-statement baseline on the
 * same database in the same run, printed as ratios (library ÷ raw). Not part of the tests.
 *
 *   npm run bench:storage    (SQLite, and Postgres when 127.0.0.1:5432 answers; `npm run bench`
 *                            runs it before bench:http)
 */
import { BankAccount, Engine, Ids, Money, PaymentRequest, Payments, Transfers, User } from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import Database from "better-sqlite3"
import { DateTime, Effect, Layer, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const N = Number(process.env["BENCH_N"] ?? 2000)
const pgAdmin = process.env["COBRO_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

interface Result {
  readonly backend: string
  readonly operation: string
  readonly libraryPerSecond: number
  readonly rawPerSecond: number
  /** This process's CPU time (user + system) per operation, in µs, where measured. */
  readonly cpuMicros?: number
}

const perSecond = (count: number, millis: number) => Math.round((count / millis) * 1000)

/** Runs `effect` and answers its wall time (ms) and this process's CPU time (µs) beside its value. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const cpu = process.cpuUsage()
    const start = performance.now()
    const value = yield* effect
    const used = process.cpuUsage(cpu)
    return { value, ms: performance.now() - start, cpuMicros: used.user + used.system }
  })

/** Calls `f` for every item of `items`, CALLERS callers at once, each taking the next item. */
const byCallers = <T, A, E, R>(items: ReadonlyArray<T>, f: (item: T) => Effect.Effect<A, E, R>) => {
  const queue = [...items]
  return Effect.map(
    Effect.all(
      Array.from({ length: CALLERS }, () =>
        Effect.gen(function* () {
          const mine: Array<A> = []
          for (let t = queue.shift(); t !== undefined; t = queue.shift()) mine.push(yield* f(t))
          return mine
        })
      ),
      { concurrency: "unbounded" }
    ),
    (all) => all.flat()
  )
}

const request = (i: number) =>
  Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
    user_id: "bench",
    external_id: `order-${i}`,
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"]
  })

/** Callers of `ingest` (and of `create`) at once in the concurrent runs (a server's requests in flight). */
const CALLERS = 16

/**
 * Payment creations and transfer ingestions through the engine, N each: creations and `ingest`
 * one after another; N more transfers to N more payments as one list to `ingestAll`; N more
 * through `ingest` called by CALLERS callers at once (their calls share units of work).
 */
const library = (storage: Layer.Layer<Engine.Storage, unknown>) =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    yield* (yield* UserRepository.UserRepository).insert(
      new User.User({
        user_id: Ids.UserId.make("bench"),
        name: "Bench",
        email: "bench@example.com",
        cuit: BankAccount.makeCuit("30", "71234567"),
        account_status: "ACTIVE",
        alias_prefix: null,
        cancellation_period: null,
        cancellation_period_minutes: null,
        automatic_cancellation: false,
        transfer_tolerance: Money.zero("ARS"),
        payout_schedule: null,
        partner_id: null,
        creation_timestamp: now,
        last_modified_timestamp: now
      })
    )
    const payments = yield* Payments.Payments
    const created = []
    const sequential = yield* timed(
      Effect.gen(function* () {
        for (let i = 0; i < N; i++) created.push(yield* payments.create(request(i)))
      })
    )
    for (let i = N; i < 3 * N; i++) created.push(yield* payments.create(request(i)))
    const bank = yield* SandboxBank.SandboxBank
    const transfers = []
    for (const p of created)
      transfers.push(yield* bank.simulateIncoming({ cvu: p.cvu, amount: p.quoteAmount }))
    const { ingest, ingestAll } = yield* Transfers.Transfers
    let start = performance.now()
    for (const t of transfers.slice(0, N)) yield* ingest(t)
    const ingestMs = performance.now() - start
    start = performance.now()
    const outcomes = yield* ingestAll(transfers.slice(N, 2 * N))
    const ingestAllMs = performance.now() - start
    if (!outcomes.every((o) => o._tag === "Right" && o.right._tag === "Credited"))
      throw new Error("ingestAll did not credit every transfer")
    start = performance.now()
    const concurrent = yield* byCallers(transfers.slice(2 * N), ingest)
    const concurrentMs = performance.now() - start
    if (!concurrent.every((o) => o._tag === "Credited"))
      throw new Error("concurrent ingest did not credit every transfer")
    const together = yield* timed(
      byCallers(
        Array.from({ length: N }, (_, i) => request(3 * N + i)),
        payments.create
      )
    )
    if (new Set(together.value.map((p) => p.cvu)).size !== N)
      throw new Error("concurrent creations did not create every payment")
    return {
      create: perSecond(N, sequential.ms),
      createCpu: Math.round(sequential.cpuMicros / N),
      createTogether: perSecond(N, together.ms),
      createTogetherCpu: Math.round(together.cpuMicros / N),
      ingest: perSecond(N, ingestMs),
      ingestAll: perSecond(N, ingestAllMs),
      concurrent: perSecond(N, concurrentMs)
    }
  }).pipe(Effect.provide(SandboxEngine.layerSandbox(storage)))

const rawRow = (i: number) => [
  `VAR-raw-${i}`,
  "raw",
  `order-${i}`,
  `cvu-${i}`,
  Date.now(),
  JSON.stringify({ i, pad: "x".repeat(900) })
]

const sqliteBench = async (): Promise<Array<Result>> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-"))
  const lib = await Effect.runPromise(library(SqliteStorage.layer({ filename: path.join(dir, "lib.db") })))
  const db = new Database(path.join(dir, "raw.db"))
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  db.exec(
    "CREATE TABLE t (id TEXT PRIMARY KEY, user_id TEXT, external_id TEXT, cvu TEXT UNIQUE, ms INTEGER, doc TEXT)"
  )
  const insert = db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
  const start = performance.now()
  for (let i = 0; i < N; i++) insert.run(...rawRow(i))
  const raw = perSecond(N, performance.now() - start)
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return [
    {
      backend: "SQLite",
      operation: "payment creations",
      libraryPerSecond: lib.create,
      rawPerSecond: raw,
      cpuMicros: lib.createCpu
    },
    {
      backend: "SQLite",
      operation: `payment creations, ${CALLERS} callers of create`,
      libraryPerSecond: lib.createTogether,
      rawPerSecond: raw,
      cpuMicros: lib.createTogetherCpu
    },
    { backend: "SQLite", operation: "transfer ingestions", libraryPerSecond: lib.ingest, rawPerSecond: raw },
    {
      backend: "SQLite",
      operation: "transfer ingestions, ingestAll",
      libraryPerSecond: lib.ingestAll,
      rawPerSecond: raw
    },
    {
      backend: "SQLite",
      operation: `transfer ingestions, ${CALLERS} callers of ingest`,
      libraryPerSecond: lib.concurrent,
      rawPerSecond: raw
    }
  ]
}

const pgBench = async (): Promise<Array<Result>> => {
  const name = `cobro_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: pgAdmin })
  try {
    await admin.connect()
  } catch {
    console.warn(`Postgres at ${pgAdmin} is not reachable: skipping the Postgres benchmark`)
    return []
  }
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(pgAdmin)
  url.pathname = `/${name}`
  try {
    const lib = await Effect.runPromise(library(PgStorage.layer({ url: Redacted.make(url.toString()) })))
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    await client.query(
      "CREATE TABLE raw_t (id TEXT PRIMARY KEY, user_id TEXT, external_id TEXT, cvu TEXT UNIQUE, ms BIGINT, doc TEXT)"
    )
    const start = performance.now()
    for (let i = 0; i < N; i++)
      await client.query("INSERT INTO raw_t VALUES ($1, $2, $3, $4, $5, $6)", rawRow(i))
    const raw = perSecond(N, performance.now() - start)
    await client.end()
    return [
      {
        backend: "Postgres",
        operation: "payment creations",
        libraryPerSecond: lib.create,
        rawPerSecond: raw,
        cpuMicros: lib.createCpu
      },
      {
        backend: "Postgres",
        operation: `payment creations, ${CALLERS} callers of create`,
        libraryPerSecond: lib.createTogether,
        rawPerSecond: raw,
        cpuMicros: lib.createTogetherCpu
      },
      {
        backend: "Postgres",
        operation: "transfer ingestions",
        libraryPerSecond: lib.ingest,
        rawPerSecond: raw
      },
      {
        backend: "Postgres",
        operation: "transfer ingestions, ingestAll",
        libraryPerSecond: lib.ingestAll,
        rawPerSecond: raw
      },
      {
        backend: "Postgres",
        operation: `transfer ingestions, ${CALLERS} callers of ingest`,
        libraryPerSecond: lib.concurrent,
        rawPerSecond: raw
      }
    ]
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}

const results = [...(await sqliteBench()), ...(await pgBench())]
console.log(
  `N = ${N} operations each (sequential; ingestAll: one list of N, batches of ${Transfers.batchSize}; then ${CALLERS} callers of ingest, and of create, at once)\n`
)
console.log("| backend | operation | library ops/s | raw single-insert ops/s | ratio | library CPU µs/op |")
console.log("|---|---|---|---|---|---|")
for (const r of results) {
  console.log(
    `| ${r.backend} | ${r.operation} | ${r.libraryPerSecond} | ${r.rawPerSecond} | ${(r.libraryPerSecond / r.rawPerSecond).toFixed(3)} | ${r.cpuMicros ?? ""} |`
  )
}
