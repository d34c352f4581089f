/* global Buffer, console, process, setTimeout */
/**
 * CPU time per request of the reference server at several checkouts, side by side: one server per
 * checkout, each on a fresh SQLite file (STORE=pg: a fresh Postgres database), all running at
 * once. Each phase (creations, then faucet transfers to the payments made, then
 * `GET /payments/{id}` of them with the merchant's token) first warms every server up, then sends
 * the servers CHUNK requests each in turn, CHUNKS times, the order reversed every other time, 16
 * in flight. A server's figure is its own CPU time (utime + stime from /proc/<pid>/stat) over its
 * chunks divided by the requests: the machine's noise (other guests, the database, the load
 * generator) falls on every checkout alike, which running them one after the other did not give.
 * Still noisy on a shared machine: run it twice. Not part of the tests.
 *
 *   node bench/cpu-ab.mjs /path/to/checkout-a /path/to/checkout-b
 *
 * A checkout of another commit: `git worktree add /tmp/a <commit>` and copy `node_modules` (and
 * the node_modules folder of each package) into it. `PROFILE_DIR=/tmp/prof` writes each server's
 * V8 CPU profile there (`--cpu-prof`), for `node bench/profile-summary.mjs <file>.cpuprofile`.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const roots = process.argv.slice(2)
const CHUNK = Number(process.env.CHUNK ?? 250)
const CHUNKS = Number(process.env.CHUNKS ?? 8)
const C = 16
const store = process.env.STORE ?? "sqlite"
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
const send = (base, method, url, body, token) =>
  new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      base + url,
      {
        method,
        agent,
        headers: {
          "content-type": "application/json",
          // As clients send a small body (without it node sends it chunked, another path).
          ...(data === undefined ? {} : { "content-length": Buffer.byteLength(data) }),
          ...(token ? { authorization: `Bearer ${token}` } : {})
        }
      },
      (res) => {
        let out = ""
        res.on("data", (c) => (out += c))
        res.on("end", () => resolve({ status: res.statusCode, body: out }))
      }
    )
    req.on("error", reject)
    if (data) req.write(data)
    req.end()
  })
const cpu = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(f[11]) + Number(f[12])) * 10000 // µs (CLK_TCK 100)
}
let seq = 0
const admin = async (statement) => {
  const c = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" })
  await c.connect()
  await c.query(statement)
  await c.end()
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-cpu-ab-"))
/** What each run leaves behind: a Postgres database to drop (SQLite files go with `scratch`). */
const databases = []
let started = 0

const start = async (root) => {
  let url
  if (store === "sqlite") url = path.join(scratch, `db-${++started}.sqlite`)
  else {
    const name = `cobro_cpu_ab_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
    await admin(`CREATE DATABASE ${name}`)
    databases.push(name)
    url = `postgres://postgres@127.0.0.1:5432/${name}`
  }
  const profile = process.env.PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : []
  const child = spawn(process.execPath, [...profile, `${root}/packages/server/bin/cobro.js`, "serve"], {
    env: {
      ...process.env,
      PORT: "0",
      COBRO_MODE: "sandbox",
      COBRO_DATABASE_URL: url,
      COBRO_RATE_LIMITS: "off",
      COBRO_LOG_LEVEL: "warn"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (out += d))
  for (;;) {
    const m = /Listening on http:\/\/localhost:(\d+)/.exec(out)
    if (m) return { child, base: `http://127.0.0.1:${m[1]}`, out: () => out }
    if (child.exitCode !== null) throw new Error(out)
    await new Promise((r) => setTimeout(r, 50))
  }
}
const loop = async (n, f) => {
  let i = 0
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (i < n) {
        i++
        await f()
      }
    })
  )
}

const servers = []
for (const root of roots) {
  const s = await start(root)
  const id = /client_id:\s+(\S+)/.exec(s.out())[1],
    secret = /client_secret:\s+(\S+)/.exec(s.out())[1]
  const token = JSON.parse(
    (await send(s.base, "POST", "/users/demo/tokens", { client_id: id, client_secret: secret })).body
  ).data
  servers.push({ root, ...s, token: token.token ?? token.access_token, cvus: [], ids: [], read: 0 })
}

const create = (s) => async () => {
  const r = await send(s.base, "POST", "/payments/", {
    user_id: "demo",
    external_id: `x-${++seq}`,
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"],
    webhook_url: "https://merchant.example.com/hooks"
  })
  if (r.status !== 200 && r.status !== 201) throw new Error(r.body)
  const data = JSON.parse(r.body).data
  s.cvus.push(data.quotes[0].cvu)
  s.ids.push(data.id)
}
const faucet = (s) => async () => {
  const r = await send(s.base, "POST", `/cvu/${s.cvus.pop()}/faucet`, { amount: 1500 }, s.token)
  if (r.status >= 300) throw new Error(r.body)
}
const read = (s) => async () => {
  const r = await send(
    s.base,
    "GET",
    `/payments/${encodeURIComponent(s.ids[s.read++ % s.ids.length])}`,
    undefined,
    s.token
  )
  if (r.status !== 200) throw new Error(r.body)
}

const total = CHUNK * CHUNKS

/** µs of each server's CPU per request of `op`, after `warmUp` requests to each. */
const phase = async (op, warmUp) => {
  for (const s of servers) await loop(warmUp, op(s))
  const spent = servers.map(() => 0)
  for (let c = 0; c < CHUNKS; c++) {
    const order = c % 2 === 0 ? servers : [...servers].reverse()
    for (const s of order) {
      const before = cpu(s.child.pid)
      await loop(CHUNK, op(s))
      spent[servers.indexOf(s)] += cpu(s.child.pid) - before
    }
  }
  return spent.map((us) => Math.round(us / total))
}

const createCpu = await phase(create, 1000)
// Payments for the faucet's own warm-up and its chunks, made outside the measured phase: V8 is
// still optimizing the crediting path, which the creations never ran, in the first thousand.
for (const s of servers) await loop(Math.max(0, 1000 + total - s.cvus.length), create(s))
const faucetCpu = await phase(faucet, 1000)
const readCpu = await phase(read, 500)
servers.forEach((s, i) =>
  console.log(
    store,
    s.root,
    JSON.stringify({ createCpu: createCpu[i], faucetCpu: faucetCpu[i], readCpu: readCpu[i] }),
    "load",
    fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0]
  )
)
for (const s of servers) {
  s.child.kill("SIGTERM")
  await new Promise((r) => s.child.once("exit", r))
}
for (const name of databases) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
fs.rmSync(scratch, { recursive: true, force: true })
process.exit(0)
