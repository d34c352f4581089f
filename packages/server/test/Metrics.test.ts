/**
 * `GET /metrics` (issue 22 item 2) scraped over real HTTP before and after real traffic (payments,
 * a faucet transfer, a delivered webhook and a dead one, the clock advanced past expiry): the
 * counters moved by exactly what happened, the HTTP series are labelled by route template, and
 * the database gauges read the backlog, on SQLite and on Postgres. And the optional bearer token.
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Admin } from "../src/index.js"
import { configOf, get, postJson, request, serverLayer, tempDb } from "./support.js"
import { HttpClientRequest } from "@effect/platform"

const day = 86_400

const pgUp = await Effect.runPromise(pgAvailable)

/** The series of a Prometheus text exposition: `name{labels}` → value. */
const parse = (text: string): Map<string, number> => {
  const series = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const cut = line.lastIndexOf(" ")
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)))
  }
  return series
}

const scrape = Effect.gen(function* () {
  const response = yield* request(HttpClientRequest.get("/metrics"))
  expect(response.status).toBe(200)
  expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/)
  return parse(String(response.body))
})

/** How much each series moved between two scrapes (absent before: from 0). */
const delta = (before: Map<string, number>, after: Map<string, number>) => (key: string) =>
  (after.get(key) ?? 0) - (before.get(key) ?? 0)

/** A webhook receiver on a random loopback port that answers 200; the bodies it received. */
const receiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; received: Array<string>; server: http.Server }>((resolve) => {
        const received: Array<string> = []
        const server = http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk: Buffer) => (body += chunk.toString()))
          req.on("end", () => {
            received.push(body)
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

/** A loopback URL where nothing listens: a port taken and given back. */
const refusedUrl = Effect.promise(
  () =>
    new Promise<string>((resolve) => {
      const server = http.createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(`http://127.0.0.1:${port}/hook`))
      })
    })
)

const traffic = (database: string) =>
  Effect.gen(function* () {
    const hook = yield* receiver
    const refused = yield* refusedUrl
    const config = yield* configOf({ COBRO_DATABASE_URL: database, COBRO_JOB_INTERVAL: "1 hour" })
    yield* Effect.gen(function* () {
      const user = yield* Admin.createUser({
        user_id: "metrics",
        name: "Tienda metrics",
        email: "metrics@example.com",
        cuit: "30712345671",
        status: "ACTIVE"
      })
      const token = (yield* postJson(`/users/${user.user_id}/tokens`, {
        client_id: user.client_id,
        client_secret: user.client_secret
      })).body["data"] as { token: string }

      const before = yield* scrape
      const pay = (external_id: string, webhook_url: string) =>
        Effect.map(
          postJson("/payments/", {
            user_id: "metrics",
            external_id,
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            webhook_url
          }),
          (r) => {
            expect(r.status).toBe(200)
            return r.body["data"] as { id: string; quotes: Array<{ cvu: string }> }
          }
        )
      const paid = yield* pay("paid", hook.url)
      yield* pay("unpaid", refused)
      // Repeated: answered with the existing payment, not created again.
      yield* pay("paid", hook.url)
      expect((yield* get(`/payments/${paid.id}`, token.token)).status).toBe(200)
      expect((yield* get(`/payments/VAR-metrics-nothing`, token.token)).status).toBe(404)
      const sent = yield* postJson(`/cvu/${paid.quotes[0]!.cvu}/faucet`, { amount: 1500 }, token.token)
      expect(sent.status).toBe(200)
      // Past expiry: `paid` closes SUCCESS, `unpaid` EXPIRED (its event goes to the refused URL);
      // then a day at a time until the refused delivery has used every retry.
      for (let i = 0; i < 10; i++) {
        expect((yield* postJson("/sandbox/clock/advance", { seconds: i === 0 ? 6 * day : day })).status).toBe(
          200
        )
      }
      const after = yield* scrape
      const moved = delta(before, after)

      expect(moved("cobro_payments_created_total")).toBe(2)
      expect(moved('cobro_transfers_ingested_total{outcome="credited"}')).toBe(1)
      expect(moved('cobro_transfers_ingested_total{outcome="returned"}')).toBe(0)
      expect(moved('cobro_payments_settled_total{state="SUCCESS"}')).toBe(1)
      expect(moved('cobro_payments_settled_total{state="EXPIRED"}')).toBe(1)
      expect(moved('cobro_jobs_due_total{job="payment_expiry"}')).toBe(2)
      expect(moved('cobro_jobs_run_total{job="payment_expiry"}')).toBe(2)
      expect(moved('cobro_job_lag_seconds_count{job="payment_expiry"}')).toBe(2)
      // The credit's event reached the receiver; the expiry's was refused until it died: the
      // first try and 7 retries, the last one dead.
      expect(hook.received.length).toBeGreaterThanOrEqual(1)
      expect(moved('cobro_webhook_deliveries_total{outcome="delivered"}')).toBe(hook.received.length)
      expect(moved('cobro_webhook_deliveries_total{outcome="retrying"}')).toBe(7)
      expect(moved('cobro_webhook_deliveries_total{outcome="dead"}')).toBe(1)
      // The database's state, read at the scrape (a fresh database: only these two payments).
      expect(after.get("cobro_webhook_deliveries_dead")).toBe(1)
      expect(after.get("cobro_webhook_deliveries_pending")).toBe(0)
      expect(after.get("cobro_webhook_oldest_pending_age_seconds")).toBe(0)
      expect(after.get('cobro_outgoing_transfers_in_flight{kind="payout_schedule"}')).toBe(0)

      // Requests by route template, never by the path a client sent.
      const requests = (route: string, method: string, status: number) =>
        moved(`cobro_http_requests_total{route="${route}",method="${method}",status="${status}"}`)
      expect(requests("/payments/", "POST", 200)).toBe(3)
      expect(requests("/payments/:paymentId", "GET", 200)).toBe(1)
      expect(requests("/payments/:paymentId", "GET", 404)).toBe(1)
      expect(requests("/cvu/:cvu/faucet", "POST", 200)).toBe(1)
      expect(requests("/sandbox/clock/advance", "POST", 200)).toBe(10)
      expect(moved('cobro_http_request_duration_seconds_count{route="/payments/",method="POST"}')).toBe(3)
      const text = [...after.keys()].join("\n")
      expect(text).not.toContain(paid.id)
      expect(text).not.toContain(paid.quotes[0]!.cvu)
      // The scrape before this one is counted too, under its own route.
      expect(requests("/metrics", "GET", 200)).toBe(1)
    }).pipe(Effect.provide(serverLayer(config)))
  })

describe("GET /metrics", () => {
  it.scopedLive("counts real traffic by what happened, on SQLite", () => Effect.flatMap(tempDb, traffic), {
    timeout: 60_000
  })

  it.scopedLive.skipIf(!pgUp)(
    "counts real traffic by what happened, on Postgres",
    () => Effect.flatMap(freshPgUrl, traffic),
    { timeout: 60_000 }
  )

  it.scopedLive("with COBRO_METRICS_TOKEN, a scrape needs the bearer token", () =>
    Effect.gen(function* () {
      const config = yield* configOf({
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_METRICS_TOKEN: "s3cr3t-metrics-token"
      })
      yield* Effect.gen(function* () {
        const none = yield* get("/metrics")
        expect(none.status).toBe(401)
        expect(none.body).toMatchObject({ message: "auth.token.missing", error: true, code: 401 })
        const wrong = yield* get("/metrics", "not-the-token")
        expect(wrong.status).toBe(401)
        expect(wrong.body).toMatchObject({ message: "auth.token.invalid", code: 401 })
        const right = yield* get("/metrics", "s3cr3t-metrics-token")
        expect(right.status).toBe(200)
        expect(String(right.body)).toContain("# TYPE cobro_http_requests_total counter")
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )

  it.effect("COBRO_METRICS_TOKEN with a space is refused, naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(configOf({ COBRO_METRICS_TOKEN: "two words" }))
      expect(error.problems).toEqual([
        "COBRO_METRICS_TOKEN must be printable ASCII without spaces (a bearer token)"
      ])
    })
  )
})
