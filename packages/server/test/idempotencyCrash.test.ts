/**
 * `Idempotency-Key` across a crash, on real `cobro serve` processes (BIND bank, `BindSimulator`
 * in this process), on a SQLite file and on Postgres. Each request is stopped mid-way by the bank
 * hanging, then its server is killed with SIGKILL and restarted, and the client retries with the
 * same key:
 * - a payment creation stopped before its commit (BIND is opening its CVU): the live server keeps
 *   the key past its lease (the heartbeat renews it: a retry is 409 in progress), the dead one
 *   frees it within the lease, and the retry creates the payment, once;
 * - a refund stopped after its commit (BIND applied the transfer, its answer never comes): the
 *   key already has its answer, so the retry replays the refund (same `refund_id`) instead of
 *   refunding again or answering `refund.payment.fully_refunded`.
 * Then `cobro ledger verify` passes.
 */
import { describe, expect, it } from "vitest"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { BankAccount } from "@cobro/core"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import Database from "better-sqlite3"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import {
  bindEnv,
  type CobroProcess,
  execCobro,
  kill9,
  listeningPort,
  START_TIMEOUT,
  spawnCobro,
  stop
} from "./support.js"

const pgUp = await Effect.runPromise(pgAvailable)
if (!pgUp) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres crash tests are SKIPPED !!!\n`)
}

/** The lease the servers run with (`COBRO_IDEMPOTENCY_LEASE`). */
const LEASE_MS = 3_000
const SECRET = "hook-secret-0123456789"
const payer = {
  cuit: "20123456786",
  name: "Ana Gómez",
  cbu: BankAccount.makeCbu("0170099", "2200000123456")
}

// --- processes and HTTP -------------------------------------------------------------------------

interface Running extends CobroProcess {
  readonly base: string
}

const serve = async (env: Record<string, string>, cwd: string): Promise<Running> => {
  const started = spawnCobro(
    ["serve"],
    { PORT: "0", COBRO_MODE: "sandbox", COBRO_RATE_LIMITS: "off", ...env },
    cwd
  )
  const port = await listeningPort(started, START_TIMEOUT, () => {
    started.child.kill("SIGKILL")
  })
  return { ...started, base: `http://127.0.0.1:${port}` }
}

interface Reply {
  readonly status: number
  readonly body: Record<string, unknown> | undefined
  readonly text: string
  readonly replayed: boolean
}

/** A request on a fresh connection; `undefined` when the connection broke (no answer). */
const call = (
  base: string,
  method: string,
  url: string,
  options: { body?: unknown; token?: string; key?: string } = {}
): Promise<Reply | undefined> =>
  new Promise((resolve) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = http.request(
      `${base}${url}`,
      {
        method,
        agent: false,
        headers: {
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
          ...(options.key === undefined ? {} : { "idempotency-key": options.key })
        }
      },
      (res) => {
        let text = ""
        res.on("data", (c: Buffer) => (text += c.toString()))
        res.on("error", () => resolve(undefined))
        res.on("end", () => {
          let body: Record<string, unknown> | undefined
          try {
            body = JSON.parse(text) as Record<string, unknown>
          } catch {
            body = undefined
          }
          resolve({
            status: res.statusCode ?? 0,
            body,
            text,
            replayed: res.headers["idempotent-replayed"] === "true"
          })
        })
      }
    )
    req.on("error", () => resolve(undefined))
    req.end(payload)
  })

const dataOf = (reply: Reply | undefined, what: string) => {
  if (reply?.status !== 200) throw new Error(`${what}: ${reply?.status} ${reply?.text}`)
  return reply.body!["data"] as Record<string, unknown>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** `read` every 50 ms until it gives a value, for at most `ms`. */
const until = async <A>(what: string, read: () => Promise<A | undefined>, ms = 20_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

const demoToken = async (running: Running) => {
  const id = /client_id:\s+(\S+)/.exec(running.output())?.[1]
  const secret = /client_secret:\s+(\S+)/.exec(running.output())?.[1]
  const data = dataOf(
    await call(running.base, "POST", "/users/demo/tokens", {
      body: { client_id: id, client_secret: secret }
    }),
    "token"
  )
  return String(data["token"])
}

// --- the stores' key rows -----------------------------------------------------------------------

interface KeyRow {
  readonly state: string
  readonly locked_until_ms: number
  readonly response_body: string | null
}

const keySql =
  "SELECT state, locked_until_ms, response_body FROM cobro_idempotency_keys WHERE idempotency_key = "

interface Store {
  readonly name: string
  /** Runs `f` on a new database of this store (its `COBRO_DATABASE_URL`), dropped after. */
  readonly withDatabase: (f: (database: string) => Promise<void>) => Promise<void>
  readonly keyRow: (database: string, key: string) => Promise<KeyRow | undefined>
}

const sqlite: Store = {
  name: "SQLite file",
  withDatabase: async (f) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-idem-"))
    try {
      await f(path.join(dir, "cobro.db"))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },
  keyRow: async (file, key) => {
    if (!fs.existsSync(file)) return undefined
    const db = new Database(file, { readonly: true })
    try {
      const row = db.prepare(`${keySql}?`).get(key) as KeyRow | undefined
      return row === undefined ? undefined : { ...row, locked_until_ms: Number(row.locked_until_ms) }
    } finally {
      db.close()
    }
  }
}

const postgres: Store = {
  name: "Postgres",
  withDatabase: (f) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(freshPgUrl, (url) => Effect.promise(() => f(url))))),
  keyRow: async (url, key) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const rows = (await client.query(`${keySql}$1`, [key])).rows as Array<KeyRow>
      const row = rows[0]
      return row === undefined ? undefined : { ...row, locked_until_ms: Number(row.locked_until_ms) }
    } finally {
      await client.end()
    }
  }
}

// --- the scenario -------------------------------------------------------------------------------

const crashScenario = (store: Store) => () => store.withDatabase((database) => crashed(store, database))

const crashed = async (store: Store, database: string) => {
  const sim = await BindSimulator.start({ now: () => Date.now() })
  sim.addHolder(payer)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-idem-cwd-"))
  const env = {
    COBRO_DATABASE_URL: database,
    COBRO_JOB_INTERVAL: "1 second",
    ...bindEnv(sim),
    COBRO_BIND_RETRY_BASE: "10 millis",
    // Longer than the test waits: a request the bank does not answer stays in flight.
    COBRO_BIND_TIMEOUT: "2 minutes",
    COBRO_BIND_WEBHOOK_SECRET: SECRET,
    COBRO_RECONCILE_INTERVAL: "1 hour",
    COBRO_IDEMPOTENCY_LEASE: `${LEASE_MS} millis`
  }
  let running = await serve(env, dir)
  try {
    const token = await demoToken(running)

    // 1. A payment creation stopped before its commit: BIND does not answer the CVU it opens.
    const body = { user_id: "demo", price: { amount: 1500, currency: "ARS" }, payment_options: ["transfer"] }
    sim.faults.slowAnswersMillis = 10 * 60_000
    const lost = call(running.base, "POST", "/payments/", { body, key: "create-1" })
    await until("the creation to hold its key", () => store.keyRow(database, "create-1"))
    // Alive for longer than its lease: the heartbeat keeps the key; a retry is in progress.
    await sleep(LEASE_MS + 1_000)
    const meanwhile = await call(running.base, "POST", "/payments/", { body, key: "create-1" })
    expect(meanwhile?.status).toBe(409)
    expect(meanwhile?.body).toMatchObject({ message: "idempotency.request.in_progress" })
    await kill9(running)
    const killedAt = Date.now()
    expect(await lost).toBeUndefined()
    const held = (await store.keyRow(database, "create-1"))!
    expect(held.state).toBe("in_flight")
    // The lease the dead process left: at most one lease ahead.
    expect(held.locked_until_ms - killedAt).toBeLessThanOrEqual(LEASE_MS)
    sim.faults.slowAnswersMillis = 0

    running = await serve(env, dir)
    const restarted = running
    const answers: Array<{ at: number; reply: Reply | undefined }> = []
    const created = await until(
      "the retried creation",
      async () => {
        const reply = await call(restarted.base, "POST", "/payments/", { body, key: "create-1" })
        answers.push({ at: Date.now(), reply })
        return reply?.status === 200 ? reply : undefined
      },
      30_000
    )
    // Refused only while the dead process's lease ran, free once it lapsed (not a minute and
    // more later): restarting may well take longer than the lease, then the first retry runs.
    for (const { at, reply } of answers.slice(0, -1)) {
      expect(reply?.status).toBe(409)
      expect(reply?.body).toMatchObject({ message: "idempotency.request.in_progress" })
      expect(at).toBeLessThan(held.locked_until_ms + 1_000)
    }
    expect(answers.at(-1)!.at).toBeLessThan(Math.max(held.locked_until_ms, answers[0]!.at) + 2_000)
    expect(created.replayed).toBe(false)
    const payment = created.body!["data"] as { id: string; quotes: Array<{ cvu: string }> }
    const again = await call(running.base, "POST", "/payments/", { body, key: "create-1" })
    expect(again?.replayed).toBe(true)
    expect(again?.text).toBe(created.text)
    // Created once: the merchant has this one payment.
    const listed = dataOf(await call(running.base, "GET", "/payments/?user_id=demo", { token }), "list") as {
      payments: Array<{ id: string }>
    }
    expect(listed.payments.map((p) => p.id)).toEqual([payment.id])

    // 2. Paid through BIND (its notification), then refunded; BIND applies the refund's transfer
    //    and its answer never comes: the server stops after the refund's commit.
    sim.setWebhook({
      url: `${running.base}/bank/bind/notifications`,
      header: "x-bind-webhook-secret",
      secret: SECRET
    })
    const sent = await sim.receive({ cvu: payment.quotes[0]!.cvu, amount: 1500, sender: payer })
    expect(sent.status).toBe(200)
    const paid = dataOf(await call(running.base, "GET", `/payments/${payment.id}`, { token }), "paid")
    expect(paid["payment_status"]).toBe("SUCCESS")
    // A refund is paid from the merchant's available balance and the commission stays earned: a
    // second paid payment gives it the room to return all 1500 of the first.
    const other = dataOf(await call(running.base, "POST", "/payments/", { body }), "other") as {
      quotes: Array<{ cvu: string }>
    }
    expect((await sim.receive({ cvu: other.quotes[0]!.cvu, amount: 1500, sender: payer })).status).toBe(200)

    const transfersBefore = sim.transfers.size
    sim.faults.dropTransferAnswers = 1
    const refundBody = { refund_type: "FULL" }
    const refundLost = call(running.base, "POST", `/payments/${payment.id}/refunds`, {
      body: refundBody,
      token,
      key: "refund-1"
    })
    await until("BIND to apply the refund's transfer", async () =>
      sim.transfers.size > transfersBefore ? true : undefined
    )
    await kill9(running)
    expect(await refundLost).toBeUndefined()
    // The key has its answer already: the refund, recorded with the refund's own commit.
    const recorded = (await store.keyRow(database, "refund-1"))!
    expect(recorded.state).toBe("completed")
    const recordedRefund = (
      JSON.parse(recorded.response_body!) as { data: { refund_id: string; status: string } }
    ).data
    expect(recordedRefund.status).toBe("PENDING")

    running = await serve(env, dir)
    const retried = await call(running.base, "POST", `/payments/${payment.id}/refunds`, {
      body: refundBody,
      token,
      key: "refund-1"
    })
    expect(retried?.status).toBe(200)
    expect(retried?.replayed).toBe(true)
    expect((retried!.body!["data"] as { refund_id: string }).refund_id).toBe(recordedRefund.refund_id)
    // One refund, one transfer at the bank.
    const refunds = dataOf(
      await call(running.base, "GET", `/payments/${payment.id}/refunds`, { token }),
      "refunds"
    ) as { refunds: Array<{ refund_id: string }> }
    expect(refunds.refunds.map((r) => r.refund_id)).toEqual([recordedRefund.refund_id])
    expect(sim.transfers.size).toBe(transfersBefore + 1)
    // Without the key, the payment is refunded already: the key's answer is what told the client.
    const fresh = await call(running.base, "POST", `/payments/${payment.id}/refunds`, {
      body: refundBody,
      token
    })
    expect(fresh?.status).toBe(409)
    expect(fresh?.body).toMatchObject({ message: "refund.payment.fully_refunded" })

    const verify = await execCobro(["ledger", "verify", "--json"], env)
    expect(verify.code, verify.stderr).toBe(0)
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [] })
  } finally {
    await stop(running)
    await sim.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("Idempotency-Key across kill -9 of the server (BIND simulator)", () => {
  it(
    "SQLite file: a creation stopped before its commit runs once after the lease; a refund stopped after its commit replays",
    crashScenario(sqlite),
    300_000
  )
  it.skipIf(!pgUp)(
    "Postgres: a creation stopped before its commit runs once after the lease; a refund stopped after its commit replays",
    crashScenario(postgres),
    300_000
  )
})
