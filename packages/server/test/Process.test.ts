/**
 * The `cobro` executable as an operator runs it: a real process through bin/cobro.js (the
 * sources bundled at start, no build step), listening, serving, and stopping cleanly on SIGTERM.
 */
import { describe, expect, it } from "vitest"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { START_TIMEOUT, spawnCobro } from "./support.js"

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly errors: () => string
  readonly exited: Promise<number | null>
}

/** `output` is stdout alone here, `errors` stderr. */
const start = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string): Running => {
  const { child, stdout, stderr } = spawnCobro(args, env, cwd)
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: stdout, errors: stderr, exited }
}

const waitFor = async (running: Running, pattern: RegExp, timeout: number): Promise<RegExpMatchArray> => {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    const match = running.output().match(pattern)
    if (match !== null) return match
    if (running.child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no ${pattern} in the output:\n${running.output()}\n--- stderr ---\n${running.errors()}`)
}

/** A token of the demo merchant, from the credentials the banner printed. */
const demoToken = async (running: Running, url: string): Promise<string> => {
  const [, clientId] = await waitFor(running, /client_id: +(\S+)/, 10_000)
  const [, clientSecret] = await waitFor(running, /client_secret: +(cs_\S+)/, 10_000)
  const issued = await fetch(`${url}/users/demo/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, client_secret: clientSecret })
  })
  expect(issued.status).toBe(200)
  return ((await issued.json()) as { data: { token: string } }).data.token
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<A>((_, reject) => setTimeout(() => reject(new Error(`${what} timed out`)), ms))
  ])

describe("cobro executable", () => {
  it(
    "serve: listens, prints docs and demo credentials, serves the API, exits 0 on SIGTERM",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-process-"))
      const running = start(["serve"], { PORT: "0", COBRO_JOB_INTERVAL: "1 second" }, dir)
      try {
        const [, url] = await waitFor(running, /Listening on (http:\/\/localhost:\d+)/, START_TIMEOUT)
        await waitFor(running, /client_secret: cs_/, 10_000)
        expect(running.output()).toContain("(sandbox mode)")
        expect(running.output()).toContain(`Docs:       ${url}/docs`)
        expect(running.output()).toMatch(/user_id: +demo/)
        // The default database: ./.cobro/cobro.db under the working directory, created at start.
        expect(fs.existsSync(path.join(dir, ".cobro", "cobro.db"))).toBe(true)

        const openapi = await fetch(`${url}/openapi.json`)
        expect(openapi.status).toBe(200)
        const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> }
        expect(document.openapi).toMatch(/^3\./)
        expect(Object.keys(document.paths)).toContain("/payments/")

        // The demo merchant's own test clock: its token reads it; without one, 401.
        expect((await fetch(`${url}/sandbox/clock`)).status).toBe(401)
        const token = await demoToken(running, url)
        const clock = await fetch(`${url}/sandbox/clock`, { headers: { authorization: `Bearer ${token}` } })
        expect(clock.status).toBe(200)

        running.child.kill("SIGTERM")
        const code = await withTimeout(running.exited, 30_000, "shutdown")
        expect(code).toBe(0)
        expect(running.output()).toContain("cobro: stopping")
        expect(running.output()).toContain("cobro: stopped")
      } finally {
        if (running.child.exitCode === null) running.child.kill("SIGKILL")
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    START_TIMEOUT + 60_000
  )

  it(
    "SIGTERM stops accepting but finishes the request in flight and its webhook delivery",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-process-"))
      // A receiver that takes 1.5 s to answer, so the delivery is in flight when SIGTERM arrives.
      const arrivals: Array<string> = []
      const receiver = http.createServer((req, res) => {
        let body = ""
        req.on("data", (chunk: Buffer) => (body += chunk.toString()))
        req.on("end", () => {
          arrivals.push(body)
          setTimeout(() => res.writeHead(200).end(), 1_500)
        })
      })
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const running = start(["serve"], { PORT: "0", COBRO_JOB_INTERVAL: "1 hour" }, dir)
      try {
        const [, url] = await waitFor(running, /Listening on (http:\/\/localhost:\d+)/, START_TIMEOUT)
        await waitFor(running, /client_secret: cs_/, 10_000)
        const created = await fetch(`${url}/payments/`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            user_id: "demo",
            external_id: "graceful",
            price: { amount: 100, currency: "ARS" },
            payment_options: ["transfer"],
            webhook_url: hook
          })
        })
        expect(created.status).toBe(200)

        const token = await demoToken(running, url)
        const advance = fetch(`${url}/sandbox/clock/advance`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            connection: "close",
            authorization: `Bearer ${token}`
          },
          body: JSON.stringify({ seconds: 6 * 86_400 })
        })
        const deadline = Date.now() + 30_000
        while (arrivals.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
        expect(arrivals).toHaveLength(1)

        running.child.kill("SIGTERM")
        await waitFor(running, /cobro: stopping/, 10_000)
        await new Promise((r) => setTimeout(r, 300))
        // The port no longer accepts requests…
        await expect(fetch(`${url}/openapi.json`, { headers: { connection: "close" } })).rejects.toThrow()
        // …but the request in flight is answered, after its webhook delivery finished.
        const answered = await withTimeout(advance, 30_000, "the request in flight")
        expect(answered.status).toBe(200)
        expect(((await answered.json()) as { data: { offset_seconds: number } }).data.offset_seconds).toBe(
          518_400
        )
        expect(JSON.parse(arrivals[0]!)).toMatchObject({
          message: "Payment updated",
          paymentId: "VAR-demo-graceful"
        })

        expect(await withTimeout(running.exited, 30_000, "shutdown")).toBe(0)
      } finally {
        if (running.child.exitCode === null) running.child.kill("SIGKILL")
        await new Promise<void>((resolve) => receiver.close(() => resolve()))
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    START_TIMEOUT + 90_000
  )

  it(
    "a bad configuration exits 1 with a message naming the variable",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-process-"))
      const running = start(["serve"], { COBRO_MODE: "production", PORT: "0" }, dir)
      try {
        const code = await withTimeout(running.exited, START_TIMEOUT, "start")
        expect(code).toBe(1)
        expect(running.errors()).toMatch(
          /^cobro: invalid configuration:\n {2}COBRO_SECRET_KEY is required in production mode/
        )
        expect(fs.existsSync(path.join(dir, ".cobro"))).toBe(false)
      } finally {
        if (running.child.exitCode === null) running.child.kill("SIGKILL")
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    START_TIMEOUT + 10_000
  )
})
