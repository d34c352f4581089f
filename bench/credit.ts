/**
 * The credit path beside its raw limit, and creations and credits at fixed rates (issue 49), on
 * SQLite and on Postgres in one run. Four servers on each store, one after the other, each a child
 * process measured by its own CPU time (`bench/load.ts`):
 *
 * - raw: `bench/raw-server.ts`, node:http and the driver, a credit written by hand in one
 *   transaction (`bench/credit-statements.ts`: the payment by its CVU, the transfer, the payment's
 *   update, the ledger entry, postings and balances, the outbox row);
 * - floor: `bench/effect-server.ts`, the same statements on cobro's stack (Effect HttpApi, Schema,
 *   `@effect/sql`), none of the engine;
 * - cobro: the reference server as `npm start` runs it (sandbox mode, rate limits off), credited
 *   through its faucet (`POST /cvu/{cvu}/faucet`);
 * - cobro + BIND: the reference server on BIND (`COBRO_BANK=bind`) against BIND's simulator
 *   (`@cobro/bank-bind/testing`, in this process), credited by BIND's notification
 *   `transfer.cvu.received` in the shape of BIND's page, which cobro confirms with BIND's list
 *   ("Consultar transferencias") before crediting, as in production.
 *
 * On each: creations (a closed-loop warm-up, then an open loop at each of BENCH_RATES a second for
 * BENCH_OPEN_SECONDS, latency from the scheduled send time), then one credit per payment made:
 * a warm-up, BENCH_CREDITS with BENCH_CONCURRENCY in flight ("batched"), BENCH_LONE one at a time
 * (each its own unit of work, as a bank's spread-out notifications are), then an open loop of
 * credits at each rate. Every loop reports p50/p99 and the server's CPU µs a request. The payments
 * carry no webhook URL, so no delivery runs in the background of a loop.
 *
 *   npm run bench:credit                 (about 5 minutes on a quiet 2-core machine)
 *   BENCH_QUICK=1 npm run bench:credit   (a smoke run: fewer requests, shorter loops)
 *
 *   BENCH_COBRO=/path/to/main,/path/to/branch npm run bench:credit
 *                                        (cobro from each checkout, beside the same raw and floor)
 *
 * Replaces its section of bench/results.md (BENCH_NO_WRITE=1 to only print); a BENCH_STORES of
 * "sqlite" or "pg" runs one store.
 */
import { BindIngress } from "@cobro/bank-bind"
import { BindSimulator } from "@cobro/bank-bind/testing"
import Database from "better-sqlite3"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import * as prettier from "prettier"
import {
  agent,
  closedLoop,
  countedLoop,
  demoToken,
  floorServer,
  ok,
  openLoop,
  pgAdmin,
  rawServer,
  root,
  type Reply,
  type Run,
  send,
  type Server,
  startBaseline,
  startCobro,
  stop
} from "./load.js"

const QUICK = process.env["BENCH_QUICK"] === "1"
const setting = (name: string, full: number, quick: number) =>
  Number(process.env[name] ?? (QUICK ? quick : full))
const CONCURRENCY = setting("BENCH_CONCURRENCY", 16, 16)
const WARMUP_SECONDS = setting("BENCH_WARMUP_SECONDS", 3, 1)
const OPEN_SECONDS = setting("BENCH_OPEN_SECONDS", 4, 2)
const CREDIT_WARMUP = setting("BENCH_CREDIT_WARMUP", 500, 200)
const CREDITS = setting("BENCH_CREDITS", 1500, 400)
const LONE = setting("BENCH_LONE", 300, 100)
const RATES = (process.env["BENCH_RATES"] ?? "200,500").split(",").map(Number)
const STORES = (process.env["BENCH_STORES"] ?? "sqlite,pg").split(",")
/**
 * The checkouts whose cobro is measured (BENCH_COBRO, comma-separated paths; this one by default),
 * each beside the same raw and floor in the same run: a branch against main, say.
 */
const CHECKOUTS = (process.env["BENCH_COBRO"] ?? root).split(",").map((c) => path.resolve(c))
const label = (checkout: string, server: string) =>
  CHECKOUTS.length === 1 && checkout === path.resolve(root)
    ? server
    : `${server} (${path.basename(checkout)})`

// --- what each server is asked --------------------------------------------------------------------

interface Created {
  readonly id: string
  readonly cvu: string
}

let sequence = 0
/** A creation, its payment kept in `keep` (no webhook URL: no delivery runs behind the loops). */
const creation = (server: Server, keep: Array<Created>) => async () => {
  const body = {
    user_id: "demo",
    external_id: `credit-${process.pid}-${++sequence}`,
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"]
  }
  const data = ok(await send(server.base, "POST", "/payments/", body), "create").data
  const quotes = data["quotes"] as ReadonlyArray<{ cvu?: string }> | undefined
  keep.push({ id: String(data["id"]), cvu: String(quotes?.[0]?.cvu ?? data["cvu"]) })
}

/** A faucet credit of the payment's amount with `token`; the answer must say it credited it. */
const faucetCredit = (server: Server, token: string) => async (payment: Created) => {
  const reply = await send(server.base, "POST", `/cvu/${payment.cvu}/faucet`, { amount: 1500 }, token)
  const data = ok(reply, "faucet").data
  if (data["outcome"] !== "credited" || data["target_id"] !== payment.id)
    throw new Error(`faucet ${payment.cvu}: ${reply.body.slice(0, 300)}`)
}

const WEBHOOK_SECRET = randomBytes(16).toString("hex")

/** BIND's example of "Aviso de transferencia entrante en CVU", verbatim from its page. */
const example = JSON.parse(
  fs.readFileSync(path.join(root, "packages/bank-bind/test/fixtures/transfer.cvu.received.json"), "utf8")
) as { data: Record<string, unknown> & { details: object; charge: object } }

/**
 * BIND's notification of a transfer to the payment's CVU: BIND's example with the transfer's id,
 * our CVU and CUIT and the amount, booked in the simulator first (so BIND's list has it, as the
 * simulator books what it notifies), then posted to cobro's route with the shared secret. cobro
 * confirms it with the simulator's list ("Consultar transferencias" by the id) and credits BIND's
 * record; the answer must say it credited it. The simulator filters its list in memory over every
 * transfer it ever booked, where BIND filters by the id on its side: a credited transfer is
 * dropped from the simulator's memory so that its cost stays flat over the run.
 */
const notify = (server: Server, body: unknown) =>
  send(server.base, "POST", BindIngress.path, body, undefined, { "x-bind-webhook-secret": WEBHOOK_SECRET })

const bindCredit =
  (server: Server, sim: BindSimulator.Simulator, redeliveries: { count: number }) =>
  async (payment: Created) => {
    const id = randomBytes(11).toString("hex").toUpperCase()
    const data = {
      ...example.data,
      id,
      transaction_ids: [id],
      details: { ...example.data.details, origin_credit: { cvu: payment.cvu, cuit: sim.entity.cuit } },
      charge: { ...example.data.charge, value: { currency: "ARS", amount: 1500 } }
    }
    const booked = sim.incoming as Array<BindSimulator.IncomingEntry>
    booked.push({ booked: Date.now(), data, notified: true, raw: false })
    const body = { ...example, id: `CASHOUT-${id}`, created: new Date().toISOString(), data }
    // A 503 (cobro could not ask BIND to confirm it: the simulator, in this loaded process, too
    // slow) or a connection closed before the answer: BIND delivers it again, as here at once
    // (counted, and in the latency). A redelivery may find it credited already ("duplicate").
    const attempt = (again: number) =>
      notify(server, { ...body, redeliveries: again }).catch((error: unknown): Reply => ({
        status: 0,
        body: String(error)
      }))
    let reply = await attempt(0)
    let again = 0
    while ((reply.status === 503 || reply.status === 0) && again < 5) {
      redeliveries.count++
      reply = await attempt(++again)
    }
    const outcome =
      reply.status === 200 ? (JSON.parse(reply.body) as { outcome?: unknown }).outcome : undefined
    if (outcome !== "credited" && !(again > 0 && outcome === "duplicate"))
      throw new Error(
        `BIND notification for ${payment.cvu}: HTTP ${reply.status} ${reply.body.slice(0, 300)}`
      )
    const at = booked.findIndex((e) => e.data["id"] === id)
    if (at >= 0) booked.splice(at, 1)
  }

// --- the stores -------------------------------------------------------------------------------------

interface Store {
  readonly name: string
  /** Where raw and floor keep their tables (each its own prefix). */
  readonly baselines: string
  /** cobro's database on the sandbox bank, and on BIND, of each checkout. */
  readonly cobro: ReadonlyArray<string>
  readonly bind: ReadonlyArray<string>
  /** The transfers cobro recorded in `database`. */
  readonly transfers: (database: string) => Promise<number>
}

const sqliteStore = (dir: string): Store => ({
  name: "SQLite",
  baselines: path.join(dir, "baselines.db"),
  cobro: CHECKOUTS.map((_, i) => path.join(dir, `cobro-${i}.db`)),
  bind: CHECKOUTS.map((_, i) => path.join(dir, `bind-${i}.db`)),
  transfers: async (file) => {
    const db = new Database(file, { readonly: true })
    try {
      return (db.prepare("SELECT count(*) AS n FROM cobro_transfers").get() as { n: number }).n
    } finally {
      db.close()
    }
  }
})

const pgStore = (urls: Pick<Store, "baselines" | "cobro" | "bind">): Store => ({
  name: "Postgres",
  ...urls,
  transfers: async (url) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return Number((await client.query("SELECT count(*) AS n FROM cobro_transfers")).rows[0].n)
    } finally {
      await client.end()
    }
  }
})

// --- one server --------------------------------------------------------------------------------------

interface Measured {
  readonly server: string
  /** Creations at each rate (open loop). */
  readonly creations: ReadonlyArray<Run>
  readonly batched: Run
  readonly lone: Run
  /** Credits at each rate (open loop). */
  readonly credits: ReadonlyArray<Run>
  readonly note?: string
}

/** A started server and how it is credited. */
interface Contender {
  readonly server: Server
  readonly credit: (payment: Created) => Promise<void>
  /** Checks after the credits, given how many were sent. */
  readonly verify?: (sent: number) => Promise<void>
  /**
   * Whether creations run at the fixed rates too (not on BIND: a creation there is the sandbox's
   * plus BIND's Crear CVU and alias on the simulator, which shares the load generator's process).
   */
  readonly openCreations: boolean
  /** A remark for the report (BIND's redeliveries). */
  readonly note?: () => string
}

const measure = async (name: string, start: () => Promise<Contender>): Promise<Measured> => {
  const { credit, note, openCreations, server, verify } = await start()
  try {
    const made: Array<Created> = []
    const create = creation(server, made)
    await closedLoop(server, WARMUP_SECONDS, CONCURRENCY, create)
    const creations: Array<Run> = []
    if (openCreations)
      for (const rate of RATES) creations.push(await openLoop(server, OPEN_SECONDS, rate, create))
    const atRates = RATES.reduce((sum, rate) => sum + Math.max(1, Math.round(OPEN_SECONDS * rate)), 0)
    const need = CREDIT_WARMUP + CREDITS + LONE + atRates
    if (made.length < need) await countedLoop(server, need - made.length, CONCURRENCY, create)
    let next = 0
    const pay = async () => credit(made[next++]!)
    await countedLoop(server, CREDIT_WARMUP, CONCURRENCY, pay)
    const batched = await countedLoop(server, CREDITS, CONCURRENCY, pay)
    const lone = await countedLoop(server, LONE, 1, pay)
    const credits: Array<Run> = []
    for (const rate of RATES) credits.push(await openLoop(server, OPEN_SECONDS, rate, pay))
    await verify?.(next)
    return {
      server: name,
      creations,
      batched,
      lone,
      credits,
      ...(note === undefined ? {} : { note: note() })
    }
  } finally {
    await stop(server)
  }
}

/** Failures of a server's loops (the run goes on with the next server; the report lists them). */
const failures: Array<string> = []

/** `measure`, its result added to `results`, or its failure to `failures`. */
const attempt = async (results: Array<Measured>, name: string, start: () => Promise<Contender>) => {
  try {
    const measured = await measure(name, start)
    console.error(JSON.stringify(measured))
    results.push(measured)
  } catch (error) {
    console.error(`${name} failed:`, error)
    failures.push(`${name}: ${String(error).slice(0, 200)}`)
  }
}

const benchStore = async (store: Store): Promise<ReadonlyArray<Measured>> => {
  const baseline = (script: string) => async (): Promise<Contender> => {
    const server = await startBaseline(script, store.baselines)
    return {
      server,
      openCreations: true,
      credit: async (payment) => {
        const reply = await send(
          server.base,
          "POST",
          `/cvu/${payment.cvu}/faucet`,
          { amount: 1500 },
          server.token
        )
        if (ok(reply, "credit").data["target_id"] !== payment.id)
          throw new Error(`credit ${payment.cvu}: ${reply.body.slice(0, 300)}`)
      }
    }
  }
  const counted = (database: string, before: number) => async (sent: number) => {
    const recorded = (await store.transfers(database)) - before
    if (recorded !== sent)
      throw new Error(`${store.name}: ${sent} credits sent, ${recorded} transfers recorded`)
  }
  const results: Array<Measured> = []
  console.error(`${store.name}: raw`)
  await attempt(results, "raw", baseline(rawServer))
  console.error(`${store.name}: Effect floor`)
  await attempt(results, "floor", baseline(floorServer))
  for (const [i, checkout] of CHECKOUTS.entries()) {
    const cobro = label(checkout, "cobro")
    const database = store.cobro[i]!
    console.error(`${store.name}: ${cobro}, faucet`)
    await attempt(results, cobro, async () => {
      const server = await startCobro(database, {}, checkout)
      const token = await demoToken(server)
      return {
        server,
        openCreations: true,
        credit: faucetCredit(server, token),
        verify: counted(database, 0)
      }
    })
    const bind = label(checkout, "cobro + BIND")
    const bindDatabase = store.bind[i]!
    console.error(`${store.name}: ${bind}, notifications`)
    const sim = await BindSimulator.start({ now: Date.now })
    try {
      await attempt(results, bind, async () => {
        const env = {
          COBRO_BANK: "bind",
          COBRO_BIND_BASE_URL: sim.url,
          COBRO_BIND_TOKEN_URL: sim.tokenUrl,
          COBRO_BIND_CLIENT_ID: sim.clientId,
          COBRO_BIND_CLIENT_SECRET: sim.clientSecret,
          COBRO_BIND_CUIT: sim.entity.cuit,
          COBRO_BIND_WEBHOOK_SECRET: WEBHOOK_SECRET,
          // The statement's reconciliation is background work of its own: not during the loops.
          COBRO_RECONCILE_INTERVAL: "1 day"
        }
        const server = await startCobro(bindDatabase, env, checkout)
        const redeliveries = { count: 0 }
        return {
          server,
          openCreations: false,
          credit: bindCredit(server, sim, redeliveries),
          verify: counted(bindDatabase, 0),
          note: () => `${redeliveries.count} notifications delivered again (a 503 or no answer)`
        }
      })
    } finally {
      await sim.close()
    }
  }
  return results
}

// --- main ----------------------------------------------------------------------------------------------

const results: Array<{ store: string; servers: ReadonlyArray<Measured> }> = []
const started = performance.now()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-bench-credit-"))
try {
  if (STORES.includes("sqlite"))
    results.push({ store: "SQLite", servers: await benchStore(sqliteStore(dir)) })
  if (STORES.includes("pg")) {
    const admin = new pg.Client({ connectionString: pgAdmin })
    const reachable = await admin.connect().then(
      () => true,
      () => false
    )
    if (!reachable) console.error(`Postgres at ${pgAdmin} is not reachable: skipping Postgres`)
    else {
      const name = (n: string) => `cobro_bench_credit_${n}_${process.pid}`
      const url = (n: string) => {
        const u = new URL(pgAdmin)
        u.pathname = `/${name(n)}`
        return u.toString()
      }
      const cobroNames = CHECKOUTS.map((_, i) => `cobro_${i}`)
      const bindNames = CHECKOUTS.map((_, i) => `bind_${i}`)
      const names = ["baselines", ...cobroNames, ...bindNames].map(name)
      const [baselines, cobro, bind] = [url("baselines"), cobroNames.map(url), bindNames.map(url)]
      try {
        for (const name of names) await admin.query(`CREATE DATABASE ${name}`)
        results.push({ store: "Postgres", servers: await benchStore(pgStore({ baselines, cobro, bind })) })
      } finally {
        for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await admin.end()
      }
    }
  }
} finally {
  agent.destroy()
  fs.rmSync(dir, { recursive: true, force: true })
}

// --- report ----------------------------------------------------------------------------------------------

const commit = (checkout: string) => {
  try {
    return execFileSync("git", ["-C", checkout, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "?"
  }
}
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—")
const ratio = (a: number, b: number) => (Number.isFinite(a / b) && b > 0 ? (a / b).toFixed(2) : "—")
const minutes = ((performance.now() - started) / 60_000).toFixed(1)
const cpu = os.cpus()
const lines: Array<string> = [
  `## Credits and fixed rates (\`npm run bench:credit\`) — ${new Date().toISOString().slice(0, 10)} — ${cpu.length}× ${cpu[0]?.model.trim() ?? "?"}, Node ${process.versions.node}`,
  "",
  `cobro: ${CHECKOUTS.map((c) => `\`${path.basename(c)}\` at \`${commit(c)}\``).join(", ")}. Settings: ${QUICK ? "BENCH_QUICK=1, " : ""}${CONCURRENCY} in flight, creations warmed up ${WARMUP_SECONDS} s, open loops of ${OPEN_SECONDS} s at ${RATES.join(" and ")} a second, credits: ${CREDIT_WARMUP} to warm up, ${CREDITS} batched, ${LONE} one at a time. The run took ${minutes} min; load average at its end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}.`,
  "",
  "How to read it. Four servers on each store, one after the other: **raw** (`bench/raw-server.ts`: node:http and the driver, the credit written by hand in one transaction as `bench/credit-statements.ts` lists it — the payment by its CVU, the transfer, the payment's update, the ledger entry with its four postings and balances, the outbox row), **floor** (`bench/effect-server.ts`: the same statements on Effect HttpApi, Schema and `@effect/sql`, no cobro), **cobro** (the reference server, sandbox mode, credited through `POST /cvu/{cvu}/faucet`) and **cobro + BIND** (the reference server with `COBRO_BANK=bind` against BIND's simulator in the bench process, credited by BIND's `transfer.cvu.received` body, which cobro confirms with the simulator's \"Consultar transferencias\" before crediting: its CPU includes that call, and a 503 is delivered again as BIND would; its creations, which call the simulator too, do not run at the fixed rates). CPU µs a credit is the server process's own CPU time (utime + stime, 10 ms ticks) over a loop divided by its requests: the figure to compare, with the ratios to raw of the last table (1 = as cheap as raw). *Batched*: " +
    String(CONCURRENCY) +
    " credits in flight, so a store's round trips and commits are shared; *one at a time*: each its own unit of work, as spread-out bank notifications are. The open loops send on a fixed schedule and count latency from the scheduled send time (no coordinated omission): a server slower than the rate queues, and its p99 is the queue's. The payments carry no webhook URL, so no delivery runs behind a loop (the credit writes the outbox row, no delivery row). The machine is shared: a load average far above its cores inflates every figure (CPU too, by cache and frequency) and makes the p99s mostly the host's; read ratios within the run.",
  "",
  "| store | server | batched: credits/s | CPU µs a credit | p50 ms | p99 ms | one at a time: credits/s | CPU µs a credit | p50 ms | p99 ms | CPU stolen %: batched, one at a time |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
]
for (const { servers, store } of results) {
  for (const m of servers) {
    lines.push(
      `| ${store} | ${m.server} | ${m.batched.perSecond} | ${m.batched.cpu} | ${ms(m.batched.p50)} | ${ms(m.batched.p99)} | ${m.lone.perSecond} | ${m.lone.cpu} | ${ms(m.lone.p50)} | ${ms(m.lone.p99)} | ${m.batched.steal.toFixed(0)}, ${m.lone.steal.toFixed(0)} |`
    )
  }
}
lines.push(
  "",
  `| store | server | ${RATES.flatMap((r) => [`creations at ${r}/s: p50 ms`, "p99 ms", "CPU µs"]).join(" | ")} | ${RATES.flatMap((r) => [`credits at ${r}/s: p50 ms`, "p99 ms", "CPU µs"]).join(" | ")} |`,
  `| --- | --- | ${RATES.flatMap(() => ["---", "---", "---", "---", "---", "---"]).join(" | ")} |`
)
for (const { servers, store } of results) {
  for (const m of servers) {
    const cells = (runs: ReadonlyArray<Run>) =>
      RATES.flatMap((_, i) => {
        const r = runs[i]
        return r === undefined ? ["—", "—", "—"] : [ms(r.p50), ms(r.p99), String(r.cpu)]
      })
    lines.push(`| ${store} | ${m.server} | ${[...cells(m.creations), ...cells(m.credits)].join(" | ")} |`)
  }
}
lines.push(
  "",
  `| store | server ÷ raw | credit CPU, batched | credit CPU, one at a time | ${RATES.flatMap((r) => [`creation p99 at ${r}/s`, `credit p99 at ${r}/s`]).join(" | ")} |`,
  `| --- | --- | --- | --- | ${RATES.flatMap(() => ["---", "---"]).join(" | ")} |`
)
for (const { servers, store } of results) {
  const raw = servers.find((m) => m.server === "raw")
  if (raw === undefined) continue
  for (const m of servers.filter((s) => s.server !== "raw")) {
    lines.push(
      `| ${store} | ${m.server} | ${ratio(m.batched.cpu, raw.batched.cpu)} | ${ratio(m.lone.cpu, raw.lone.cpu)} | ${RATES.flatMap((_, i) => [ratio(m.creations[i]?.p99 ?? NaN, raw.creations[i]!.p99), ratio(m.credits[i]!.p99, raw.credits[i]!.p99)]).join(" | ")} |`
    )
  }
}
const notes = results.flatMap(({ servers, store }) =>
  servers.flatMap((m) => (m.note === undefined ? [] : [`${store}, ${m.server}: ${m.note}.`]))
)
if (notes.length > 0) lines.push("", notes.join(" "))
if (failures.length > 0) lines.push("", `Failed: ${failures.join("; ")}.`)
const section = lines.join("\n")
console.log(section)
if (process.env["BENCH_NO_WRITE"] !== "1") {
  // In place of the previous run's section (the latest only; earlier runs are in git history).
  const file = path.join(root, "bench/results.md")
  const text = fs.readFileSync(file, "utf8")
  const heading = "## Credits and fixed rates"
  const at = text.indexOf(heading)
  const end = at < 0 ? -1 : text.indexOf("\n## ", at + heading.length)
  const next =
    at < 0 ? `${text}\n${section}\n` : `${text.slice(0, at)}${section}\n${end < 0 ? "" : text.slice(end)}`
  fs.writeFileSync(
    file,
    await prettier.format(next, { ...(await prettier.resolveConfig(file)), filepath: file })
  )
}
