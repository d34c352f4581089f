/**
 * Outgoing transfers in flight under SIGKILL, on the reference server itself: `cobro serve` with
 * `COBRO_BANK=bind` against a `BindSimulator`, on a SQLite file and on Postgres. Merchants
 * onboarded by a partner with a daily payout schedule, and the demo merchant's split payouts,
 * are funded by transfers the simulator notifies to the server. The sandbox clock makes them all
 * due while the bank keeps every transfer pending and loses the answers to the first sends
 * (applied, then timed out); the server is killed with SIGKILL in the middle of sending. While it
 * is down the bank completes most transfers and fails some. The restarted server shows them in
 * flight (`/metrics`, `cobro transfers list`) and settles them: each transfer is in the
 * simulator's books once, each payout settled once (money back and one event for a failed one),
 * and `cobro ledger verify` passes.
 *
 * The scenario, for its two tests: `inFlight.sqlite.test.ts` and `inFlight.postgres.test.ts`
 * (files of their own, so that they run side by side in separate workers: each mostly waits on
 * real time, and its bank simulator answers within the server's 500 ms from its own process).
 */
import { expect } from "vitest"
import { OriginId } from "@cobro/bank-bind"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { BankAccount, SecondFactor } from "@cobro/core"
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import {
  bindEnv,
  type CobroProcess,
  execCobro,
  execCobroJson,
  kill9,
  listeningPort,
  metricSeries,
  START_TIMEOUT,
  spawnCobro,
  stop
} from "./support.js"

/** Merchants with a payout schedule (one sweep each), and split payouts of the demo merchant. */
const SWEEPS = 3
const SPLITS = 9
const TOTAL = SWEEPS + SPLITS
const SECRET = "hook-secret-0123456789"
const day = 86_400
/**
 * `COBRO_TRANSFER_CHECK_INTERVAL` of the restarted server: its sends, and transfers a check left
 * in flight, are checked again this soon. The first server keeps the default, a real minute
 * (`FIRST_CHECK_MILLIS`): longer than the kill and the restart take, so the restarted server finds
 * its sends not yet due.
 */
const RECHECK = "5 seconds"
const FIRST_CHECK_MILLIS = 60_000
const payer = { cuit: "20123456786", name: "Ana Gómez", cbu: BankAccount.makeCbu("0170099", "2200000123456") }

// --- the server and its database ----------------------------------------------------------------

interface Running extends CobroProcess {
  readonly base: string
}

const serve = async (env: Record<string, string>, cwd: string): Promise<Running> => {
  const started = spawnCobro(["serve"], env, cwd)
  const port = await listeningPort(started, START_TIMEOUT, () => {
    started.child.kill("SIGKILL")
  })
  return { ...started, base: `http://127.0.0.1:${port}` }
}

/**
 * Reads the database the server writes (SQLite file or Postgres), one query at a time; `run`
 * writes one statement (the test moves the bank's time on, see `killMidFlightAndRestart`).
 */
export interface Reader {
  readonly rows: <A>(query: string) => Promise<ReadonlyArray<A>>
  readonly run: (statement: string) => Promise<void>
  readonly close: () => Promise<void>
}

export const sqliteReader = (file: string): Reader => {
  const open = <A>(readonly: boolean, f: (db: Database.Database) => A): Promise<A> => {
    // Waits for the server's write lock rather than failing with SQLITE_BUSY.
    const db = new Database(file, { readonly, fileMustExist: true, timeout: 10_000 })
    try {
      return Promise.resolve(f(db))
    } finally {
      db.close()
    }
  }
  return {
    rows: <A>(query: string) => open(true, (db) => db.prepare(query).all() as ReadonlyArray<A>),
    run: (statement: string) => open(false, (db) => void db.prepare(statement).run()),
    close: () => Promise.resolve()
  }
}

export const pgReader = (url: string): Reader => {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  return {
    rows: async <A>(query: string) => (await pool.query(query)).rows as ReadonlyArray<A>,
    run: async (statement: string) => void (await pool.query(statement)),
    close: () => pool.end()
  }
}

const count = async (reader: Reader, query: string) =>
  Number((await reader.rows<{ n: number | string }>(query))[0]!.n)

// --- HTTP ---------------------------------------------------------------------------------------

interface Reply {
  readonly status: number
  readonly body: Record<string, unknown>
}

const call = async (
  base: string,
  method: string,
  url: string,
  body?: unknown,
  token?: string
): Promise<Reply> => {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let parsed: Record<string, unknown> = {}
  try {
    parsed = JSON.parse(text) as Record<string, unknown>
  } catch {
    parsed = { text }
  }
  return { status: response.status, body: parsed }
}

const dataOf = <A = Record<string, unknown>>(reply: Reply, what: string): A => {
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body["data"] as A
}

/** The demo merchant's token (its credentials are in the start banner). */
const demoToken = async (running: Running) => {
  const id = /client_id:\s+(\S+)/.exec(running.output())?.[1]
  const secret = /client_secret:\s+(\S+)/.exec(running.output())?.[1]
  return dataOf<{ token: string }>(
    await call(running.base, "POST", "/users/demo/tokens", { client_id: id, client_secret: secret }),
    "demo token"
  ).token
}

/**
 * A merchant registered on the hosted onboarding page (`/authorize`, its form over plain HTTP
 * with its CSRF cookie), and the partner's token for it from the code the page redirects with.
 */
const onboard = async (
  base: string,
  partner: { partner_id: string; client_id: string; client_secret: string },
  i: number,
  cuit: string
) => {
  const page = await fetch(`${base}/authorize?partner_id=${encodeURIComponent(partner.partner_id)}`)
  expect(page.status).toBe(200)
  const cookie = /cobro_csrf=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1]
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1]
  expect(cookie).toBeDefined()
  expect(csrf).toBeDefined()
  const submitted = await fetch(`${base}/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `cobro_csrf=${cookie}` },
    body: new URLSearchParams({
      form: "register",
      partner_id: partner.partner_id,
      name: `Tienda ${i}`,
      email: `tienda${i}@example.com`,
      cuit,
      password: "una clave bastante larga",
      consent: "yes",
      csrf_token: csrf!
    })
  })
  expect(submitted.status, await submitted.clone().text()).toBe(303)
  const code = new URL(submitted.headers.get("location")!).searchParams.get("code")
  const grant = dataOf<{ token: string; user_id: string }>(
    await call(base, "POST", "/auth/tokens", {
      code,
      client_id: partner.client_id,
      client_secret: partner.client_secret
    }),
    "partner token"
  )
  return grant
}

/** Money in for `user_id`: a payment, paid by a transfer the simulator notifies to the server. */
const fund = async (base: string, sim: BindSimulator.Simulator, user_id: string, amount: number) => {
  const payment = dataOf<{ id: string }>(
    await call(base, "POST", "/payments/", {
      user_id,
      external_id: `fund-${user_id}`,
      price: { amount, currency: "ARS" },
      payment_options: ["transfer"]
    }),
    "payment"
  )
  const cvu = dataOf<{ quotes: ReadonlyArray<{ address: string }> }>(
    await call(base, "GET", `/payments/${payment.id}/public`),
    "public payment"
  ).quotes[0]!.address
  expect((await sim.receive({ cvu, amount, sender: payer })).status).toBe(200)
  expect(
    dataOf<{ payment_status: string }>(await call(base, "GET", `/payments/${payment.id}/public`), "paid")
      .payment_status
  ).toBe("SUCCESS")
}

/** The metrics' series (`name{labels}` → value). */
const scrape = async (base: string) => metricSeries(await (await fetch(`${base}/metrics`)).text())

// --- the scenario -------------------------------------------------------------------------------

/** Every payout of the database with its transfer's reference and how it ended. */
const payoutsOf = (reader: Reader) =>
  Promise.all([
    reader.rows<{ reference: string; status: string; owner: string }>(
      "SELECT payout_id AS reference, payout_status AS status, user_id AS owner FROM cobro_payouts"
    ),
    reader.rows<{ reference: string; status: string; owner: string }>(
      "SELECT payout_id AS reference, status, split_payment_id AS owner FROM cobro_split_payouts"
    )
  ]).then(([a, b]) => [...a, ...b])

export const killMidFlightAndRestart = async (database: string, reader: Reader) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-inflight-"))
  const sim = await BindSimulator.start({ now: () => Date.now() })
  const env: Record<string, string> = {
    COBRO_DATABASE_URL: database,
    COBRO_MODE: "sandbox",
    PORT: "0",
    COBRO_RATE_LIMITS: "off",
    // Due work runs when the test advances the sandbox clock (and once at each start).
    COBRO_JOB_INTERVAL: "1 hour",
    COBRO_RECONCILE_INTERVAL: "1 hour",
    ...bindEnv(sim),
    // A lost answer is a timeout soon (yet long enough for a simulator on a busy machine to answer
    // the others; shorter than RECHECK), and a transfer is not retried within the send.
    COBRO_BIND_TIMEOUT: "2 seconds",
    COBRO_BIND_RETRIES: "0",
    COBRO_BIND_RETRY_BASE: "10 millis",
    COBRO_BIND_WEBHOOK_SECRET: SECRET
  }
  const notify = (base: string) =>
    sim.setWebhook({
      url: `${base}/bank/bind/notifications`,
      header: "x-bind-webhook-secret",
      secret: SECRET
    })
  let running: Running | undefined = await serve(env, dir)
  try {
    const first: Running = running
    notify(first.base)

    // Merchants of a partner, each with a daily sweep to its own account, funded.
    const partner = await execCobroJson<{ partner_id: string; client_id: string; client_secret: string }>(
      ["partners", "create", "--name", "Socio", "--redirect-url", "https://socio.example.com/back"],
      env
    )
    const partnerTokens: Array<string> = []
    for (let i = 1; i <= SWEEPS; i++) {
      const cuit = BankAccount.makeCuit("30", String(71_000_000 + i))
      const own = BankAccount.makeCbu("0170099", String(900 + i).padStart(13, "0"))
      sim.addHolder({ cuit, name: `Tienda ${i}`, cbu: own })
      const grant = await onboard(first.base, partner, i, cuit)
      partnerTokens.push(grant.token)
      // Verified by the operator: a PENDING account takes no payments.
      await execCobroJson(["accounts", "set-status", grant.user_id, "ACTIVE"], env)
      dataOf(
        await call(
          first.base,
          "POST",
          "/transactions/schedules",
          { schedule_type: "payout", frequency: "daily", payload: { address: own } },
          grant.token
        ),
        "schedule"
      )
      await fund(first.base, sim, grant.user_id, 1500 + i)
    }

    // The demo merchant's split: paid, then one payout to each of SPLITS verified accounts.
    const token = await demoToken(first)
    const split = dataOf<{ split_payment_id: string; cvu: string }>(
      await call(first.base, "POST", "/split/payments", { external_id: "s-1" }, token),
      "split"
    )
    expect((await sim.receive({ cvu: split.cvu, amount: 10_000, sender: payer })).status).toBe(200)
    const addresses = Array.from({ length: SPLITS }, (_, j) => {
      const cbu = BankAccount.makeCbu("0170099", String(800 + j).padStart(13, "0"))
      sim.addHolder({ cuit: BankAccount.makeCuit("20", String(40_000_800 + j)), name: `Socio ${j}`, cbu })
      return cbu
    })
    const created = dataOf<{ request_id: string }>(
      await call(
        first.base,
        "POST",
        "/split/accounts",
        addresses.map((address) => ({ address })),
        token
      ),
      "split accounts"
    )
    const accounts = dataOf<{ accounts: ReadonlyArray<{ account_id: string }> }>(
      await call(
        first.base,
        "POST",
        "/split/accounts/verify",
        { request_id: created.request_id, code: SecondFactor.sandboxCode(created.request_id) },
        token
      ),
      "verify"
    ).accounts
    expect(accounts).toHaveLength(SPLITS)
    dataOf(
      await call(
        first.base,
        "POST",
        `/split/payments/${split.split_payment_id}/payouts`,
        { payouts: accounts.map((a, j) => ({ account_id: a.account_id, amount: 100 + j })) },
        token
      ),
      "instruction"
    )

    // The bank accepts every transfer as pending; the answers to the first 3 sends are lost.
    // The clocks make every payout due; SIGKILL once the bank holds most transfers.
    sim.faults.holdTransfers = true
    sim.faults.dropTransferAnswers = 3
    // Each answer takes a while, so the kill comes while transfers are still being sent.
    sim.faults.slowAnswersMillis = 200
    // Each merchant's own test clock, all at once: the demo merchant's (its split) and each
    // partner merchant's (its sweep).
    const advancing = Promise.all(
      [token, ...partnerTokens].map((t) =>
        call(first.base, "POST", "/sandbox/clock/advance", { seconds: 2 * day }, t).catch(() => undefined)
      )
    )
    const deadline = Date.now() + 60_000
    while (sim.transfers.size < TOTAL - 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    await kill9(first)
    running = undefined
    // Killed mid-sending: some payouts had not reached the bank.
    expect(sim.transfers.size).toBeGreaterThanOrEqual(TOTAL - 5)
    expect(sim.transfers.size).toBeLessThan(TOTAL)
    sim.faults.slowAnswersMillis = 0
    await advancing

    const inFlight = await reader.rows<{ reference: string; status: string }>(
      "SELECT reference, status FROM cobro_outgoing_transfers WHERE status IN ('SENDING', 'PENDING')"
    )
    expect(inFlight.length).toBeGreaterThan(0)
    // The lost answers (and any send the kill cut) left the outcome unknown.
    expect(inFlight.some((t) => t.status === "SENDING")).toBe(true)
    expect(
      await count(
        reader,
        "SELECT COUNT(*) AS n FROM cobro_outgoing_transfers WHERE status IN ('COMPLETED', 'FAILED')"
      )
    ).toBe(0)

    // While it is down the bank completes most transfers and fails every third of each kind.
    const payouts = await payoutsOf(reader)
    const sweeps = payouts
      .filter((p) => p.reference.startsWith("po_"))
      .map((p) => p.reference)
      .sort()
    const splitPayouts = payouts
      .filter((p) => !p.reference.startsWith("po_"))
      .map((p) => p.reference)
      .sort()
    expect(sweeps).toHaveLength(SWEEPS)
    expect(splitPayouts).toHaveLength(SPLITS)
    const failing = new Set([
      ...sweeps.filter((_, i) => i % 3 === 1),
      ...splitPayouts.filter((_, i) => i % 3 === 1)
    ])
    for (const reference of [...sweeps, ...splitPayouts]) {
      const originId = OriginId.forReference(reference)
      if (sim.transfers.has(originId)) sim.settle(originId, failing.has(reference) ? "FAILED" : "COMPLETED")
    }
    // Later transfers (sent after the restart) are answered at once, and the first resend is lost.
    sim.faults.holdTransfers = false
    sim.faults.dropTransferAnswers = 1

    // The restarted server asks again soon after a check that found nothing settled.
    const second: Running = await serve({ ...env, COBRO_TRANSFER_CHECK_INTERVAL: RECHECK }, dir)
    running = second
    notify(second.base)

    // The operator sees them: the gauges and `cobro transfers list` (nothing is due yet).
    const stillInFlight = await reader.rows<{ reference: string; status: string; purpose: string }>(
      "SELECT reference, status, purpose FROM cobro_outgoing_transfers WHERE status IN ('SENDING', 'PENDING') ORDER BY reference"
    )
    const gauges = await scrape(second.base)
    for (const [kind, purpose] of [
      ["payout_schedule", "schedule_payout"],
      ["split_payout", "split_payout"]
    ] as const) {
      for (const state of ["SENDING", "PENDING"]) {
        expect(
          gauges.get(`cobro_outgoing_transfers_in_flight{kind="${kind}",state="${state}"}`),
          `${kind} ${state}`
        ).toBe(stillInFlight.filter((t) => t.purpose === purpose && t.status === state).length)
      }
    }
    expect(gauges.get("cobro_outgoing_transfers_oldest_in_flight_age_seconds")).toBeGreaterThan(0)
    const listed = await execCobroJson<{
      transfers: ReadonlyArray<{ reference: string; status: string; stuck: boolean }>
    }>(["transfers", "list"], env)
    expect(listed.transfers.map((t) => `${t.reference} ${t.status}`).sort()).toEqual(
      stillInFlight.map((t) => `${t.reference} ${t.status}`)
    )
    expect(listed.transfers.every((t) => !t.stuck)).toBe(true)

    // The settle job asks the bank when each check is due. Transfers at the bank run on real time
    // (a merchant's test clock does not hasten them): the first check is due a real minute after
    // the send. Rather than wait that minute out, the test lets it pass for the bank's time as
    // stored: each check the first server scheduled moves a minute earlier, so it is due now. A
    // later check is the restarted server's, RECHECK after the last; each advance runs the due
    // work, the settle job included.
    await reader.run(
      `UPDATE cobro_outgoing_transfers SET next_check_ms = next_check_ms - ${FIRST_CHECK_MILLIS} WHERE status IN ('SENDING', 'PENDING')`
    )
    const settleDeadline = Date.now() + 240_000
    while (Date.now() < settleDeadline) {
      const open = await count(
        reader,
        "SELECT COUNT(*) AS n FROM cobro_outgoing_transfers WHERE status IN ('SENDING', 'PENDING')"
      )
      const all = await count(reader, "SELECT COUNT(*) AS n FROM cobro_outgoing_transfers")
      if (open === 0 && all === TOTAL) break
      dataOf(await call(second.base, "POST", "/sandbox/clock/advance", { seconds: 120 }, token), "advance")
      await new Promise((r) => setTimeout(r, 500))
    }
    const after = await scrape(second.base)
    expect(after.get("cobro_outgoing_transfers_oldest_in_flight_age_seconds")).toBe(0)
    expect(await execCobroJson(["transfers", "list"], env)).toEqual({ transfers: [] })
    await stop(second)
    running = undefined

    // Each payout's transfer is in the bank's books exactly once, under its reference, and the
    // payout ended as the bank says.
    expect(sim.transfers.size).toBe(TOTAL)
    // Nothing was sent twice: a send whose answer was lost was found by its status, and only the
    // transfers the bank never saw were sent after the restart.
    expect(sim.stats.transferRequests).toBe(TOTAL)
    const settled = await payoutsOf(reader)
    expect(settled).toHaveLength(TOTAL)
    let failedSweeps = 0
    let failedSplits = 0
    for (const p of settled) {
      const entry = sim.transfers.get(OriginId.forReference(p.reference))
      expect(entry, p.reference).toBeDefined()
      expect(p.status, p.reference).toBe(entry!.status === "COMPLETED" ? "SUCCESS" : "FAILED")
      // Failed only where the bank failed a transfer it held while the server was down.
      if (p.status === "FAILED") {
        expect(failing.has(p.reference)).toBe(true)
        if (p.reference.startsWith("po_")) failedSweeps++
        else failedSplits++
      }
    }
    expect(failedSweeps + failedSplits).toBeGreaterThan(0)
    const transfers = await reader.rows<{ reference: string; status: string }>(
      "SELECT reference, status FROM cobro_outgoing_transfers ORDER BY reference"
    )
    expect(transfers.map((t) => t.reference).sort()).toEqual(settled.map((p) => p.reference).sort())
    for (const t of transfers) {
      expect(t.status).toBe(sim.transfers.get(OriginId.forReference(t.reference))!.status)
    }

    // One ledger entry per settled transfer; a failed one's money back once, with one event.
    const entries = await reader.rows<{ kind: string; n: number | string }>(
      "SELECT kind, COUNT(*) AS n FROM cobro_ledger_entries WHERE kind IN ('payout.sent', 'payout.failed', 'split.payout.sent', 'split.payout.failed') GROUP BY kind"
    )
    const entryCounts = Object.fromEntries(entries.map((e) => [e.kind, Number(e.n)]))
    expect(entryCounts["payout.sent"] ?? 0).toBe(SWEEPS - failedSweeps)
    expect(entryCounts["payout.failed"] ?? 0).toBe(failedSweeps)
    expect(entryCounts["split.payout.sent"] ?? 0).toBe(SPLITS - failedSplits)
    expect(entryCounts["split.payout.failed"] ?? 0).toBe(failedSplits)
    expect(await count(reader, "SELECT COUNT(*) AS n FROM cobro_outbox WHERE type = 'payout.failed'")).toBe(
      failedSweeps
    )
    expect(
      await count(reader, "SELECT COUNT(*) AS n FROM cobro_outbox WHERE type = 'split.payouts_result'")
    ).toBe(1)

    const verify = await execCobro(["ledger", "verify", "--json"], env)
    expect(verify.code, verify.stderr).toBe(0)
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [] })
  } finally {
    if (running !== undefined) await kill9(running)
    await sim.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
