/**
 * The raw baseline of `bench/http.ts`: node:http and one INSERT into the same store, nothing
 * else. `POST /payments/` parses the JSON body, inserts one row of about 1 KB (id, merchant,
 * external id, a fake CVU, time, the document) and answers 200 with a small JSON body, the same
 * shape of work the reference server does for a creation minus the engine. Run as a child
 * process: `tsx bench/raw-server.ts <sqlite-file | postgres://…>`; prints `listening <port>`.
 */
import Database from "better-sqlite3"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import pg from "pg"

const target = process.argv[2]
if (target === undefined) throw new Error("usage: raw-server <sqlite file | postgres url>")

type Insert = (row: ReadonlyArray<unknown>) => Promise<void>

const CREATE =
  "CREATE TABLE IF NOT EXISTS raw_payments (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, external_id TEXT NOT NULL, cvu TEXT NOT NULL UNIQUE, created_ms BIGINT NOT NULL, doc TEXT NOT NULL, UNIQUE (user_id, external_id))"

const open = async (): Promise<Insert> => {
  if (/^postgres(ql)?:\/\//.test(target)) {
    const pool = new pg.Pool({ connectionString: target, max: 10 })
    await pool.query(CREATE)
    return async (row) => {
      await pool.query("INSERT INTO raw_payments VALUES ($1, $2, $3, $4, $5, $6)", [...row])
    }
  }
  const db = new Database(target)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.exec(CREATE)
  const insert = db.prepare("INSERT INTO raw_payments VALUES (?, ?, ?, ?, ?, ?)")
  return async (row) => {
    insert.run(...row)
  }
}

const insert = await open()
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
    if (req.method !== "POST" || req.url !== "/payments/") return answer(404, { error: true })
    let body: { user_id?: unknown; external_id?: unknown; price?: { amount?: unknown } }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body
    } catch {
      return answer(400, { error: true })
    }
    const n = ++sequence
    const id = `raw-${process.pid}-${n}`
    const cvu = String(n).padStart(22, "0")
    const doc = JSON.stringify({ id, ...body, cvu, pad: "x".repeat(800) })
    insert([id, String(body.user_id), String(body.external_id), cvu, Date.now(), doc]).then(
      () => answer(200, { message: "payment.created", error: false, code: 200, data: { id, cvu } }),
      (error: unknown) => answer(500, { error: true, message: String(error) })
    )
  })
})

server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
