/**
 * The reference server over HTTP, as `npm start` runs it (a child process: bin/cobro.js, sandbox
 * mode, the API's own rate limits off), on SQLite and on Postgres, each beside a raw baseline in
 * the same run: `bench/raw-server.ts`, node:http and the same statements on the same store, and
 * `bench/effect-server.ts`, the same work on cobro's own stack (Effect HttpApi, Schema,
 * `@effect/sql`): what the stack costs before the engine does anything. Not part of the tests.
 *
 *   npm run bench:http          (SQLite, and Postgres when 127.0.0.1:5432 answers)
 *
 * For each store, and each of the three servers where the request exists:
 * - create-payment throughput: closed loop, BENCH_CONCURRENCY requests in flight on keep-alive
 *   connections for BENCH_SECONDS, after a warm-up; p50/p99 latency of that loop;
 * - latency at half that maximum rate: open loop (requests sent on a fixed schedule, latency
 *   counted from the scheduled time, so a stall is not hidden), p50/p99;
 * - GET /payments/{id}: closed loop over the payments the creations made (before any is paid),
 *   with the merchant's bearer token, after a warm-up (cobro: the demo merchant's token; the
 *   baselines: the token each made at start, looked up by its hash the same way);
 * - incoming transfers through the faucet over HTTP (cobro), one per created payment, per second
 *   and CPU per transfer after a warm-up of the first quarter (reported too: V8 is still
 *   optimizing the crediting path then, which the creations before it never ran), and the last
 *   500 one at a time (each its own unit of work, as spread-out notifications are);
 * - CPU per request of every measured loop: the server process's own CPU time (utime + stime of
 *   `/proc/<pid>/stat`, CLK_TCK 100, so ±10 ms a loop) over the loop, divided by its requests:
 *   steadier than req/s on a shared machine, since another process's work does not count;
 * - GET /payments over BENCH_LIST_SIZES payments of one merchant, on a database of its own (rows
 *   added with SQL from a template payment the server created; nothing else in it, so the figure
 *   is the list's, not that of the webhook deliveries the other phases leave due): time to the
 *   last byte, and the server's peak RSS (VmHWM of a freshly started process) beside its idle RSS;
 * - idle RSS of the server: 5 s after start, and at rest (BENCH_REST_SECONDS after start, by when
 *   V8's memory reducer has given back the start's garbage).
 *
 * Appends a section to bench/results.md (BENCH_NO_WRITE=1 to only print).
 */
import { BankAccount } from "@cobro/core"
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import * as prettier from "prettier"
import {
  agent,
  closedLoop,
  cpuMicros,
  demoToken,
  floorServer,
  memory,
  ok,
  openLoop,
  pgAdmin,
  rawServer,
  root,
  type Run,
  send,
  type Server,
  sleep,
  startBaseline,
  startCobro,
  stop
} from "./load.js"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const WARMUP_SECONDS = Number(process.env["BENCH_WARMUP_SECONDS"] ?? 3)
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 16)
const REST_SECONDS = Number(process.env["BENCH_REST_SECONDS"] ?? 60)
const LIST_SIZES = (process.env["BENCH_LIST_SIZES"] ?? "10000,100000").split(",").map(Number)

// --- the scenarios ------------------------------------------------------------------------------

interface Created {
  readonly id: string
  readonly cvu: string
}

let sequence = 0
const createBody = (prefix: string) => ({
  user_id: "demo",
  external_id: `${prefix}-${++sequence}`,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  webhook_url: "https://merchant.example.com/hooks"
})

/** One creation on `server`, its payment kept in `keep` if given. */
const creation = (server: Server, prefix: string, keep?: Array<Created>) => async () => {
  const data = ok(await send(server.base, "POST", "/payments/", createBody(prefix)), "create").data
  const quotes = data["quotes"] as ReadonlyArray<{ cvu?: string }> | undefined
  keep?.push({ id: String(data["id"]), cvu: String(quotes?.[0]?.cvu ?? data["cvu"]) })
}

/** Creations: max rate closed loop, then half of it open loop. */
const creations = async (server: Server, prefix: string, keep?: Array<Created>) => {
  const create = creation(server, prefix, keep)
  await closedLoop(server, WARMUP_SECONDS, CONCURRENCY, create)
  const max = await closedLoop(server, SECONDS, CONCURRENCY, create)
  const half = await openLoop(server, SECONDS, Math.max(1, max.perSecond / 2), create)
  return { max, half }
}

interface Reads extends Run {
  /** Size of one answer's body, in bytes. */
  readonly bytes: number
}

/**
 * GET /payments/{id} with `token`, closed loop over `payments` in turn (after a warm-up over the
 * same ids); each answer must be the payment asked for.
 */
const reads = async (server: Server, token: string, payments: ReadonlyArray<Created>): Promise<Reads> => {
  if (payments.length === 0) throw new Error("no payments to read")
  let next = 0
  let bytes = 0
  const read = async () => {
    const id = payments[next++ % payments.length]!.id
    const reply = await send(server.base, "GET", `/payments/${encodeURIComponent(id)}`, undefined, token)
    const data = ok(reply, "read").data
    if (data["id"] !== id) throw new Error(`read ${id}: answered ${String(data["id"])}`)
    bytes = Buffer.byteLength(reply.body)
  }
  await closedLoop(server, WARMUP_SECONDS, CONCURRENCY, read)
  const run = await closedLoop(server, SECONDS, CONCURRENCY, read)
  return { ...run, bytes }
}

/**
 * One faucet transfer for each payment (the amount it asks for), closed loop, in three parts: the
 * first quarter warms the faucet's own code up (V8 still optimizes it: the creations and reads
 * before it do not run the crediting path), the rest but the last `LONE_TRANSFERS` is measured as
 * the other loops are, after their warm-up, with CONCURRENCY in flight; the last ones go one at a
 * time, as a bank's notifications spread out in time arrive: each its own unit of work, its
 * statements' round trips shared with nothing. Each part's CPU per transfer is reported.
 */
const LONE_TRANSFERS = 500

const faucet = async (server: Server, token: string, payments: ReadonlyArray<Created>) => {
  const part = async (some: ReadonlyArray<Created>, inFlight = CONCURRENCY) => {
    let next = 0
    const before = cpuMicros(server.child.pid)
    const start = performance.now()
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < some.length) {
          const p = some[next++]!
          ok(await send(server.base, "POST", `/cvu/${p.cvu}/faucet`, { amount: 1500 }, token), "faucet")
        }
      })
    )
    return {
      transfers: some.length,
      perSecond: Math.round((some.length / (performance.now() - start)) * 1000),
      cpu: Math.round((cpuMicros(server.child.pid) - before) / some.length)
    }
  }
  const warm = Math.floor(payments.length / 4)
  const lone = Math.min(LONE_TRANSFERS, Math.floor(payments.length / 4))
  const warmUp = await part(payments.slice(0, warm))
  const measured = await part(payments.slice(warm, payments.length - lone))
  return { warmUp, measured, oneAtATime: await part(payments.slice(payments.length - lone), 1) }
}

interface Store {
  readonly name: string
  readonly url: string
  readonly seed: (rows: ReadonlyArray<ReadonlyArray<unknown>>) => Promise<void>
  readonly count: () => Promise<number>
  readonly template: () => Promise<Record<string, unknown>>
}

const sqliteStore = (file: string): Store => {
  const withDb = async <T>(f: (db: Database.Database) => T) => {
    const db = new Database(file)
    db.pragma("busy_timeout = 10000")
    try {
      return f(db)
    } finally {
      db.close()
    }
  }
  return {
    name: "SQLite",
    url: file,
    seed: (rows) =>
      withDb((db) => {
        const insert = db.prepare(
          "INSERT INTO cobro_payments (id, user_id, external_id, cvu, team_id, created_ms, expires_ms, cvu_released, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        db.transaction(() => rows.forEach((r) => insert.run(...r)))()
      }),
    count: () =>
      withDb(
        (db) =>
          (
            db.prepare("SELECT count(*) AS n FROM cobro_payments WHERE user_id = 'demo'").get() as {
              n: number
            }
          ).n
      ),
    template: () =>
      withDb(
        (db) =>
          db
            .prepare("SELECT * FROM cobro_payments WHERE user_id = 'demo' AND external_id = 'list-template'")
            .get() as Record<string, unknown>
      )
  }
}

const pgStore = (url: string): Store => {
  const withClient = async <T>(f: (c: pg.Client) => Promise<T>) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  }
  return {
    name: "Postgres",
    url,
    seed: (rows) =>
      withClient(async (c) => {
        for (let i = 0; i < rows.length; i += 1000) {
          const chunk = rows.slice(i, i + 1000)
          const values = chunk
            .map((_, j) => `(${Array.from({ length: 9 }, (_, k) => `$${j * 9 + k + 1}`).join(", ")})`)
            .join(", ")
          await c.query(
            `INSERT INTO cobro_payments (id, user_id, external_id, cvu, team_id, created_ms, expires_ms, cvu_released, doc) VALUES ${values}`,
            chunk.flat()
          )
        }
      }),
    count: () =>
      withClient(async (c) =>
        Number((await c.query("SELECT count(*) AS n FROM cobro_payments WHERE user_id = 'demo'")).rows[0].n)
      ),
    template: () =>
      withClient(
        async (c) =>
          (
            await c.query(
              "SELECT * FROM cobro_payments WHERE user_id = 'demo' AND external_id = 'list-template'"
            )
          ).rows[0] as Record<string, unknown>
      )
  }
}

/** Adds payments of the demo merchant until it has `size`: copies of the template, new ids and CVUs. */
const seedTo = async (store: Store, size: number) => {
  const have = await store.count()
  const t = await store.template()
  const doc = String(t["doc"])
  const rows: Array<ReadonlyArray<unknown>> = []
  for (let i = have; i < size; i++) {
    const external = `seed-${String(i).padStart(7, "0")}`
    const cvu = BankAccount.makeCvu("0009999", String(i).padStart(13, "0"))
    rows.push([
      `VAR-demo-${external}`,
      "demo",
      external,
      cvu,
      null,
      Number(t["created_ms"]),
      Number(t["expires_ms"]),
      0,
      doc.replaceAll("list-template", external).replaceAll(String(t["cvu"]), cvu)
    ])
  }
  await store.seed(rows)
}

/** GET /payments of the demo merchant on a fresh server: time, payments returned, peak RSS. */
const list = async (store: Store, token: string) => {
  const server = await startCobro(store.url)
  try {
    await sleep(2000)
    const idle = memory(server)
    const start = performance.now()
    const reply = await send(server.base, "GET", "/payments/?user_id=demo", undefined, token)
    const seconds = (performance.now() - start) / 1000
    const returned = (ok(reply, "list").data["payments"] as ReadonlyArray<unknown>).length
    return { seconds, returned, idle: idle.rss, peak: memory(server).peak, mb: reply.body.length / 1e6 }
  } finally {
    await stop(server)
  }
}

interface StoreResult {
  readonly store: string
  readonly raw: { max: Run; half: Run; read: Reads }
  readonly floor: { max: Run; half: Run; read: Reads }
  readonly cobro: { max: Run; half: Run; read: Reads }
  /** The baselines' creations at cobro's half-max rate (open loop): the same load, side by side. */
  readonly atCobroHalf: { raw: Run; floor: Run }
  readonly faucet: {
    /** The first quarter of the transfers, while V8 optimizes the crediting path. */
    readonly warmUp: { transfers: number; perSecond: number; cpu: number }
    /** The rest but the last ones: transfers/s and µs of the server's CPU per transfer. */
    readonly measured: { transfers: number; perSecond: number; cpu: number }
    /** The last ones, one at a time. */
    readonly oneAtATime: { transfers: number; perSecond: number; cpu: number }
  }
  readonly idleRss: number
  readonly restRss: number
  readonly lists: ReadonlyArray<{
    size: number
    seconds: number
    returned: number
    idle: number
    peak: number
    mb: number
  }>
}

/**
 * Starts a server on `store`'s database (its first start makes the demo merchant), creates there the
 * template payment the list copies, and returns the merchant's token.
 */
const prepareList = async (store: Store) => {
  const server = await startCobro(store.url)
  try {
    const token = await demoToken(server)
    const { webhook_url: _, ...template } = createBody("x")
    ok(
      await send(server.base, "POST", "/payments/", { ...template, external_id: "list-template" }),
      "template"
    )
    return token
  } finally {
    await stop(server)
  }
}

const benchStore = async (store: Store, listStore: Store, rawUrl: string): Promise<StoreResult> => {
  /** A baseline's creations, then its reads of the payments they made. */
  const baseline = async (script: string, prefix: string) => {
    const server = await startBaseline(script, rawUrl)
    try {
      const created: Array<Created> = []
      const runs = await creations(server, prefix, created)
      return { ...runs, read: await reads(server, server.token, created) }
    } finally {
      await stop(server)
    }
  }
  console.error(`${store.name}: raw baseline`)
  const rawRuns = await baseline(rawServer, "raw")
  console.error(`${store.name}: Effect floor`)
  const floorRuns = await baseline(floorServer, "floor")

  console.error(`${store.name}: cobro`)
  const server = await startCobro(store.url)
  let cobroRuns, faucetRun, idleRss, restRss
  try {
    await sleep(5000)
    idleRss = memory(server).rss
    await sleep(REST_SECONDS * 1000 - 5000)
    restRss = memory(server).rss
    const token = await demoToken(server)
    const created: Array<Created> = []
    const runs = await creations(server, "http", created)
    // Read before the faucet pays them: the same pending payments the baselines read.
    cobroRuns = { ...runs, read: await reads(server, token, created) }
    faucetRun = await faucet(server, token, created)
  } finally {
    await stop(server)
  }

  /**
   * Each baseline again, at cobro's half-max rate: a p99 at one's own half max mixes the load
   * (the machine's two cores shared by server, database and load generator) with the code; at
   * the same rate, only the code differs.
   */
  const atRate = async (script: string, prefix: string, rate: number) => {
    const baseline = await startBaseline(script, rawUrl)
    try {
      const create = creation(baseline, prefix)
      await closedLoop(baseline, WARMUP_SECONDS, CONCURRENCY, create)
      return await openLoop(baseline, SECONDS, rate, create)
    } finally {
      await stop(baseline)
    }
  }
  console.error(`${store.name}: the baselines at cobro's half-max rate`)
  const atCobroHalf = {
    raw: await atRate(rawServer, "raw-at-cobro", cobroRuns.half.perSecond),
    floor: await atRate(floorServer, "floor-at-cobro", cobroRuns.half.perSecond)
  }

  const lists = []
  const listToken = await prepareList(listStore)
  for (const size of LIST_SIZES) {
    console.error(`${store.name}: GET /payments over ${size}`)
    await seedTo(listStore, size)
    lists.push({ size, ...(await list(listStore, listToken)) })
  }
  return {
    store: store.name,
    raw: rawRuns,
    floor: floorRuns,
    cobro: cobroRuns,
    atCobroHalf,
    faucet: faucetRun,
    idleRss,
    restRss,
    lists
  }
}

// --- main -------------------------------------------------------------------------------------

const results: Array<StoreResult> = []
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-http-"))
try {
  results.push(
    await benchStore(
      sqliteStore(path.join(dir, "cobro.db")),
      sqliteStore(path.join(dir, "list.db")),
      path.join(dir, "raw.db")
    )
  )

  const admin = new pg.Client({ connectionString: pgAdmin })
  const reachable = await admin.connect().then(
    () => true,
    () => false
  )
  if (!reachable) {
    console.error(`Postgres at ${pgAdmin} is not reachable: skipping the Postgres benchmark`)
  } else {
    const names = [`cobro_bench_http_${process.pid}`, `cobro_bench_list_${process.pid}`] as const
    const [url, listUrl] = names.map((name) => {
      const url = new URL(pgAdmin)
      url.pathname = `/${name}`
      return url.toString()
    }) as [string, string]
    try {
      for (const name of names) await admin.query(`CREATE DATABASE ${name}`)
      results.push(await benchStore(pgStore(url), pgStore(listUrl), url))
    } finally {
      for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
} finally {
  agent.destroy()
  fs.rmSync(dir, { recursive: true, force: true })
}

// --- report -------------------------------------------------------------------------------------

const ms = (n: number) => n.toFixed(1)
const lines: Array<string> = []
const cpu = os.cpus()
lines.push(
  `## HTTP — ${new Date().toISOString().slice(0, 10)} — ${cpu.length}× ${cpu[0]?.model ?? "?"}, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.type().toLowerCase()} ${os.release()}, Node ${process.versions.node}`,
  "",
  `\`npm run bench:http\` (\`bench/http.ts\`): the reference server as a child process (sandbox mode, rate limits off, log level warn) beside \`bench/raw-server.ts\` (node:http + better-sqlite3/pg: one INSERT a creation; a read is the bearer token by its SHA-256, the payment's row, the merchant's row, the JSON answer) and \`bench/effect-server.ts\` (the same work on cobro's stack: Effect HttpApi with Schema, a bearer-security middleware and \`@effect/sql\`, the framework floor) on the same store, in one run. Closed loop of ${CONCURRENCY} concurrent keep-alive requests for ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up; then an open loop at half the measured maximum, latency from the scheduled send time (and each baseline again at cobro's half-max rate, after a warm-up: the same load, so only the code differs); then GET /payments/{id} over the payments just created (still pending), closed loop after a warm-up. CPU per request: the server process's own CPU time over each loop (utime + stime, \`/proc/<pid>/stat\`, 10 ms ticks) divided by the requests it answered; cobro ÷ floor by CPU is floor µs ÷ cobro µs, so both ratios read the same way (1 = as cheap as the floor). CPU stolen: the share of the machine's CPU time the hypervisor gave to other guests during each loop (\`/proc/stat\`); a run with much of it says more about the host than about the code. Load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}.`,
  "",
  "| store | create-payment req/s | raw req/s | ratio | Effect floor req/s | floor ÷ raw | cobro ÷ floor | p50 ms | p99 ms | raw p50 | raw p99 | at half max: rate | p50 ms | p99 ms | raw, floor at their half max: p99 ms | raw, floor at cobro's half-max rate: p99 ms | CPU stolen %: raw, floor, cobro, half |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)
for (const r of results) {
  lines.push(
    `| ${r.store} | ${r.cobro.max.perSecond} | ${r.raw.max.perSecond} | ${(r.cobro.max.perSecond / r.raw.max.perSecond).toFixed(2)} | ${r.floor.max.perSecond} | ${(r.floor.max.perSecond / r.raw.max.perSecond).toFixed(2)} | ${(r.cobro.max.perSecond / r.floor.max.perSecond).toFixed(2)} | ${ms(r.cobro.max.p50)} | ${ms(r.cobro.max.p99)} | ${ms(r.raw.max.p50)} | ${ms(r.raw.max.p99)} | ${r.cobro.half.perSecond} | ${ms(r.cobro.half.p50)} | ${ms(r.cobro.half.p99)} | ${ms(r.raw.half.p99)}, ${ms(r.floor.half.p99)} | ${ms(r.atCobroHalf.raw.p99)}, ${ms(r.atCobroHalf.floor.p99)} | ${[r.raw.max, r.floor.max, r.cobro.max, r.cobro.half].map((run) => run.steal.toFixed(0)).join(", ")} |`
  )
}
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? (a / b).toFixed(2) : "—")
lines.push(
  "",
  "| store | request | raw req/s | raw CPU µs | floor req/s | floor CPU µs | cobro req/s | cobro CPU µs | cobro ÷ floor by req/s | cobro ÷ floor by CPU | cobro p50 ms | cobro p99 ms | answer bytes: raw, floor, cobro | CPU stolen %: raw, floor, cobro |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)
for (const r of results) {
  // `paced`: an open loop, whose rate the schedule sets, so only its CPU compares the servers.
  const row = (
    request: string,
    pick: (s: StoreResult["raw"]) => Run,
    bytes?: (s: StoreResult["raw"]) => number,
    paced = false
  ) => {
    const [raw, floor, cobro] = [pick(r.raw), pick(r.floor), pick(r.cobro)]
    lines.push(
      `| ${r.store} | ${request} | ${raw.perSecond} | ${raw.cpu} | ${floor.perSecond} | ${floor.cpu} | ${cobro.perSecond} | ${cobro.cpu} | ${paced ? "—" : ratio(cobro.perSecond, floor.perSecond)} | ${ratio(floor.cpu, cobro.cpu)} | ${ms(cobro.p50)} | ${ms(cobro.p99)} | ${bytes === undefined ? "—" : [r.raw, r.floor, r.cobro].map(bytes).join(", ")} | ${[raw, floor, cobro].map((run) => run.steal.toFixed(0)).join(", ")} |`
    )
  }
  row("create-payment, max", (s) => s.max)
  row("create-payment, at half max (open loop)", (s) => s.half, undefined, true)
  row(
    "GET /payments/{id}",
    (s) => s.read,
    (s) => s.read.bytes
  )
}
lines.push(
  "",
  `| store | faucet transfers/s over HTTP | CPU µs a transfer | transfers | warm-up: transfers | warm-up: CPU µs a transfer | one at a time: transfers | transfers/s | CPU µs a transfer | idle RSS MB, 5 s after start | at rest (${REST_SECONDS} s) |`,
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)
for (const r of results) {
  const { measured, oneAtATime, warmUp } = r.faucet
  lines.push(
    `| ${r.store} | ${measured.perSecond} | ${measured.cpu} | ${measured.transfers} | ${warmUp.transfers} | ${warmUp.cpu} | ${oneAtATime.transfers} | ${oneAtATime.perSecond} | ${oneAtATime.cpu} | ${r.idleRss.toFixed(0)} | ${r.restRss.toFixed(0)} |`
  )
}
lines.push(
  "",
  "| store | GET /payments over | returned | body MB | seconds | idle RSS MB | peak RSS MB |",
  "| --- | --- | --- | --- | --- | --- | --- |"
)
for (const r of results) {
  for (const l of r.lists) {
    lines.push(
      `| ${r.store} | ${l.size} | ${l.returned} | ${l.mb.toFixed(1)} | ${l.seconds.toFixed(2)} | ${l.idle.toFixed(0)} | ${l.peak.toFixed(0)} |`
    )
  }
}
const section = lines.join("\n")
console.log(section)
if (process.env["BENCH_NO_WRITE"] !== "1") {
  // Appended and formatted as the repository's Prettier check expects.
  const file = path.join(root, "bench/results.md")
  const text = `${fs.readFileSync(file, "utf8")}\n${section}\n`
  fs.writeFileSync(
    file,
    await prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file })
  )
}
