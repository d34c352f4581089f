/**
 * `/healthz` and `/readyz` (issue 22 item 1) and the request log (item 4): probes without auth
 * or rate limits; readiness 503 while the Postgres database refuses connections and 200 again
 * after; 503 during a shutdown while the port still answers; and the log of a real `cobro serve`
 * over real traffic (a token issued with a client secret, a payment, a faucet transfer): one
 * line per request with its route template, and no secret, token or CVU in it.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { Server } from "../src/index.js"
import {
  configOf,
  execCobroJson,
  get,
  listeningPort,
  serverLayer,
  spawnCobro,
  START_TIMEOUT,
  stop,
  tempDb
} from "./support.js"

const pgUp = await Effect.runPromise(pgAvailable)

const asAdmin = async (statement: string) => {
  const client = new pg.Client({ connectionString: pgAdminUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

describe("probes", () => {
  it.scopedLive("/healthz 200 and /readyz 200 without auth, never rate limited", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb })
      yield* Effect.gen(function* () {
        const health = yield* get("/healthz")
        expect(health.status).toBe(200)
        expect(health.body).toEqual({ status: "ok" })
        const ready = yield* get("/readyz")
        expect(ready.status).toBe(200)
        expect(ready.body).toMatchObject({ status: "ready", database: "ok", stopping: false })
        expect(ready.body["schema"]).toMatchObject({ current: true })
        // Past every per-address limit of the API (300 a minute is the highest).
        const statuses = yield* Effect.forEach(
          Array.from({ length: 320 }, (_, i) => (i % 2 === 0 ? "/healthz" : "/readyz")),
          (url) => Effect.map(get(url), (r) => r.status),
          { concurrency: 8 }
        )
        expect(statuses.filter((s) => s !== 200)).toEqual([])
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.scopedLive("/readyz 503 while the Postgres database refuses connections, 200 again after", () =>
    Effect.gen(function* () {
      if (!pgUp) return
      const url = yield* freshPgUrl
      const name = new URL(url).pathname.slice(1)
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`))
      )
      const config = yield* configOf({ COBRO_DATABASE_URL: url, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        expect((yield* get("/readyz")).status).toBe(200)

        yield* Effect.promise(() => asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`))
        yield* Effect.promise(() =>
          asAdmin(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`
          )
        )
        const down = yield* get("/readyz")
        expect(down.status).toBe(503)
        expect(down.body).toMatchObject({ status: "not_ready", database: "unavailable", stopping: false })
        expect((yield* get("/healthz")).status).toBe(200)

        yield* Effect.promise(() => asAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`))
        const back = yield* get("/readyz")
        expect(back.status).toBe(200)
        expect(back.body).toMatchObject({ status: "ready", database: "ok" })
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.live("a shutdown turns /readyz 503 while the port still answers, then closes the port", () =>
    Effect.gen(function* () {
      const config = yield* Effect.scoped(
        Effect.flatMap(tempDb, (db) =>
          configOf({ COBRO_DATABASE_URL: db, PORT: "0", COBRO_SHUTDOWN_DELAY: "1500 millis" })
        )
      )
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(Server.layer(config), scope)
      const { address } = (yield* Effect.provide(HttpServer.HttpServer, context)) as HttpServer.HttpServer
      const base = `http://127.0.0.1:${(address as HttpServer.TcpAddress).port}`
      const probe = (p: string) =>
        Effect.promise(() =>
          fetch(`${base}${p}`).then(
            async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
            () => ({ status: 0, body: {} })
          )
        )
      expect((yield* probe("/readyz")).status).toBe(200)

      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Effect.sleep("300 millis")
      const stopping = yield* probe("/readyz")
      expect(stopping.status).toBe(503)
      expect(stopping.body).toMatchObject({ status: "not_ready", stopping: true, database: "ok" })
      expect((yield* probe("/healthz")).status).toBe(200)

      yield* Fiber.join(closing)
      expect((yield* probe("/healthz")).status).toBe(0)
    })
  )
})

describe("request log", () => {
  it(
    "below the minimum level no request line is written, and the request is still counted",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-logs-"))
      const running = spawnCobro(
        ["serve"],
        {
          PORT: "0",
          COBRO_DATABASE_URL: path.join(dir, "cobro.db"),
          COBRO_LOG_FORMAT: "json",
          COBRO_LOG_LEVEL: "warn"
        },
        dir
      )
      try {
        const port = await listeningPort(running, START_TIMEOUT, () => void running.child.kill("SIGKILL"))
        const base = `http://127.0.0.1:${port}`
        expect((await fetch(`${base}/payments/VAR-nobody-x/public`)).status).toBe(404)
        const scraped = await (await fetch(`${base}/metrics`)).text()
        expect(scraped).toMatch(
          /cobro_http_requests_total\{[^}]*route="\/payments\/:paymentId\/public"[^}]*\} 1\b/
        )
        const lines = running
          .stdout()
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { message: unknown })
        expect(lines.filter((l) => l.message === "request")).toEqual([])
      } finally {
        await stop(running)
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    START_TIMEOUT + 60_000
  )

  it(
    "json lines, one per request with its route; no secret, token or CVU in the output",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-logs-"))
      const env = {
        COBRO_DATABASE_URL: path.join(dir, "cobro.db"),
        COBRO_LOG_FORMAT: "json",
        COBRO_LOG_LEVEL: "debug"
      }
      const running = spawnCobro(["serve"], { PORT: "0", ...env }, dir)
      try {
        const port = await listeningPort(running, START_TIMEOUT, () => void running.child.kill("SIGKILL"))
        const base = `http://127.0.0.1:${port}`
        const created = await execCobroJson<Record<string, string>>(
          [
            "users",
            "create",
            "--name",
            "Tienda Logs",
            "--email",
            "logs@example.com",
            "--cuit",
            "30712345671"
          ].concat(["--status", "ACTIVE"]),
          env
        )
        const call = async (method: string, url: string, body: unknown, token?: string) => {
          const r = await fetch(`${base}${url}`, {
            method,
            headers: {
              "content-type": "application/json",
              ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
            },
            body: JSON.stringify(body)
          })
          return { status: r.status, body: (await r.json()) as { data: Record<string, unknown> } }
        }
        const issued = await call("POST", `/users/${created["user_id"]}/tokens`, {
          client_id: created["client_id"],
          client_secret: created["client_secret"]
        })
        expect(issued.status).toBe(200)
        const token = String(issued.body.data["token"])
        const payment = await call(
          "POST",
          "/payments/",
          {
            user_id: created["user_id"],
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          },
          token
        )
        expect(payment.status).toBe(200)
        const cvu = String((payment.body.data["quotes"] as Array<{ cvu: string }>)[0]!.cvu)
        const sent = await call("POST", `/cvu/${cvu}/faucet`, { amount: 1500 }, token)
        expect(sent.status).toBe(200)
        const wrong = await call("POST", `/users/${created["user_id"]}/tokens`, {
          client_id: created["client_id"],
          client_secret: "cs_wrong-secret-that-must-not-be-logged"
        })
        expect(wrong.status).toBe(401)
        expect((await fetch(`${base}/healthz`)).status).toBe(200)

        const lines = () =>
          running
            .stdout()
            .split("\n")
            .filter((l) => l.startsWith("{"))
            .map(
              (l) =>
                JSON.parse(l) as { message: unknown; logLevel: string; annotations: Record<string, unknown> }
            )
        const requests = () => lines().filter((l) => l.message === "request")
        const deadline = Date.now() + 10_000
        while (requests().length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
        const seen = requests().map((l) => [
          l.annotations["http.method"],
          l.annotations["http.route"],
          l.annotations["http.status"],
          l.annotations["user_id"]
        ])
        expect(seen).toEqual([
          ["POST", "/users/:id/tokens", 200, undefined],
          // Public: the body names the merchant, nobody authenticated.
          ["POST", "/payments/", 200, undefined],
          ["POST", "/cvu/:cvu/faucet", 200, created["user_id"]],
          ["POST", "/users/:id/tokens", 401, undefined],
          ["GET", "/healthz", 200, undefined]
        ])
        for (const line of requests()) expect(typeof line.annotations["duration_ms"]).toBe("number")
        expect(requests().at(-1)!.logLevel).toBe("DEBUG")

        const output = running.output()
        for (const secret of [
          created["client_secret"]!,
          "cs_wrong-secret-that-must-not-be-logged",
          token,
          cvu
        ]) {
          expect(output).not.toContain(secret)
        }
        // No CVU or CBU of anyone (22 digits) in any log line (the banner prints the demo's payout CBU).
        for (const line of lines()) expect(JSON.stringify(line)).not.toMatch(/\d{22}/)
      } finally {
        await stop(running)
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    START_TIMEOUT + 60_000
  )
})
