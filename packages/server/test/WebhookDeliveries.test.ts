/**
 * A merchant's webhook deliveries over real HTTP on the whole server (SQLite): listing with each
 * attempt, filters and pages, a replay of a failed delivery, another merchant's never seen, the
 * replay rate limit; and `cobro listen` forwarding a delivery, signed, to a local receiver.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClientRequest, HttpServer } from "@effect/platform"
import { Receiver } from "@cobro/webhooks"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { NodeContext } from "@effect/platform-node"
import { Console, Duration, Effect, Fiber, Schedule } from "effect"
import { Admin, Cli } from "../src/index.js"
import { cli, configOf, failureOf, get, postJson, provider, request, serverLayer, tempDb } from "./support.js"

/** A receiver on a random loopback port answering `status()`; what it received, with headers. */
const receiver = (status: () => number) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{
          url: string
          received: Array<{ body: string; headers: http.IncomingHttpHeaders }>
          server: http.Server
        }>((resolve) => {
          const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = []
          const server = http.createServer((req, res) => {
            let body = ""
            req.on("data", (chunk: Buffer) => (body += chunk.toString()))
            req.on("end", () => {
              received.push({ body, headers: req.headers })
              res.writeHead(status()).end()
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

/** Retries `check` (which fails while its condition does not hold) for up to 20 s. */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => check).pipe(
    Effect.retry(Schedule.spaced(Duration.millis(200))),
    Effect.timeout(Duration.seconds(20)),
    Effect.orDie
  )

const merchant = (user_id: string) =>
  Admin.createUser({
    user_id,
    name: `Tienda ${user_id}`,
    email: `${user_id}@example.com`,
    cuit: "30712345671",
    status: "ACTIVE"
  })

/** A user token over HTTP. */
const tokenOf = (created: { user_id: string; client_id: string; client_secret: string }) =>
  Effect.map(
    postJson(`/users/${created.user_id}/tokens`, {
      client_id: created.client_id,
      client_secret: created.client_secret
    }),
    (r) => (r.body["data"] as { token: string }).token
  )

/** A payment with `webhook_url`, paid in full through the faucet: one `payment.updated` delivery. */
const paidPayment = (user_id: string, token: string, external_id: string, webhook_url: string) =>
  Effect.gen(function* () {
    const created = yield* postJson("/payments/", {
      user_id,
      external_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      webhook_url
    })
    expect(created.status).toBe(200)
    const cvu = (created.body["data"] as { quotes: Array<{ cvu: string }> }).quotes[0]!.cvu
    const paid = yield* postJson(`/cvu/${cvu}/faucet`, { amount: 1500 }, token)
    expect(paid.status).toBe(200)
    return (created.body["data"] as { id: string }).id
  })

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const deliveriesOf = (token: string, query = "") =>
  Effect.map(get(`/webhooks/deliveries${query}`, token), (r) => {
    expect(r.status).toBe(200)
    return r.body["data"] as Json
  })

describe("a merchant's webhook deliveries", () => {
  it.scopedLive("list each attempt, replay a failed one, never another merchant's", () =>
    Effect.gen(function* () {
      let answer = 500
      const hook = yield* receiver(() => answer)
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const a = yield* merchant("tienda_a")
        const b = yield* merchant("tienda_b")
        const tokenA = yield* tokenOf(a)
        const tokenB = yield* tokenOf(b)
        yield* paidPayment("tienda_a", tokenA, "order-1", hook.url)
        yield* paidPayment("tienda_b", tokenB, "order-9", hook.url)

        // The worker's first attempt fails with the receiver's 500.
        const failed = yield* eventually(
          Effect.flatMap(deliveriesOf(tokenA), (data) =>
            data.deliveries.length === 1 && data.deliveries[0].attempts.length >= 1
              ? Effect.succeed(data.deliveries[0])
              : Effect.fail("not attempted yet")
          )
        )
        expect(failed).toMatchObject({
          type: "payment.updated",
          status: "pending",
          webhook_url: hook.url,
          payload: { message: "Payment updated", paymentId: "VAR-tienda_a-order-1", externalId: "order-1" },
          replays: 0
        })
        expect(failed.partner_id).toBeUndefined()
        expect(failed.attempts[0]).toMatchObject({
          number: 1,
          status_code: 500,
          error: "HTTP 500",
          outcome: "failed"
        })
        expect(failed.attempts[0].latency_ms).toBeGreaterThanOrEqual(0)
        expect(typeof failed.next_attempt_at).toBe("string")

        // B sees only its own; A's delivery is not found for B, read or replayed.
        const own = yield* deliveriesOf(tokenB)
        expect(own.deliveries.map((d: Json) => d.payload.paymentId)).toEqual(["VAR-tienda_b-order-9"])
        expect((yield* get(`/webhooks/deliveries/${failed.event_id}`, tokenB)).status).toBe(404)
        const foreign = yield* postJson(`/webhooks/deliveries/${failed.event_id}/replay`, {}, tokenB)
        expect(foreign.status).toBe(404)
        expect(foreign.body).toMatchObject({ message: "webhook_delivery.not.found", error: true, code: 404 })
        // Without a token: 401.
        expect((yield* get("/webhooks/deliveries")).status).toBe(401)

        // A fixes its receiver and replays: the delivery is pending again, then delivered.
        answer = 200
        const replay = HttpClientRequest.post(`/webhooks/deliveries/${failed.event_id}/replay`).pipe(
          HttpClientRequest.bearerToken(tokenA),
          HttpClientRequest.setHeader("idempotency-key", "replay-1"),
          HttpClientRequest.bodyUnsafeJson({})
        )
        const replayed = yield* request(replay)
        expect(replayed.status).toBe(200)
        expect(replayed.body).toMatchObject({
          message: "webhook.delivery.replayed",
          data: { event_id: failed.event_id, status: "pending", replays: 1 }
        })
        const delivered = yield* eventually(
          Effect.flatMap(get(`/webhooks/deliveries/${failed.event_id}`, tokenA), (r) =>
            (r.body["data"] as Json).status === "delivered"
              ? Effect.succeed(r.body["data"] as Json)
              : Effect.fail("not delivered yet")
          )
        )
        // The same Idempotency-Key again: the first answer, not a second replay.
        const again = yield* request(replay)
        expect(again.body).toEqual(replayed.body)
        expect((yield* get(`/webhooks/deliveries/${failed.event_id}`, tokenA)).body).toMatchObject({
          data: { replays: 1, status: "delivered" }
        })
        const last = delivered.attempts[delivered.attempts.length - 1]
        expect(last).toMatchObject({ status_code: 200, outcome: "delivered" })
        expect(last.error).toBeUndefined()
        expect(delivered.next_attempt_at).toBeUndefined()
        expect(typeof delivered.finished_at).toBe("string")

        // Filters and keyset pages.
        yield* paidPayment("tienda_a", tokenA, "order-2", hook.url)
        expect((yield* deliveriesOf(tokenA, "?status=delivered")).deliveries).toHaveLength(1)
        expect((yield* deliveriesOf(tokenA, "?type=account.activated")).deliveries).toHaveLength(0)
        const first = yield* deliveriesOf(tokenA, "?limit=1")
        expect(first.deliveries).toHaveLength(1)
        expect(first.next_after).toBe(first.deliveries[0].event_id)
        const second = yield* deliveriesOf(tokenA, `?limit=1&after=${first.next_after}`)
        expect(second.deliveries[0].payload.externalId).toBe("order-2")
        expect(second.next_after).toBeUndefined()
        const bad = yield* get("/webhooks/deliveries?limit=500", tokenA)
        expect(bad.status).toBe(400)
        expect(JSON.stringify(bad.body)).toContain("limit")
        expect((yield* get("/webhooks/deliveries?status=lost", tokenA)).status).toBe(400)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.scopedLive("replays are rate-limited per account", () =>
    Effect.gen(function* () {
      const hook = yield* receiver(() => 200)
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const a = yield* merchant("tienda_r")
        const token = yield* tokenOf(a)
        yield* paidPayment("tienda_r", token, "order-1", hook.url)
        const { deliveries } = yield* deliveriesOf(token)
        const statuses: Array<number> = []
        for (let i = 0; i < 31; i++) {
          const r = yield* postJson(`/webhooks/deliveries/${deliveries[0].event_id}/replay`, {}, token)
          statuses.push(r.status)
          if (r.status === 429) {
            expect(r.body).toMatchObject({ message: "rate.limit.exceeded", code: 429 })
            expect(r.headers["retry-after"]).toMatch(/^\d+$/)
          }
        }
        expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true)
        expect(statuses[30]).toBe(429)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})

describe("cobro listen", () => {
  it.scopedLive("forwards a new delivery, signed with the session's secret, to a local receiver", () =>
    Effect.gen(function* () {
      const hook = yield* receiver(() => 200)
      const local = yield* receiver(() => 204)
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const a = yield* merchant("tienda_l")
        const token = yield* tokenOf(a)
        // An event from before the start is not forwarded.
        yield* paidPayment("tienda_l", token, "before", hook.url)
        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port
        // The command's output, readable while it runs.
        const printed: Array<string> = []
        const base = yield* Console.consoleWith(Effect.succeed)
        const capture: Console.Console = {
          ...base,
          log: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void printed.push(parts.join(" "))),
          error: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void printed.push(parts.join(" ")))
        }
        const listening = yield* Effect.fork(
          Cli.run([
            "node",
            "cobro",
            "listen",
            "--forward-to",
            local.url,
            "--api-url",
            `http://127.0.0.1:${port}`,
            "--interval",
            "1"
          ]).pipe(
            Effect.provide(NodeContext.layer),
            Effect.withConfigProvider(
              provider({
                COBRO_USER_ID: a.user_id,
                COBRO_CLIENT_ID: a.client_id,
                COBRO_CLIENT_SECRET: a.client_secret
              })
            ),
            Effect.withConsole(capture)
          )
        )
        // It prints the session's signing secret, and never the client secret.
        const secret = yield* eventually(
          Effect.suspend(() => {
            const line = printed.find((l) => l.includes("signing secret for this session is"))
            const found = line === undefined ? undefined : /(whsec_\S+)/.exec(line)?.[1]
            return found === undefined ? Effect.fail("not ready yet") : Effect.succeed(found)
          })
        )
        yield* Effect.sleep(Duration.seconds(2))
        yield* paidPayment("tienda_l", token, "after", hook.url)
        const forwarded = yield* eventually(
          Effect.suspend(() =>
            local.received.length > 0
              ? Effect.succeed(local.received[0]!)
              : Effect.fail("nothing forwarded yet")
          )
        )
        // The command prints the receiver's answer once it has it (after the receiver got the body).
        yield* eventually(
          Effect.suspend(() =>
            printed.some((l) => l.startsWith("--> payment.updated"))
              ? Effect.void
              : Effect.fail("not printed yet")
          )
        )
        yield* Fiber.interrupt(listening)
        expect(local.received).toHaveLength(1)
        expect(printed.join("\n")).not.toContain(a.client_secret)
        expect(printed.join("\n")).toMatch(
          /--> payment\.updated \[evt_\S+\] http:\/\/127\.0\.0\.1:\d+\/hook 204/
        )
        expect(JSON.parse(forwarded.body)).toEqual({
          message: "Payment updated",
          paymentId: "VAR-tienda_l-after",
          externalId: "after"
        })
        // The receiver verifies it as it verifies cobro's own deliveries, with the session's secret.
        const verified = yield* Effect.either(
          Receiver.verify({ secret, headers: forwarded.headers, body: forwarded.body })
        )
        expect(verified._tag).toBe("Right")
        const wrong = yield* Effect.either(
          Receiver.verify({ secret: a.client_secret, headers: forwarded.headers, body: forwarded.body })
        )
        expect(wrong._tag).toBe("Left")
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.scopedLive("refuses to start with wrong credentials, saying why", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const a = yield* merchant("tienda_w")
        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port
        const result = yield* cli(
          ["listen", "--forward-to", "http://127.0.0.1:9/hook", "--api-url", `http://127.0.0.1:${port}`],
          { COBRO_USER_ID: a.user_id, COBRO_CLIENT_ID: a.client_id, COBRO_CLIENT_SECRET: "wrong" }
        )
        expect(failureOf(result)).toContain("auth.credentials.invalid")
        expect(result.stdout).not.toContain("Ready!")
        // A server without credentials: the command names what it needs.
        const bare = yield* cli(["listen", "--api-url", `http://127.0.0.1:${port}`], {})
        expect(failureOf(bare)).toContain("needs the merchant's --user-id (or COBRO_USER_ID)")
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})
