/**
 * What the HTTP benchmarks share (`bench/http.ts`, `bench/credit.ts`): the servers as child
 * processes (cobro as `npm start` runs it, and the baselines `bench/raw-server.ts` and
 * `bench/effect-server.ts`), their CPU time from `/proc`, a keep-alive HTTP client, and the
 * loads: a closed loop (a fixed number of requests in flight), an open loop (requests sent on a
 * fixed schedule, latency from the scheduled time, so a stall is not hidden) and a counted loop
 * (each of a list of requests once, a fixed number in flight), each with the server's CPU per
 * request. Not part of the tests.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))
export const rawServer = path.join(root, "bench/raw-server.ts")
export const floorServer = path.join(root, "bench/effect-server.ts")
export const pgAdmin = process.env["COBRO_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

// --- processes ----------------------------------------------------------------------------------

export interface Server {
  readonly child: ChildProcess
  readonly base: string
  readonly output: () => string
}

/** A baseline server and the bearer token of its merchant `demo`. */
export interface Baseline extends Server {
  readonly token: string
}

export const startProcess = async (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: RegExp,
  cwd = root
): Promise<Server & { readonly match: RegExpExecArray }> => {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()))
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()))
  const deadline = Date.now() + 120_000
  for (;;) {
    const match = ready.exec(out)
    if (match !== null) return { child, base: "", output: () => out, match }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`${args.join(" ")} did not start:\n${out}`)
    }
    await sleep(50)
  }
}

/** cobro's server from `checkout` (a checkout of the repository; this one by default) on `database`. */
export const startCobro = async (
  database: string,
  env: Record<string, string> = {},
  checkout = root
): Promise<Server> => {
  const started = await startProcess(
    [path.join(checkout, "packages/server/bin/cobro.js"), "serve"],
    {
      PORT: "0",
      COBRO_MODE: "sandbox",
      COBRO_DATABASE_URL: database,
      COBRO_RATE_LIMITS: "off",
      COBRO_LOG_LEVEL: "warn",
      ...env
    },
    /Listening on http:\/\/localhost:(\d+)/,
    checkout
  )
  return { ...started, base: `http://127.0.0.1:${started.match[1]}` }
}

/** A baseline server (`raw-server.ts`, `effect-server.ts`) on `database`. */
export const startBaseline = async (script: string, database: string): Promise<Baseline> => {
  const started = await startProcess(["--import", "tsx", script, database], {}, /listening (\d+) token (\S+)/)
  return { ...started, base: `http://127.0.0.1:${started.match[1]}`, token: started.match[2]! }
}

export const stop = async (server: Server) => {
  if (server.child.exitCode !== null) return
  const exited = new Promise<void>((resolve) => server.child.once("exit", () => resolve()))
  server.child.kill("SIGTERM")
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 30_000)
  await exited
  clearTimeout(timer)
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
export const memory = (server: Server) => {
  const status = fs.readFileSync(`/proc/${server.child.pid}/status`, "utf8")
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU time the process has used (user + system), in µs: `/proc/<pid>/stat`, CLK_TCK 100. */
export const cpuMicros = (pid: number | undefined) => {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/stat`)) return NaN
  // The command name (2nd field) is in parentheses and may hold spaces: count from after it.
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

// --- HTTP client --------------------------------------------------------------------------------

/**
 * Keep-alive connections, an idle one closed by the client after 2 s: node's servers close one
 * after 5 s (`keepAliveTimeout`), and a request sent on a connection the server is closing fails
 * (ECONNRESET, "socket hang up"). On a loaded machine the timers of both sides fire late, so
 * that race still happens: `send` sends again a request that failed that way on a reused
 * connection before any answer (the server never read it), as node's documentation advises.
 */
export const agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: 2000 })

export interface Reply {
  readonly status: number
  readonly body: string
}

const once = (
  base: string,
  method: string,
  url: string,
  payload: string | undefined,
  headers: Record<string, string | number>
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = http.request(`${base}${url}`, { method, agent, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      res.on("error", reject)
    })
    req.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        req.reusedSocket && (error.code === "ECONNRESET" || error.message === "socket hang up")
          ? new Stale()
          : error
      )
    )
    req.end(payload)
  })

/** A request that failed on a reused keep-alive connection the server had closed. */
class Stale extends Error {}

export const send = async (
  base: string,
  method: string,
  url: string,
  body?: unknown,
  token?: string,
  extra: Record<string, string> = {}
): Promise<Reply> => {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers = {
    ...(payload === undefined
      ? {}
      : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...extra
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(base, method, url, payload, headers)
    } catch (error) {
      if (!(error instanceof Stale) || attempt >= 5) throw error
    }
  }
}

export const ok = (reply: Reply, what: string) => {
  if (reply.status !== 200) throw new Error(`${what}: HTTP ${reply.status} ${reply.body.slice(0, 300)}`)
  return JSON.parse(reply.body) as { data: Record<string, unknown> }
}

// --- load ---------------------------------------------------------------------------------------

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export interface Run {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly count: number
  /** Share of the machine's CPU time the hypervisor took for other guests during the run (%). */
  readonly steal: number
  /** The server's own CPU time during the run divided by the requests it answered, in µs. */
  readonly cpu: number
}

/** The machine's CPU time counters (/proc/stat), to tell a slow run from a busy host. */
export const cpuTimes = (): ReadonlyArray<number> =>
  fs.existsSync("/proc/stat")
    ? fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    : []

/** Percentage of the CPU time since `before` that was stolen (the 8th counter of /proc/stat). */
export const stealSince = (before: ReadonlyArray<number>) => {
  const delta = cpuTimes().map((t, i) => t - (before[i] ?? 0))
  const total = delta.reduce((a, b) => a + b, 0)
  return total > 0 ? ((delta[7] ?? 0) / total) * 100 : NaN
}

/** What a loop measures from its start: the machine's CPU counters and the server's CPU time. */
export interface Before {
  readonly machine: ReadonlyArray<number>
  readonly server: number
  readonly pid: number | undefined
}

export const measureFrom = (server: Server): Before => ({
  machine: cpuTimes(),
  server: cpuMicros(server.child.pid),
  pid: server.child.pid
})

export const summary = (latencies: ReadonlyArray<number>, elapsed: number, before: Before): Run => ({
  perSecond: Math.round((latencies.length / elapsed) * 1000),
  p50: percentile(latencies, 50),
  p99: percentile(latencies, 99),
  count: latencies.length,
  steal: stealSince(before.machine),
  cpu: Math.round((cpuMicros(before.pid) - before.server) / latencies.length)
})

/** `concurrency` workers call `request` back to back for `seconds`; `server` is the one measured. */
export const closedLoop = async (
  server: Server,
  seconds: number,
  concurrency: number,
  request: () => Promise<void>
): Promise<Run> => {
  const latencies: Array<number> = []
  const before = measureFrom(server)
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now()
        await request()
        latencies.push(performance.now() - t)
      }
    })
  )
  return summary(latencies, performance.now() - start, before)
}

/** `rate` requests a second on a fixed schedule for `seconds`; latency from the scheduled time. */
export const openLoop = async (
  server: Server,
  seconds: number,
  rate: number,
  request: () => Promise<void>
): Promise<Run> => {
  const latencies: Array<number> = []
  const inFlight: Array<Promise<void>> = []
  const total = Math.max(1, Math.round(seconds * rate))
  const before = measureFrom(server)
  const start = performance.now()
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / rate
    const wait = scheduled - performance.now()
    if (wait > 1) await sleep(wait)
    inFlight.push(request().then(() => void latencies.push(performance.now() - scheduled)))
  }
  await Promise.all(inFlight)
  return summary(latencies, performance.now() - start, before)
}

/**
 * Each of `count` requests once (`request(i)` for i from 0), `inFlight` at a time, measured as the
 * other loops are: for requests that consume something (a credit pays one payment).
 */
export const countedLoop = async (
  server: Server,
  count: number,
  inFlight: number,
  request: (i: number) => Promise<void>
): Promise<Run> => {
  const latencies: Array<number> = []
  let next = 0
  const before = measureFrom(server)
  const start = performance.now()
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const i = next++
        const t = performance.now()
        await request(i)
        latencies.push(performance.now() - t)
      }
    })
  )
  return summary(latencies, performance.now() - start, before)
}

/** The demo merchant's token, from the credentials cobro printed on its first start. */
export const demoToken = async (server: Server) => {
  const id = /client_id:\s+(\S+)/.exec(server.output())?.[1]
  const secret = /client_secret:\s+(\S+)/.exec(server.output())?.[1]
  if (id === undefined || secret === undefined) throw new Error(`no demo credentials in:\n${server.output()}`)
  const data = ok(
    await send(server.base, "POST", "/users/demo/tokens", { client_id: id, client_secret: secret }),
    "token"
  ).data
  return String(data["token"] ?? data["access_token"])
}
