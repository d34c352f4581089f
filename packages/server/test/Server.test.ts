import { describe, expect, it } from "@effect/vitest"
import { HttpServerRequest } from "@effect/platform"
import { Webhooks } from "@cobro/webhooks"
import { SqlClient } from "@effect/sql"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { DateTime, Effect, Fiber, Layer, Ref, Schedule, type Scope } from "effect"
import { Admin, Background, Server, Services } from "../src/index.js"
import { configOf, get, postJson, serverLayer, tempDb } from "./support.js"

const day = 86_400

/** Postgres runs where it answers (the CLI and offset tests say loudly when it does not). */
const pg = await Effect.runPromise(pgAvailable)

/** An ACTIVE merchant in the server's database. */
const merchant = (user_id: string) =>
  Admin.createUser({
    user_id,
    name: `Tienda ${user_id}`,
    email: `${user_id}@example.com`,
    cuit: "30712345671",
    status: "ACTIVE"
  })

/** An ACTIVE merchant and a user token of it. */
const merchantToken = (user_id: string) =>
  Effect.gen(function* () {
    const { client_id, client_secret } = yield* merchant(user_id)
    const issued = yield* postJson(`/users/${user_id}/tokens`, { client_id, client_secret })
    expect(issued.status).toBe(200)
    return (issued.body["data"] as { token: string }).token
  })

const offsetOf = (r: { readonly body: Record<string, unknown> }) =>
  (r.body["data"] as { offset_seconds: number }).offset_seconds

const createPayment = (user_id: string, external_id: string) =>
  Effect.map(
    postJson("/payments/", {
      user_id,
      external_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"]
    }),
    (r) => {
      expect(r.status).toBe(200)
      return r.body["data"] as { readonly id: string; readonly expiration_timestamp: string }
    }
  )

const statusOf = (id: string) =>
  Effect.map(
    get(`/payments/${id}/public`),
    (r) => (r.body["data"] as { payment_status: string }).payment_status
  )

describe("a merchant's sandbox test clock", () => {
  it.scopedLive("advancing 6 days expires a PENDING payment before the answer", () =>
    Effect.gen(function* () {
      // Background jobs run once at start and then hourly: only the advance can expire the payment.
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const token = yield* merchantToken("tienda")
        const payment = yield* createPayment("tienda", "order-1")
        expect(yield* statusOf(payment.id)).toBe("PENDING")

        const before = yield* get("/sandbox/clock", token)
        expect(before.status).toBe(200)
        expect(before.body).toMatchObject({ message: "sandbox.clock.found", error: false, code: 200 })
        expect((before.body["data"] as { offset_seconds: number }).offset_seconds).toBe(0)

        const advanced = yield* postJson("/sandbox/clock/advance", { seconds: 6 * day }, token)
        expect(advanced.status).toBe(200)
        expect(advanced.body).toMatchObject({
          message: "sandbox.clock.advanced",
          error: false,
          code: 200,
          data: { offset_seconds: 6 * day, due_work: { payments_expired: 1, cvus_released: 1, failed: 0 } }
        })
        const now = DateTime.unsafeMake((advanced.body["data"] as { now: string }).now)
        const ahead = DateTime.toEpochMillis(now) - Date.now()
        expect(ahead).toBeGreaterThan((6 * day - 60) * 1000)
        expect(ahead).toBeLessThan((6 * day + 60) * 1000)
        expect(yield* statusOf(payment.id)).toBe("EXPIRED")

        // New work of the merchant is stamped with its clock's time.
        const later = yield* createPayment("tienda", "order-2")
        const expires = DateTime.toEpochMillis(DateTime.unsafeMake(later.expiration_timestamp))
        expect(expires - Date.now()).toBeGreaterThan((11 * day - 60) * 1000)
        // Code running beside the server in this process stays on real time.
        const here = DateTime.toEpochMillis(yield* DateTime.now) - Date.now()
        expect(Math.abs(here)).toBeLessThan(60_000)

        expect(offsetOf(yield* get("/sandbox/clock", token))).toBe(6 * day)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.scopedLive("refuses a bad advance with the API's error envelope", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb })
      yield* Effect.gen(function* () {
        const token = yield* merchantToken("tienda")
        for (const seconds of [0, -5, 1.5, 400 * day + 1, "ten"]) {
          const r = yield* postJson("/sandbox/clock/advance", { seconds }, token)
          expect(r.status).toBe(400)
          expect(r.body).toEqual({
            message: "request.invalid",
            error: true,
            code: 400,
            data: expect.objectContaining({ field: "seconds" }),
            request_id: r.headers["request-id"]
          })
        }
        const missing = yield* postJson("/sandbox/clock/advance", {}, token)
        expect(missing.status).toBe(400)
        expect(missing.body).toMatchObject({ message: "request.invalid", data: { field: "seconds" } })
        const ahead = new Date(Date.now() + 60_000).toISOString()
        for (const body of [{ to: "tomorrow" }, { to: 5 }, { seconds: 60, to: ahead }]) {
          const r = yield* postJson("/sandbox/clock/advance", body, token)
          expect(r.status).toBe(400)
          expect(r.body).toMatchObject({ message: "request.invalid", error: true, data: { field: "to" } })
        }
        expect(offsetOf(yield* get("/sandbox/clock", token))).toBe(0)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  const twoInstances = (databaseUrl: Effect.Effect<string, never, Scope.Scope>) =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* databaseUrl, COBRO_JOB_INTERVAL: "1 hour" })
      const a = yield* Layer.build(serverLayer(config))
      const b = yield* Layer.build(serverLayer(config))
      const token = yield* Effect.provide(merchantToken("shared"), a)
      const payment = yield* Effect.provide(createPayment("shared", "on-b"), b)

      const advanced = yield* Effect.provide(
        postJson("/sandbox/clock/advance", { seconds: 7 * day }, token),
        a
      )
      expect(advanced.status).toBe(200)
      // A ran the due work over the shared database: B sees the payment expired at once.
      expect(yield* Effect.provide(statusOf(payment.id), b)).toBe("EXPIRED")
      // B picks the new offset up within its refresh interval.
      const seen = yield* Effect.provide(get("/sandbox/clock", token), b).pipe(
        Effect.map((r) => (r.body["data"] as { offset_seconds: number }).offset_seconds),
        Effect.filterOrFail((offset) => offset === 7 * day),
        Effect.retry(Schedule.spaced("100 millis")),
        Effect.timeout("5 seconds")
      )
      expect(seen).toBe(7 * day)
    })

  it.scopedLive("two instances on one SQLite file share the clock and the work", () => twoInstances(tempDb))

  it.scopedLive.skipIf(!pg)("two instances on one Postgres database share the clock and the work", () =>
    twoInstances(freshPgUrl)
  )

  it.scopedLive("production mode has no sandbox routes and no faucet", () =>
    Effect.gen(function* () {
      const config = yield* configOf({
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: "ab".repeat(32)
      })
      yield* Effect.gen(function* () {
        const { client_id, client_secret } = yield* merchant("prod")
        const token = (yield* postJson("/users/prod/tokens", { client_id, client_secret })).body["data"] as {
          token: string
        }
        // No test clocks: the routes answer 404 (401 first without a token, as every merchant route).
        expect((yield* get("/sandbox/clock")).status).toBe(401)
        const clock = yield* get("/sandbox/clock", token.token)
        expect(clock.status).toBe(404)
        expect(clock.body).toMatchObject({ message: "route.not.found", error: true, code: 404 })
        const advance = yield* postJson("/sandbox/clock/advance", { seconds: 60 }, token.token)
        expect(advance.status).toBe(404)
        const payment = yield* createPayment("prod", "p-1")
        const cvu = (yield* get(`/payments/${payment.id}/public`)).body["data"] as {
          quotes: ReadonlyArray<{ address: string }>
        }
        const faucet = yield* postJson(`/cvu/${cvu.quotes[0]!.address}/faucet`, { amount: 100 }, token.token)
        expect(faucet.status).toBe(404)
        expect(yield* statusOf(payment.id)).toBe("PENDING")
        const openapi = yield* get("/openapi.json")
        expect(openapi.status).toBe(200)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})

/** A webhook receiver on a random loopback port; what it received. */
const receiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{
        url: string
        received: Array<{ body: string; signature: string | undefined; timestamp: string | undefined }>
        server: http.Server
      }>((resolve) => {
        const received: Array<{
          body: string
          signature: string | undefined
          timestamp: string | undefined
        }> = []
        const server = http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk: Buffer) => (body += chunk.toString()))
          req.on("end", () => {
            const signature = req.headers["x-service-signature"]
            const timestamp = req.headers["webhook-timestamp"]
            received.push({
              body,
              signature: Array.isArray(signature) ? signature[0] : signature,
              timestamp: Array.isArray(timestamp) ? timestamp[0] : timestamp
            })
            res.writeHead(200).end()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ url: `http://127.0.0.1:${port}/hook`, received, server })
        })
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

describe("webhooks in the server", () => {
  it.scopedLive(
    "the advance delivers the events it caused before answering (loopback allowed in sandbox)",
    () =>
      Effect.gen(function* () {
        const hook = yield* receiver
        const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
        yield* Effect.gen(function* () {
          const token = yield* merchantToken("hooked")
          const created = yield* postJson("/payments/", {
            user_id: "hooked",
            external_id: "with-hook",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            webhook_url: hook.url
          })
          expect(created.status).toBe(200)
          expect(hook.received).toHaveLength(0)
          const advanced = yield* postJson("/sandbox/clock/advance", { seconds: 6 * day }, token)
          expect(advanced.status).toBe(200)
          expect(hook.received).toHaveLength(1)
          expect(JSON.parse(hook.received[0]!.body)).toEqual({
            message: "Payment updated",
            paymentId: "VAR-hooked-with-hook",
            externalId: "with-hook"
          })
          expect(hook.received[0]!.signature).toMatch(/^sha256=[0-9a-f]{64}$/)
          // Signed at real time, not the sandbox's six days ahead: receivers that check the
          // timestamp against their own clock (Standard Webhooks) still accept it.
          expect(Math.abs(Number(hook.received[0]!.timestamp) - Date.now() / 1000)).toBeLessThan(60)
        }).pipe(Effect.provide(serverLayer(config)))
      })
  )

  it.scopedLive(
    "production refuses, when registered, webhook URLs it never delivers to; a delivery left from sandbox to one is dead at once",
    () =>
      Effect.gen(function* () {
        const hook = yield* receiver
        const database = yield* tempDb
        const secretKey = "cd".repeat(32)
        // In sandbox (services only: no worker runs), a partner with a loopback receiver onboards
        // an account: its activation is a pending delivery to loopback.
        const sandbox = yield* configOf({ COBRO_DATABASE_URL: database, COBRO_SECRET_KEY: secretKey })
        yield* Effect.gen(function* () {
          const partner = yield* Admin.createPartner({
            name: "Loop",
            redirect_url: "https://loop.example.com/back",
            webhook_url: hook.url
          })
          const user = yield* Admin.createUser({
            name: "Loopy",
            email: "loopy@example.com",
            cuit: "30712345671",
            partner_id: partner.partner_id
          })
          yield* Admin.setStatus(user.user_id, "ACTIVE")
          expect(yield* Admin.listWebhooks({})).toMatchObject([{ status: "pending", attempts: 0 }])
          // A database records its mode and refuses another one (issue 45); what a database
          // wrongly started in sandbox before that may hold is made by recording production here.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE cobro_database SET mode = 'production'`
        }).pipe(Effect.provide(Services.layer(sandbox)))

        const config = yield* configOf({
          COBRO_DATABASE_URL: database,
          COBRO_MODE: "production",
          COBRO_SECRET_KEY: secretKey
        })
        yield* Effect.gen(function* () {
          // Registering such a URL is refused now, over the API and through the CLI's Admin.
          const again = yield* Effect.flip(
            Admin.createPartner({
              name: "Loop 2",
              redirect_url: "https://loop.example.com/back",
              webhook_url: hook.url
            })
          )
          expect(again).toMatchObject({ _tag: "InvalidInput", key: "request.invalid", field: "webhook_url" })
          yield* merchant("prod")
          const withHook = (external_id: string, webhook_url: string) =>
            postJson("/payments/", {
              user_id: "prod",
              external_id,
              price: { amount: 1500, currency: "ARS" },
              payment_options: ["transfer"],
              webhook_url
            })
          const issue = [
            "http://127.0.0.1:9/x",
            "http://169.254.169.254/latest",
            "http://[::ffff:127.0.0.1]/x",
            "http://10.0.0.1/x",
            "http://localhost/x",
            "http://2130706433/x",
            "http://0x7f.1/x"
          ]
          for (const [i, url] of [...issue, ...issue.map((u) => u.replace("http:", "https:"))].entries()) {
            const r = yield* withHook(`o-${i}`, url)
            expect({ url, status: r.status, body: r.body }).toEqual({
              url,
              status: 400,
              body: {
                message: "request.invalid",
                error: true,
                code: 400,
                data: {
                  field: "webhook_url",
                  detail: expect.stringContaining("is not accepted in production mode")
                },
                request_id: r.headers["request-id"]
              }
            })
          }
          expect((yield* withHook("public", "https://shop.example.com/hooks")).status).toBe(200)

          // The delivery written in sandbox: one attempt (the background worker's or this one), dead.
          const webhooks = yield* Webhooks.Webhooks
          const delivery = yield* webhooks.deliverDue().pipe(
            Effect.zipRight(Admin.listWebhooks({ status: "dead" })),
            Effect.map((all) => all[0]),
            Effect.filterOrFail((d) => d !== undefined),
            Effect.retry(Schedule.spaced("100 millis")),
            Effect.timeout("10 seconds")
          )
          expect(delivery).toMatchObject({
            type: "account.activated",
            status: "dead",
            attempts: 1,
            next_attempt_at: null,
            last_error: "refused: production webhooks must use https"
          })
          expect(hook.received).toHaveLength(0)
        }).pipe(Effect.provide(serverLayer(config)))
      })
  )
})

describe("demo merchant", () => {
  it.scopedLive("created once with working credentials, then reported as existing", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb })
      yield* Effect.gen(function* () {
        const first = yield* Admin.ensureDemo()
        expect(first._tag).toBe("Created")
        if (first._tag !== "Created") return
        const token = yield* postJson("/users/demo/tokens", {
          client_id: first.client_id,
          client_secret: first.client_secret
        })
        expect(token.status).toBe(200)
        expect((token.body["data"] as { token: string }).token).toMatch(/^USR-/)
        const payment = yield* createPayment("demo", "demo-1")
        expect(payment.id).toBe("VAR-demo-demo-1")

        const second = yield* Admin.ensureDemo()
        expect(second).toEqual({ _tag: "Existing", user_id: "demo", client_id: first.client_id })
        const lines = Server.banner(config, { _tag: "TcpAddress", hostname: "0.0.0.0", port: 3000 }, second)
        expect(lines.join("\n")).toContain(`Demo merchant: demo (exists; client_id ${first.client_id}`)
        expect(lines.join("\n")).not.toContain(first.client_secret)
        expect(lines).toContain(
          "  Docs:       http://localhost:3000/docs  (OpenAPI: http://localhost:3000/openapi.json)"
        )
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})

describe("background work", () => {
  it.live("a run in progress finishes on interruption, within the grace period", () =>
    Effect.gen(function* () {
      const done = yield* Ref.make(false)
      const fiber = yield* Effect.fork(
        Background.finishWithin("5 seconds")(Effect.zipRight(Effect.sleep("300 millis"), Ref.set(done, true)))
      )
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(done)).toBe(true)
    })
  )

  it.live("a run longer than the grace period is interrupted after it", () =>
    Effect.gen(function* () {
      const done = yield* Ref.make(false)
      const fiber = yield* Effect.fork(
        Background.finishWithin("200 millis")(Effect.zipRight(Effect.sleep("1 minute"), Ref.set(done, true)))
      )
      yield* Effect.sleep("50 millis")
      const start = Date.now()
      yield* Fiber.interrupt(fiber)
      expect(Date.now() - start).toBeLessThan(5_000)
      expect(yield* Ref.get(done)).toBe(false)
    })
  )

  it("summarises reports by their non-zero counts", () => {
    expect(Background.summary({ expired: 2, released: 0, payouts: { sent: 1, failed: 0 } })).toBe(
      "expired=2 payouts.sent=1"
    )
    expect(Background.summary({ a: 0, b: { c: 0 } })).toBe("nothing")
  })
})

describe("client address behind a proxy", () => {
  it("takes the last X-Forwarded-For entry", () => {
    const request = (headers: Record<string, string>) =>
      HttpServerRequest.fromWeb(new Request("http://localhost/x", { headers }))
    expect(Server.forwardedAddress(request({ "x-forwarded-for": "1.2.3.4, 10.0.0.7" }))).toBe("10.0.0.7")
    expect(Server.forwardedAddress(request({ "x-forwarded-for": "203.0.113.9" }))).toBe("203.0.113.9")
    expect(Server.forwardedAddress(request({}))).toBe("unknown")
  })
})

describe("rate limits", () => {
  /** Eleven token requests for one merchant with a wrong secret (10 are allowed a minute): the statuses. */
  const elevenTokenRequests = (env: Record<string, string>) =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, ...env })
      return yield* Effect.gen(function* () {
        yield* merchant("tienda")
        const statuses: Array<number> = []
        for (let i = 0; i < 11; i++) {
          const r = yield* postJson("/users/tienda/tokens", { client_id: "nobody", client_secret: "wrong" })
          statuses.push(r.status)
        }
        return statuses
      }).pipe(Effect.provide(serverLayer(config)))
    })

  it.scopedLive("are on by default: the eleventh wrong secret of a minute is refused", () =>
    Effect.map(elevenTokenRequests({}), (statuses) => {
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401))
      expect(statuses[10]).toBe(429)
    })
  )

  it.scopedLive("COBRO_RATE_LIMITS=off leaves limiting to the proxy in front", () =>
    Effect.map(elevenTokenRequests({ COBRO_RATE_LIMITS: "off" }), (statuses) =>
      expect(statuses).toEqual(Array(11).fill(401))
    )
  )
})
