/* global Buffer, console, performance, process, setTimeout */
/**
 * CPU time per request of the reference server at several checkouts, side by side: for each
 * checkout in turn (alternating, ROUNDS times), a fresh server on a fresh SQLite file (STORE=pg: a
 * fresh Postgres database), 1,000 creations of warm-up, then N creations, then faucet transfers to
 * those payments (up to 1,000 of warm-up after the first 1,500, then those 1,500 measured), with
 * 16 in flight; the server's own CPU time (utime + stime from /proc/<pid>/stat) over each phase
 * divided by the requests; then N reads of those payments (`GET /payments/{id}` with the
 * merchant's token) likewise. Steadier than requests per second on a shared machine, though
 * still noisy: compare the lowest figure of several rounds. Not part of the tests.
 *
 *   node bench/cpu-ab.mjs /path/to/checkout-a /path/to/checkout-b
 *
 * A checkout of another commit: `git worktree add /tmp/a <commit>` and copy `node_modules` (and
 * `packages/server/node_modules`) into it. `PROFILE_DIR=/tmp/prof` writes each server's V8 CPU
 * profile there (`--cpu-prof`), for `node bench/profile-summary.mjs /tmp/prof/<file>.cpuprofile`.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

const roots = process.argv.slice(2)
const rounds = Number(process.env.ROUNDS ?? 2)
const N = Number(process.env.N ?? 3000)
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

const start = async (root) => {
  let url
  if (store === "sqlite") url = path.join(scratch, `db-${databases.length}-${Date.now()}.sqlite`)
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
const run = async (root) => {
  const s = await start(root)
  const created = []
  const ids = []
  const create = async () => {
    const r = await send(s.base, "POST", "/payments/", {
      user_id: "demo",
      external_id: `x-${++seq}`,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      webhook_url: "https://merchant.example.com/hooks"
    })
    if (r.status !== 200 && r.status !== 201) throw new Error(r.body)
    const data = JSON.parse(r.body).data
    created.push(data.quotes[0].cvu)
    ids.push(data.id)
  }
  await loop(1000, create)
  created.length = 0
  let c0 = cpu(s.child.pid),
    t0 = performance.now()
  await loop(N, create)
  const createCpu = (cpu(s.child.pid) - c0) / N,
    createRate = N / ((performance.now() - t0) / 1000)
  const id = /client_id:\s+(\S+)/.exec(s.out())[1],
    secret = /client_secret:\s+(\S+)/.exec(s.out())[1]
  const token = JSON.parse(
    (await send(s.base, "POST", "/users/demo/tokens", { client_id: id, client_secret: secret })).body
  ).data
  const tk = token.token ?? token.access_token
  const faucet = (cvus) => {
    let k = 0
    return loop(cvus.length, async () => {
      const r = await send(s.base, "POST", `/cvu/${cvus[k++]}/faucet`, { amount: 1500 }, tk)
      if (r.status >= 300) throw new Error(r.body)
    })
  }
  const cvus = created.slice(0, Math.min(1500, created.length))
  // The faucet's own warm-up: V8 is still optimizing the crediting path, which the creations
  // before it never ran (hundreds of functions in the first thousand transfers).
  await faucet(created.slice(cvus.length, cvus.length + 1000))
  c0 = cpu(s.child.pid)
  t0 = performance.now()
  await faucet(cvus)
  const faucetCpu = (cpu(s.child.pid) - c0) / cvus.length,
    faucetRate = cvus.length / ((performance.now() - t0) / 1000)
  let k = 0
  const read = async () => {
    const r = await send(
      s.base,
      "GET",
      `/payments/${encodeURIComponent(ids[k++ % ids.length])}`,
      undefined,
      tk
    )
    if (r.status !== 200) throw new Error(r.body)
  }
  await loop(500, read)
  c0 = cpu(s.child.pid)
  t0 = performance.now()
  await loop(N, read)
  const readCpu = (cpu(s.child.pid) - c0) / N,
    readRate = N / ((performance.now() - t0) / 1000)
  s.child.kill("SIGTERM")
  await new Promise((r) => s.child.once("exit", r))
  return {
    createCpu: Math.round(createCpu),
    createRate: Math.round(createRate),
    faucetCpu: Math.round(faucetCpu),
    faucetRate: Math.round(faucetRate),
    readCpu: Math.round(readCpu),
    readRate: Math.round(readRate)
  }
}
for (let r = 0; r < rounds; r++)
  for (const root of roots) {
    const res = await run(root)
    console.log(
      store,
      root,
      JSON.stringify(res),
      "load",
      fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0]
    )
  }
for (const name of databases) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
fs.rmSync(scratch, { recursive: true, force: true })
process.exit(0)
