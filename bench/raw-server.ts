/**
 * The raw baseline of `bench/http.ts`: node:http and the statements of each request into the same
 * store, nothing else. `POST /payments/` parses the JSON body, inserts one row of about 1 KB (id,
 * merchant, external id, a fake CVU, time, the document) and answers 200 with a small JSON body,
 * the same shape of work the reference server does for a creation minus the engine.
 * `GET /payments/<id>` does what cobro's read of one payment does minus the engine: the bearer
 * token looked up by its SHA-256 (lower-case hex, live: neither revoked nor expired), the
 * payment's row (another merchant's payment is a 404), the merchant's row, and the payment's
 * document with the merchant's `user_info` in the `{message, error, code, data}` envelope.
 * `POST /cvu/<cvu>/faucet` (`{amount}`, the merchant's bearer token) is a credit as cobro's faucet
 * writes it, by hand in one transaction (`credit.ts`): the token, then the payment looked up by
 * its CVU and locked, the transfer inserted (a repeated one credits nothing), the payment's
 * document updated to paid, the ledger entry with its four postings and the balances, and the
 * outbox row.
 * Run as a child process: `tsx bench/raw-server.ts <sqlite-file | postgres://…>`; prints
 * `listening <port> token <token>` (the token of the merchant `demo`, made at start).
 */
import Database from "better-sqlite3"
import { createHash, randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import pg from "pg"
import * as Credit from "./credit-statements.js"

const target = process.argv[2]
if (target === undefined) throw new Error("usage: raw-server <sqlite file | postgres url>")

interface Store {
  readonly insert: (row: ReadonlyArray<unknown>) => Promise<void>
  /** The merchant of a live token, by the token's hash. */
  readonly tokenUser: (hash: string, now: number) => Promise<string | undefined>
  readonly payment: (id: string) => Promise<{ user_id: string; doc: string } | undefined>
  readonly merchant: (userId: string) => Promise<{ doc: string } | undefined>
  /** A credit of `minor` to the payment of `cvu`, for merchant `userId`, in one transaction. */
  readonly credit: (userId: string, cvu: string, minor: number) => Promise<Credit.Outcome>
}

const DDL = [
  "CREATE TABLE IF NOT EXISTS raw_payments (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, external_id TEXT NOT NULL, cvu TEXT NOT NULL UNIQUE, created_ms BIGINT NOT NULL, doc TEXT NOT NULL, UNIQUE (user_id, external_id))",
  "CREATE TABLE IF NOT EXISTS raw_users (user_id TEXT PRIMARY KEY, email TEXT NOT NULL, doc TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS raw_tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES raw_users (user_id), created_ms BIGINT NOT NULL, expires_ms BIGINT, revoked_ms BIGINT)"
]
const TOKEN =
  "SELECT user_id FROM raw_tokens WHERE token_hash = $1 AND revoked_ms IS NULL AND (expires_ms IS NULL OR expires_ms > $2)"
const PAYMENT = "SELECT user_id, doc FROM raw_payments WHERE id = $1"
const MERCHANT = "SELECT doc FROM raw_users WHERE user_id = $1"
const INSERT_USER = "INSERT INTO raw_users VALUES ($1, $2, $3) ON CONFLICT (user_id) DO NOTHING"
const INSERT_TOKEN = "INSERT INTO raw_tokens VALUES ($1, $2, $3, NULL, NULL)"
/** The `?` placeholders of SQLite for the `$n` of Postgres. */
const positional = (text: string) => text.replace(/\$\d+/g, "?")

const open = async (): Promise<Store> => {
  if (/^postgres(ql)?:\/\//.test(target)) {
    const pool = new pg.Pool({ connectionString: target, max: 10 })
    for (const statement of [...DDL, ...Credit.ddl("pg", "raw")]) await pool.query(statement)
    const statements = Credit.statements("pg", "raw")
    const one = async <T>(text: string, values: ReadonlyArray<unknown>) =>
      (await pool.query(text, [...values])).rows[0] as T | undefined
    return {
      insert: async (row) => {
        await pool.query("INSERT INTO raw_payments VALUES ($1, $2, $3, $4, $5, $6)", [...row])
      },
      tokenUser: async (hash, now) => (await one<{ user_id: string }>(TOKEN, [hash, now]))?.user_id,
      payment: (id) => one(PAYMENT, [id]),
      merchant: (userId) => one(MERCHANT, [userId]),
      credit: async (userId, cvu, minor) => {
        const client = await pool.connect()
        try {
          await client.query("BEGIN")
          const payment = (await client.query(statements.payment, [cvu])).rows[0] as
            Credit.PaymentRow | undefined
          const plan = Credit.plan(userId, cvu, minor, payment)
          if (plan._tag !== "Credit") {
            await client.query("ROLLBACK")
            return plan
          }
          const inserted = await client.query(statements.transfer, [...plan.transfer])
          if (inserted.rowCount === 0) {
            await client.query("ROLLBACK")
            return { _tag: "Duplicate" }
          }
          await client.query(statements.updatePayment, [...plan.payment])
          await client.query(statements.ledger, [
            ...plan.entry,
            ...plan.postings.flat(),
            ...plan.balances.flat()
          ])
          await client.query(statements.outbox, [...plan.outbox])
          await client.query("COMMIT")
          return {
            _tag: "Credited",
            transfer: plan.transfer[0] as string,
            payment: plan.payment[1] as string
          }
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined)
          throw error
        } finally {
          client.release()
        }
      }
    }
  }
  const db = new Database(target)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  for (const statement of [...DDL, ...Credit.ddl("sqlite", "raw")]) db.exec(statement)
  const sqlite = Credit.statements("sqlite", "raw")
  const creditPayment = db.prepare(sqlite.payment)
  const creditTransfer = db.prepare(sqlite.transfer)
  const creditUpdate = db.prepare(sqlite.updatePayment)
  const creditEntry = db.prepare(sqlite.entry)
  const creditPostings = db.prepare(sqlite.postings)
  const creditBalances = db.prepare(sqlite.balances)
  const creditOutbox = db.prepare(sqlite.outbox)
  const credit = db.transaction((userId: string, cvu: string, minor: number): Credit.Outcome => {
    const plan = Credit.plan(userId, cvu, minor, creditPayment.get(cvu) as Credit.PaymentRow | undefined)
    if (plan._tag !== "Credit") return plan
    if (creditTransfer.get(...plan.transfer) === undefined) return { _tag: "Duplicate" }
    creditUpdate.run(...plan.payment)
    const position = creditEntry.run(...plan.entry).lastInsertRowid
    creditPostings.run(...plan.postings.flatMap((p) => [position, ...p]))
    creditBalances.run(...plan.balances.flat())
    creditOutbox.run(...plan.outbox)
    return { _tag: "Credited", transfer: plan.transfer[0] as string, payment: plan.payment[1] as string }
  })
  const insert = db.prepare("INSERT INTO raw_payments VALUES (?, ?, ?, ?, ?, ?)")
  const token = db.prepare(positional(TOKEN))
  const payment = db.prepare(positional(PAYMENT))
  const merchant = db.prepare(positional(MERCHANT))
  return {
    insert: async (row) => {
      insert.run(...row)
    },
    tokenUser: async (hash, now) => (token.get(hash, now) as { user_id: string } | undefined)?.user_id,
    payment: async (id) => payment.get(id) as { user_id: string; doc: string } | undefined,
    merchant: async (userId) => merchant.get(userId) as { doc: string } | undefined,
    credit: async (userId, cvu, minor) => credit.immediate(userId, cvu, minor)
  }
}

const store = await open()

/** The merchant `demo` (its `user_info` as cobro answers it) and a token of its own. */
const seed = async () => {
  const userInfo = {
    email: "demo@merchant.example.com",
    fiat_payments_enabled: true,
    payment_notifications: true,
    user_id: "demo",
    provider: "cobro",
    payment_url: "https://pay.example.com",
    payment_options: ["transfer"],
    expiration_timestamp: "2030-01-01T00:00:00.000Z"
  }
  const token = `USR-${randomBytes(24).toString("hex")}`
  const hash = createHash("sha256").update(token).digest("hex")
  const user = ["demo", userInfo.email, JSON.stringify(userInfo)]
  if (/^postgres(ql)?:\/\//.test(target)) {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query(INSERT_USER, user)
    await client.query(INSERT_TOKEN, [hash, "demo", Date.now()])
    await client.end()
  } else {
    const db = new Database(target)
    db.prepare(positional(INSERT_USER)).run(...user)
    db.prepare(positional(INSERT_TOKEN)).run(hash, "demo", Date.now())
    db.close()
  }
  return token
}
const token = await seed()

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i
let sequence = 0

const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      res.end(text)
    }
    const fail = (error: unknown) => answer(500, { error: true, message: String(error) })
    if (req.method === "GET" && req.url?.startsWith("/payments/") === true) {
      const id = decodeURIComponent(req.url.slice("/payments/".length))
      const bearer = BEARER.exec(req.headers.authorization ?? "")?.[1]
      if (bearer === undefined) return answer(401, { error: true, code: 401 })
      const hash = createHash("sha256").update(bearer).digest("hex")
      const read = async () => {
        const userId = await store.tokenUser(hash, Date.now())
        if (userId === undefined) return answer(401, { error: true, code: 401 })
        const payment = await store.payment(id)
        if (payment === undefined || payment.user_id !== userId)
          return answer(404, { error: true, code: 404 })
        const merchant = await store.merchant(userId)
        if (merchant === undefined) return answer(404, { error: true, code: 404 })
        const data = {
          ...(JSON.parse(payment.doc) as object),
          user_info: JSON.parse(merchant.doc) as unknown
        }
        answer(200, { message: "payment.found", error: false, code: 200, data })
      }
      return void read().catch(fail)
    }
    const faucet = req.method === "POST" ? Credit.FAUCET.exec(req.url ?? "") : null
    if (faucet !== null) {
      const bearer = BEARER.exec(req.headers.authorization ?? "")?.[1]
      if (bearer === undefined) return answer(401, { error: true, code: 401 })
      const hash = createHash("sha256").update(bearer).digest("hex")
      let amount: unknown
      try {
        amount = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { amount?: unknown }).amount
      } catch {
        return answer(400, { error: true })
      }
      if (typeof amount !== "number" || !(amount > 0)) return answer(400, { error: true })
      const minor = Math.round(amount * 100)
      const pay = async () => {
        const userId = await store.tokenUser(hash, Date.now())
        if (userId === undefined) return answer(401, { error: true, code: 401 })
        const outcome = await store.credit(userId, faucet[1]!, minor)
        const [status, body] = Credit.answer(outcome)
        answer(status, body)
      }
      return void pay().catch(fail)
    }
    if (req.method !== "POST" || req.url !== "/payments/") return answer(404, { error: true })
    let body: { user_id?: unknown; external_id?: unknown; price?: { amount?: unknown } }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body
    } catch {
      return answer(400, { error: true })
    }
    const n = ++sequence
    const id = `raw-${process.pid}-${n}`
    // 22 digits, the process in them: a server started again on the same tables makes new ones.
    const cvu = `${String(process.pid % 10_000_000).padStart(7, "0")}${String(n).padStart(15, "0")}`
    const doc = JSON.stringify({ id, ...body, cvu, pad: "x".repeat(800) })
    store
      .insert([id, String(body.user_id), String(body.external_id), cvu, Date.now(), doc])
      .then(
        () => answer(200, { message: "payment.created", error: false, code: 200, data: { id, cvu } }),
        fail
      )
  })
})

server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port} token ${token}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
