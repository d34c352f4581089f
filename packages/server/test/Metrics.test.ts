/**
 * `GET /metrics` (issue 22 item 2) scraped over real HTTP before and after real traffic (payments,
 * a faucet transfer, a delivered webhook and a dead one, the clock advanced past expiry): the
 * counters moved by exactly what happened, the HTTP series are labelled by route template, and
 * the database gauges read the backlog, on SQLite and on Postgres. And the optional bearer token.
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Auth, BankAccount, SecondFactor } from "@cobro/core"
import { SqlMonitoring } from "@cobro/sql"
import { PgStorage } from "@cobro/sql-pg"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Redacted, Schedule, Schema } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Admin } from "../src/index.js"
import { SandboxBank } from "@cobro/bank-sandbox"
import {
  configOf,
  get,
  metricSeries,
  postJson,
  request,
  serverLayer,
  tempDb,
  webhookReceiver as receiver
} from "./support.js"
import { HttpClientRequest } from "@effect/platform"

const day = 86_400

const pgUp = await Effect.runPromise(pgAvailable)

const scrape = Effect.gen(function* () {
  const response = yield* request(HttpClientRequest.get("/metrics"))
  expect(response.status).toBe(200)
  expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/)
  return metricSeries(String(response.body))
})

/** How much each series moved between two scrapes (absent before: from 0). */
const delta = (before: Map<string, number>, after: Map<string, number>) => (key: string) =>
  (after.get(key) ?? 0) - (before.get(key) ?? 0)

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
        const seconds = i === 0 ? 6 * day : day
        expect((yield* postJson("/sandbox/clock/advance", { seconds }, token.token)).status).toBe(200)
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
      for (const kind of ["payout_schedule", "split_payout"])
        for (const state of ["SENDING", "PENDING"])
          expect(after.get(`cobro_outgoing_transfers_in_flight{kind="${kind}",state="${state}"}`)).toBe(0)
      expect(after.get("cobro_outgoing_transfers_oldest_in_flight_age_seconds")).toBe(0)
      if (database.startsWith("postgres")) {
        // This process's pool (the default maximum), idle between requests: nothing waits.
        const open = after.get("cobro_db_pool_connections_open")!
        const inUse = after.get("cobro_db_pool_connections_in_use")!
        expect(after.get("cobro_db_pool_connections_max")).toBe(10)
        expect(open).toBeGreaterThanOrEqual(1)
        expect(open).toBeLessThanOrEqual(10)
        expect(inUse).toBeGreaterThanOrEqual(0)
        expect(after.get("cobro_db_pool_connections_idle")! + inUse).toBe(open)
        expect(after.get("cobro_db_pool_waiting")).toBe(0)
      }

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

/**
 * A payout schedule and a split payouts instruction made due, then the sandbox clock moved two
 * days at once: each job counts its item due and run, and its lag is how late the run came after
 * the item became due (the schedule's next run date, the end of the split's 12-hour hold).
 */
const jobLag = (database: string) =>
  Effect.gen(function* () {
    const config = yield* configOf({ COBRO_DATABASE_URL: database, COBRO_JOB_INTERVAL: "1 hour" })
    yield* Effect.gen(function* () {
      const cuit = "30712345671"
      const user = yield* Admin.createUser({
        user_id: "lag",
        name: "Tienda lag",
        email: "lag@example.com",
        cuit,
        status: "ACTIVE"
      })
      const token = (
        (yield* postJson(`/users/${user.user_id}/tokens`, {
          client_id: user.client_id,
          client_secret: user.client_secret
        })).body["data"] as { token: string }
      ).token
      const auth = yield* Auth.Auth
      const partner = yield* auth.registerPartner(
        Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
          name: "Lag Partner",
          redirect_url: "https://partner.example.com/cb"
        })
      )
      const { code } = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
      const partnerToken = (yield* auth.exchangeCode(
        new Auth.CodeExchangeRequest({
          code,
          client_id: partner.client_id,
          client_secret: partner.client_secret
        })
      )).token
      const bank = yield* SandboxBank.SandboxBank
      const own = BankAccount.makeCbu("0170099", "0000000000901")
      const other = BankAccount.makeCbu("0170099", "0000000000902")
      yield* bank.registerHolder({ account: own, cuit: BankAccount.Cuit.make(cuit), name: "Tienda lag" })
      yield* bank.registerHolder({
        account: other,
        cuit: BankAccount.makeCuit("20", "40000902"),
        name: "Ana"
      })

      // A daily schedule: due at the next midnight in Buenos Aires, less than a day from now.
      const schedule = yield* postJson(
        "/transactions/schedules",
        { schedule_type: "payout", frequency: "daily", payload: { address: own } },
        partnerToken
      )
      expect(schedule.status).toBe(200)
      const nextRun = Date.parse((schedule.body["data"] as { next_run_date: string }).next_run_date)

      // A funded split with a verified payout account and an instruction: due after its hold.
      const split = (yield* postJson("/split/payments", { external_id: "lag" }, token)).body["data"] as {
        split_payment_id: string
        cvu: string
      }
      expect((yield* postJson(`/cvu/${split.cvu}/faucet`, { amount: 1000 }, token)).status).toBe(200)
      const created = (yield* postJson("/split/accounts", [{ address: other }], token)).body["data"] as {
        request_id: string
      }
      const verified = yield* postJson(
        "/split/accounts/verify",
        { request_id: created.request_id, code: SecondFactor.sandboxCode(created.request_id as never) },
        token
      )
      expect(verified.status).toBe(200)
      const account = (verified.body["data"] as { accounts: Array<{ account_id: string }> }).accounts[0]!
      const instruction = yield* postJson(
        `/split/payments/${split.split_payment_id}/payouts`,
        { payouts: [{ account_id: account.account_id, amount: 100 }] },
        token
      )
      expect(instruction.status).toBe(200)
      const holdUntil = Date.parse((instruction.body["data"] as { hold_until: string }).hold_until)

      const before = yield* scrape
      const advanced = yield* postJson("/sandbox/clock/advance", { seconds: 2 * day }, token)
      expect(advanced.status).toBe(200)
      const ranAt = Date.parse((advanced.body["data"] as { now: string }).now)
      const after = yield* scrape
      const moved = delta(before, after)

      for (const job of ["payout_schedule", "split_payout"]) {
        expect(moved(`cobro_jobs_due_total{job="${job}"}`)).toBe(1)
        expect(moved(`cobro_jobs_run_total{job="${job}"}`)).toBe(1)
        expect(moved(`cobro_job_lag_seconds_count{job="${job}"}`)).toBe(1)
      }
      // The lag is the engine's time from due to run (the clock also moves in real time a little).
      const lag = (job: string) => moved(`cobro_job_lag_seconds_sum{job="${job}"}`)
      expect(lag("payout_schedule")).toBeGreaterThan(day)
      expect(Math.abs(lag("payout_schedule") - (ranAt - nextRun) / 1000)).toBeLessThan(5)
      expect(Math.abs(lag("split_payout") - (ranAt - holdUntil) / 1000)).toBeLessThan(5)
      expect(lag("split_payout")).toBeGreaterThan(1.4 * day)
      // Two days late: past the histogram's last bound, in +Inf only.
      expect(moved('cobro_job_lag_seconds_bucket{job="split_payout",le="3600"}')).toBe(0)
      expect(moved('cobro_job_lag_seconds_bucket{job="split_payout",le="+Inf"}')).toBe(1)
    }).pipe(Effect.provide(serverLayer(config)))
  })

/** `read` again every few milliseconds until `done` holds (5 seconds at most); the last reading. */
const poll = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.filterOrFail(done),
    Effect.retry(Schedule.spaced(Duration.millis(5))),
    Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "not reached in 5 s" }),
    Effect.catchAll(() => read)
  )

describe("GET /metrics", () => {
  it.scopedLive("counts real traffic by what happened, on SQLite", () => Effect.flatMap(tempDb, traffic), {
    timeout: 60_000
  })

  it.scopedLive.skipIf(!pgUp)(
    "counts real traffic by what happened, on Postgres",
    () => Effect.flatMap(freshPgUrl, traffic),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "job lag of payout schedules and split payouts, on SQLite",
    () => Effect.flatMap(tempDb, jobLag),
    { timeout: 60_000 }
  )

  it.scopedLive.skipIf(!pgUp)(
    "job lag of payout schedules and split payouts, on Postgres",
    () => Effect.flatMap(freshPgUrl, jobLag),
    { timeout: 60_000 }
  )

  it.scopedLive.skipIf(!pgUp)(
    "the Postgres pool's counts: 20 queries on 2 connections wait, then none; the pool ends with its scope",
    () =>
      Effect.gen(function* () {
        const url = Redacted.make(yield* freshPgUrl)
        // The backends of pools (ours are named `@effect/sql-pg`) on this database, but the asker's.
        const backends = Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ n: number }>`SELECT COUNT(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = '@effect/sql-pg'
            AND pid <> pg_backend_pid()`
          return rows[0]!.n
        })
        yield* Effect.gen(function* () {
          const pool = yield* SqlMonitoring.ConnectionPool
          const sql = yield* SqlClient.SqlClient
          const idle = yield* pool.stats
          expect(idle).toEqual({ total: 1, idle: 1, waiting: 0, max: 2 })
          const queries = yield* Effect.fork(
            Effect.all(
              Array.from({ length: 20 }, () => sql`SELECT pg_sleep(0.3)`),
              { concurrency: "unbounded" }
            )
          )
          // Both connections held, the other 18 queued (polled: the first ones connect meanwhile).
          const busy = yield* poll(pool.stats, (s) => s.waiting === 18 && s.total - s.idle === 2)
          expect(busy).toEqual({ total: 2, idle: 0, waiting: 18, max: 2 })
          yield* queries.await
          expect(yield* pool.stats).toEqual({ total: 2, idle: 2, waiting: 0, max: 2 })
        }).pipe(Effect.provide(PgStorage.client({ url, maxConnections: 2 })))
        // The scope closed: the pool ended its connections (the server may take a moment to see it).
        const left = yield* poll(backends, (n) => n === 0).pipe(Effect.provide(PgStorage.client({ url })))
        expect(left).toBe(0)
      }),
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
