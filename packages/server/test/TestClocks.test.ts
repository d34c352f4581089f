/**
 * Test clocks per merchant over real HTTP on the whole server (SQLite and Postgres): two
 * merchants advance their clocks independently and only their own payments, payout schedules and
 * split holds follow; a partner token moves the clock of the merchant it acts for; the routes
 * need a token; an advance is bounded and never goes backwards; concurrent advances run each
 * expiry once (one webhook per payment).
 */
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Auth, SecondFactor } from "@cobro/core"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { DateTime, Effect, Schema, type Scope } from "effect"
import { Admin } from "../src/index.js"
import {
  configOf,
  get,
  postJson,
  request,
  serverLayer,
  tempDb,
  webhookReceiver as receiver
} from "./support.js"

const day = 86_400
const pg = await Effect.runPromise(pgAvailable)

const stores: ReadonlyArray<readonly [string, Effect.Effect<string, never, Scope.Scope>, boolean]> = [
  ["SQLite", tempDb, false],
  ["Postgres", freshPgUrl, !pg]
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/**
 * `body` against a sandbox server on `databaseUrl`. Its background jobs and webhook deliveries run
 * hourly: only advances run due work and deliver, so what an advance reports is all that was done
 * (a background delivery between an advance's expiries and its own deliveries would take one
 * from its count).
 */
const inServer = <A, E, R>(
  databaseUrl: Effect.Effect<string, never, Scope.Scope>,
  body: Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* databaseUrl,
      COBRO_JOB_INTERVAL: "1 hour",
      COBRO_WEBHOOK_POLL_INTERVAL: "1 hour"
    })
    return yield* Effect.provide(body, serverLayer(config))
  })

/** An ACTIVE merchant and a user token of it. */
const merchant = (user_id: string) =>
  Effect.gen(function* () {
    const created = yield* Admin.createUser({
      user_id,
      name: `Tienda ${user_id}`,
      email: `${user_id}@example.com`,
      cuit: "30712345671",
      status: "ACTIVE"
    })
    const issued = yield* postJson(`/users/${user_id}/tokens`, {
      client_id: created.client_id,
      client_secret: created.client_secret
    })
    expect(issued.status).toBe(200)
    return { user_id, token: (issued.body["data"] as { token: string }).token }
  })

/** A partner token acting for `user_id`. */
const partnerTokenFor = (user_id: string) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const partner = yield* auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name: `Socio de ${user_id}`,
        redirect_url: "https://partner.example.com/cb"
      })
    )
    const { code } = yield* auth.issueCode(partner.partner.partner_id, user_id as never)
    return (yield* auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: partner.client_id,
        client_secret: partner.client_secret
      })
    )).token
  })

const createPayment = (user_id: string, external_id: string, webhook_url?: string) =>
  Effect.map(
    postJson("/payments/", {
      user_id,
      external_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      ...(webhook_url === undefined ? {} : { webhook_url })
    }),
    (r) => {
      expect(r.status).toBe(200)
      return r.body["data"] as { readonly id: string; readonly expiration_timestamp: string }
    }
  )

const statusOf = (id: string, token: string) =>
  Effect.map(get(`/payments/${id}`, token), (r) => {
    expect(r.status).toBe(200)
    return (r.body["data"] as { payment_status: string }).payment_status
  })

const clockOf = (token: string) =>
  Effect.map(get("/sandbox/clock", token), (r) => {
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ message: "sandbox.clock.found", error: false, code: 200 })
    return r.body["data"] as { readonly now: string; readonly offset_seconds: number }
  })

const advance = (body: Json, token: string) =>
  Effect.map(postJson("/sandbox/clock/advance", body, token), (r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body).toMatchObject({ message: "sandbox.clock.advanced", error: false, code: 200 })
    return r.body["data"] as Json
  })

const millisOf = (iso: string) => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

describe.each(stores)("test clocks per merchant on %s", (_, databaseUrl, skip) => {
  it.scopedLive.skipIf(skip)(
    "two merchants advance their clocks independently; only their own payments expire",
    () =>
      inServer(
        databaseUrl,
        Effect.gen(function* () {
          const a = yield* merchant("tienda_a")
          const b = yield* merchant("tienda_b")
          const payA = yield* createPayment("tienda_a", "a-1")
          const payB = yield* createPayment("tienda_b", "b-1")
          // Each clock starts at real time.
          for (const m of [a, b]) {
            const clock = yield* clockOf(m.token)
            expect(clock.offset_seconds).toBe(0)
            expect(Math.abs(millisOf(clock.now) - Date.now())).toBeLessThan(60_000)
          }

          const movedA = yield* advance({ seconds: 6 * day }, a.token)
          expect(movedA).toMatchObject({ offset_seconds: 6 * day, due_work: { payments_expired: 1 } })
          expect(yield* statusOf(payA.id, a.token)).toBe("EXPIRED")
          expect(yield* statusOf(payB.id, b.token)).toBe("PENDING")
          expect((yield* clockOf(b.token)).offset_seconds).toBe(0)
          expect((yield* clockOf(a.token)).offset_seconds).toBe(6 * day)

          // A's new payment is stamped on A's clock (its 5-day lifetime from 6 days ahead).
          const laterA = yield* createPayment("tienda_a", "a-2")
          expect(millisOf(laterA.expiration_timestamp) - Date.now()).toBeGreaterThan((11 * day - 60) * 1000)

          // B moves to an instant (idempotent): its own payment expires, A's new one does not.
          const to = DateTime.formatIso(DateTime.unsafeMake(millisOf(payB.expiration_timestamp) + 60_000))
          const movedB = yield* advance({ to }, b.token)
          expect(millisOf(movedB.now) - millisOf(to)).toBeGreaterThanOrEqual(0)
          expect(millisOf(movedB.now) - millisOf(to)).toBeLessThan(5_000)
          expect(movedB.due_work.payments_expired).toBe(1)
          expect(yield* statusOf(payB.id, b.token)).toBe("EXPIRED")
          expect(yield* statusOf(laterA.id, a.token)).toBe("PENDING")
          // The same instant again (the clock has ticked on since) changes nothing.
          const again = yield* advance({ to }, b.token)
          expect(again.offset_seconds).toBe(movedB.offset_seconds)
          expect(again.due_work.payments_expired).toBe(0)
          expect((yield* clockOf(a.token)).offset_seconds).toBe(6 * day)
        })
      )
  )

  it.scopedLive.skipIf(skip)("the payer's page counts down on the merchant's clock", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const a = yield* merchant("tienda_p")
        const payment = yield* createPayment("tienda_p", "p-1")
        const expiresIn = () =>
          Effect.map(request(HttpClientRequest.get(`/pay/${payment.id}`)), (page) => {
            expect(page.status).toBe(200)
            const html = String(page.body)
            const left = /data-expires-in="(\d+)"/.exec(html)?.[1]
            expect(left, html).toBeDefined()
            return { left: Number(left), html }
          })
        const lifetime = millisOf(payment.expiration_timestamp) - Date.now()
        expect(Math.abs((yield* expiresIn()).left - lifetime)).toBeLessThan(60_000)
        // Three days later on the merchant's clock, the page has two days left (5-day lifetime).
        yield* advance({ seconds: 3 * day }, a.token)
        const later = yield* expiresIn()
        expect(Math.abs(later.left - (lifetime - 3 * day * 1000))).toBeLessThan(60_000)
        expect(later.html).toMatch(/id="countdown"[^>]*>1 d 23 h 5\d min</)
      })
    )
  )

  it.scopedLive.skipIf(skip)("a partner token moves the clock of the merchant it acts for", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const m = yield* merchant("socia")
        const other = yield* merchant("otra")
        const partnerToken = yield* partnerTokenFor("socia")
        const payment = yield* createPayment("socia", "p-1")
        expect((yield* clockOf(partnerToken)).offset_seconds).toBe(0)
        const moved = yield* advance({ seconds: 6 * day }, partnerToken)
        expect(moved.offset_seconds).toBe(6 * day)
        expect((yield* clockOf(m.token)).offset_seconds).toBe(6 * day)
        expect((yield* clockOf(other.token)).offset_seconds).toBe(0)
        expect(yield* statusOf(payment.id, m.token)).toBe("EXPIRED")
      })
    )
  )

  it.scopedLive.skipIf(skip)("the routes need a token; an advance is bounded and never goes backwards", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const m = yield* merchant("limites")
        const noToken = yield* get("/sandbox/clock")
        expect(noToken.status).toBe(401)
        expect(noToken.body).toMatchObject({ message: "auth.token.missing", error: true, code: 401 })
        expect((yield* postJson("/sandbox/clock/advance", { seconds: 60 })).status).toBe(401)
        expect((yield* postJson("/sandbox/clock/advance", { seconds: 60 }, "USR-nope")).status).toBe(401)

        const refused = (body: Json, field: string) =>
          Effect.map(postJson("/sandbox/clock/advance", body, m.token), (r) => {
            expect(r.status).toBe(400)
            expect(r.body).toMatchObject({
              message: "request.invalid",
              error: true,
              code: 400,
              data: { field }
            })
            return (r.body["data"] as { detail: string }).detail
          })
        // At most 400 days per call, by `seconds` or by `to`.
        expect(yield* refused({ seconds: 400 * day + 1 }, "seconds")).toContain("400 days")
        const far = DateTime.formatIso(DateTime.unsafeMake(Date.now() + (400 * day + 120) * 1000))
        expect(yield* refused({ to: far }, "to")).toContain("400 days")
        expect((yield* advance({ seconds: 400 * day }, m.token)).offset_seconds).toBe(400 * day)

        // Never backwards: an instant before the clock's time (real time included) is refused.
        const clock = yield* clockOf(m.token)
        const before = DateTime.formatIso(DateTime.unsafeMake(millisOf(clock.now) - 3_600_000))
        expect(yield* refused({ to: before }, "to")).toContain("only moves forward")
        const past = DateTime.formatIso(DateTime.unsafeMake(Date.now() - 60_000))
        yield* refused({ to: past }, "to")
        expect((yield* clockOf(m.token)).offset_seconds).toBe(400 * day)
      })
    )
  )

  it.scopedLive.skipIf(skip)("concurrent advances run each expiry once: one webhook per payment", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const hook = yield* receiver
        const m = yield* merchant("concurrente")
        const create = (prefix: string) =>
          Effect.forEach([1, 2, 3, 4, 5], (i) =>
            Effect.map(createPayment("concurrente", `${prefix}-${i}`, hook.url), (p) => p.id)
          )
        const paidIn = (ids: ReadonlyArray<string>) =>
          hook.received
            .map((body) => (JSON.parse(body) as { paymentId: string }).paymentId)
            .filter((id) => ids.includes(id))
            .sort()
        const sum = (answers: ReadonlyArray<Json>, key: string) =>
          answers.reduce((n, a) => n + (a.due_work[key] as number), 0)

        // Three `seconds` advances at once: they add up (9 days), and each expiry runs once.
        const first = yield* create("s")
        const bySeconds = yield* Effect.all(
          [1, 2, 3].map(() => advance({ seconds: 3 * day }, m.token)),
          { concurrency: "unbounded" }
        )
        expect(sum(bySeconds, "payments_expired")).toBe(5)
        expect(sum(bySeconds, "webhooks_delivered")).toBe(5)
        expect((yield* clockOf(m.token)).offset_seconds).toBe(9 * day)
        for (const id of first) expect(yield* statusOf(id, m.token)).toBe("EXPIRED")
        expect(paidIn(first)).toEqual([...first].sort())

        // Three advances to one instant at once: the clock ends there, each expiry runs once.
        const second = yield* create("t")
        const to = DateTime.formatIso(
          DateTime.unsafeMake(millisOf((yield* clockOf(m.token)).now) + 6 * day * 1000)
        )
        const byTo = yield* Effect.all(
          [1, 2, 3].map(() => advance({ to }, m.token)),
          { concurrency: "unbounded" }
        )
        expect(sum(byTo, "payments_expired")).toBe(5)
        expect(sum(byTo, "webhooks_delivered")).toBe(5)
        for (const answer of byTo) expect(millisOf(answer.now)).toBeGreaterThanOrEqual(millisOf(to))
        expect((yield* clockOf(m.token)).offset_seconds).toBeGreaterThanOrEqual(15 * day - 60)
        expect((yield* clockOf(m.token)).offset_seconds).toBeLessThanOrEqual(15 * day)
        for (const id of second) expect(yield* statusOf(id, m.token)).toBe("EXPIRED")
        expect(paidIn(second)).toEqual([...second].sort())

        // One webhook per payment; a later advance finds nothing left to do.
        const after = yield* advance({ seconds: 60 }, m.token)
        expect(after.due_work).toMatchObject({ payments_expired: 0, webhooks_attempted: 0 })
        expect(hook.received).toHaveLength(10)
      })
    )
  )

  it.scopedLive.skipIf(skip)("payout schedules follow their merchant's clock", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const schedules = yield* Effect.forEach(["agenda_a", "agenda_b"], (user_id) =>
          Effect.gen(function* () {
            const m = yield* merchant(user_id)
            // An account of the merchant's own at the sandbox bank to sweep to.
            const account = yield* postJson("/sandbox/bank-accounts", {}, m.token)
            expect(account.status).toBe(200)
            const partnerToken = yield* partnerTokenFor(user_id)
            const created = yield* postJson(
              "/transactions/schedules",
              {
                schedule_type: "payout",
                frequency: "daily",
                payload: { address: (account.body["data"] as { cbu: string }).cbu }
              },
              partnerToken
            )
            expect(created.status).toBe(200)
            const schedule = created.body["data"] as { schedule_id: string; next_run_date: string }
            const read = Effect.map(
              get(`/transactions/schedules/${schedule.schedule_id}`, partnerToken),
              (r) => (r.body["data"] as { next_run_date: string }).next_run_date
            )
            return { ...m, schedule, read }
          })
        )
        const [a, b] = schedules as [(typeof schedules)[0], (typeof schedules)[0]]
        // A daily run is due within a day: two days on A's clock run A's schedule only.
        const moved = yield* advance({ seconds: 2 * day }, a.token)
        expect(moved.due_work.payout_runs).toBeGreaterThanOrEqual(1)
        const nextA = yield* a.read
        expect(millisOf(nextA)).toBeGreaterThan(millisOf(moved.now))
        expect(yield* b.read).toBe(b.schedule.next_run_date)
        expect(millisOf(b.schedule.next_run_date)).toBeLessThan(Date.now() + day * 1000)
      })
    )
  )

  it.scopedLive.skipIf(skip)("split holds follow their merchant's clock", () =>
    inServer(
      databaseUrl,
      Effect.gen(function* () {
        const splits = yield* Effect.forEach(["reparto_a", "reparto_b"], (user_id) =>
          Effect.gen(function* () {
            const m = yield* merchant(user_id)
            const account = yield* postJson("/sandbox/bank-accounts", {}, m.token)
            expect(account.status).toBe(200)
            const created = yield* postJson(
              "/split/accounts",
              [{ address: (account.body["data"] as { cbu: string }).cbu }],
              m.token
            )
            const request_id = (created.body["data"] as { request_id: string }).request_id
            const verified = yield* postJson(
              "/split/accounts/verify",
              { request_id, code: SecondFactor.sandboxCode(request_id as never) },
              m.token
            )
            expect(verified.status).toBe(200)
            const account_id = (verified.body["data"] as Json).accounts[0].account_id as string
            const split = (yield* postJson("/split/payments", { external_id: "s-1" }, m.token)).body[
              "data"
            ] as {
              split_payment_id: string
              cvu: string
            }
            expect((yield* postJson(`/cvu/${split.cvu}/faucet`, { amount: 1000 }, m.token)).status).toBe(200)
            const instructed = yield* postJson(
              `/split/payments/${split.split_payment_id}/payouts`,
              { payouts: [{ account_id, amount: 100 }] },
              m.token
            )
            expect(instructed.status).toBe(200)
            const read = Effect.map(
              get(`/split/payments/${split.split_payment_id}`, m.token),
              (r) => r.body["data"] as { payout_status: string; payouts: Array<{ status: string }> }
            )
            return { ...m, read }
          })
        )
        const [a, b] = splits as [(typeof splits)[0], (typeof splits)[0]]
        const before = yield* b.read
        // The 12-hour hold ends on A's clock only.
        const moved = yield* advance({ seconds: 13 * 3600 }, a.token)
        expect(moved.due_work.splits_executed).toBe(1)
        expect((yield* a.read).payouts.map((p) => p.status)).toEqual(["SUCCESS"])
        const still = yield* b.read
        expect(still).toEqual(before)
        expect(still.payouts.map((p) => p.status)).not.toContain("SUCCESS")
      })
    )
  )
})
