/**
 * The delivery worker over the in-memory engine, against real HTTP receivers on loopback. The
 * schedule runs on the `TestClock`; each HTTP request is real I/O.
 */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Auth, Engine, Ids, RealTime } from "@cobro/core"
import { type WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { Clock, DateTime, Duration, Effect, Either, Layer, Random, Schema, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import { Receiver, Signature, Webhooks, WebhooksConfig } from "../src/index.js"
import {
  appendEvent,
  merchant,
  paidPayment,
  type Received,
  testReceiver,
  transfer,
  u1,
  webhooksOver
} from "./support.js"

const memory = webhooksOver(Engine.layerMemoryStorage)
const seconds = (t: DateTime.Utc) => Math.floor(DateTime.toEpochMillis(t) / 1000)
const millisOf = (t: DateTime.Utc | null) => (t === null ? Number.NaN : DateTime.toEpochMillis(t))
const headersOf = (r: Received) => r.headers as Record<string, string>

/** Moves the clock to the earliest due delivery and runs the worker; false when nothing is pending. */
const stepToNextDue = Effect.gen(function* () {
  const webhooks = yield* Webhooks.Webhooks
  const pending = yield* webhooks.list({ status: "pending", limit: 500 })
  if (pending.length === 0) return false
  const due = Math.min(...pending.map((d) => millisOf(d.next_attempt_at)))
  yield* TestClock.setTime(Math.max(due, yield* TestClock.currentTimeMillis))
  yield* webhooks.deliverDue()
  return true
})

/** DESIGN's schedule as cumulative offsets from the first attempt, in milliseconds. */
const cumulative = WebhooksConfig.retrySchedule.reduce<Array<number>>(
  (acc, d) => [...acc, acc.at(-1)! + Duration.toMillis(d)],
  [0]
)

/** The attempts of one round follow the schedule: each wait and each offset within ±20 %. */
const expectOnSchedule = (attempts: ReadonlyArray<W.DeliveryAttempt>) => {
  const times = attempts.map((a) => millisOf(a.attempted_at))
  for (let k = 1; k < times.length; k++) {
    const wait = Duration.toMillis(WebhooksConfig.retrySchedule[k - 1]!)
    expect((times[k]! - times[k - 1]!) / wait).toBeGreaterThanOrEqual(0.8)
    expect((times[k]! - times[k - 1]!) / wait).toBeLessThanOrEqual(1.2)
    expect((times[k]! - times[0]!) / cumulative[k]!).toBeGreaterThanOrEqual(0.8)
    expect((times[k]! - times[0]!) / cumulative[k]!).toBeLessThanOrEqual(1.2)
  }
}

describe("Webhooks worker", () => {
  it.scoped(
    "delivers an engine event with SPEC's body, signed so that standardwebhooks and our helper verify it",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.now())
        const receiver = yield* testReceiver()
        const created = yield* merchant()
        const payment = yield* paidPayment("o-1", receiver.url)
        const webhooks = yield* Webhooks.Webhooks
        const [pending] = yield* webhooks.list()
        expect(pending).toMatchObject({ status: "pending", attempts: 0, webhook_url: receiver.url })

        expect(yield* webhooks.deliverDue()).toEqual({
          attempted: 1,
          delivered: 1,
          retrying: 0,
          dead: 0,
          superseded: 0,
          errors: 0
        })
        expect(receiver.received).toHaveLength(1)
        const request = receiver.received[0]!
        expect(request.method).toBe("POST")
        expect(request.body).toBe(
          `{"message":"Payment updated","paymentId":"${payment.id}","externalId":"o-1"}`
        )
        const now = yield* DateTime.now
        expect(request.headers).toMatchObject({
          "content-type": "application/json",
          "user-agent": "cobro-webhooks/0.1",
          "webhook-id": pending!.event_id,
          "webhook-timestamp": String(seconds(now))
        })
        expect(request.headers["x-service-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/)
        expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
        // The reference library, with the secret in its whsec_ form.
        const library = new Webhook(Signature.standardWebhooksSecret(created.client_secret))
        expect(library.verify(request.body, headersOf(request))).toEqual(JSON.parse(request.body))
        // Our helper, both header styles.
        expect(
          Receiver.verifySync({
            secret: created.client_secret,
            headers: request.headers,
            body: request.body,
            now: Date.now()
          })
        ).toEqual(
          Either.right({
            id: pending!.event_id,
            timestamp: seconds(now),
            verified: ["webhook-signature", "x-service-signature"]
          })
        )

        const delivered = yield* webhooks.get(pending!.event_id)
        expect(delivered).toMatchObject({
          status: "delivered",
          attempts: 1,
          last_status_code: 200,
          last_error: null,
          next_attempt_at: null,
          lease_owner: null
        })
        const [attempt] = yield* webhooks.attempts(pending!.event_id)
        expect(attempt).toMatchObject({
          number: 1,
          status_code: 200,
          error: null,
          outcome: "delivered",
          worker: webhooks.workerId
        })
        expect(millisOf(attempt!.attempted_at)).toBe(DateTime.toEpochMillis(now))
        expect(attempt!.duration_ms).toBeGreaterThanOrEqual(0)
        expect(attempt!.duration_ms).toBeLessThan(3000)
        // Nothing is sent twice.
        expect((yield* webhooks.deliverDue()).attempted).toBe(0)
        expect(receiver.received).toHaveLength(1)
      }).pipe(Effect.provide(memory))
  )

  it.scoped("webhook-timestamp is RealTime's time; the attempt and schedule stay on Clock", () =>
    Effect.gen(function* () {
      // The engine's clock is a week ahead of real time, as the reference server's sandbox
      // clock after an advance; `RealTime` is the system's clock.
      const ahead = Duration.toMillis(Duration.days(7))
      yield* TestClock.setTime(Date.now() + ahead)
      const receiver = yield* testReceiver()
      const created = yield* merchant()
      yield* paidPayment("o-1", receiver.url)
      const webhooks = yield* Webhooks.Webhooks
      expect((yield* webhooks.deliverDue()).delivered).toBe(1)
      const request = receiver.received[0]!
      expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60)
      // A receiver on real time accepts it.
      expect(
        Either.isRight(
          Receiver.verifySync({
            secret: created.client_secret,
            headers: request.headers,
            body: request.body,
            now: Date.now()
          })
        )
      ).toBe(true)
      const [delivery] = yield* webhooks.list()
      const [attempt] = yield* webhooks.attempts(delivery!.event_id)
      expect(millisOf(attempt!.attempted_at)).toBe(DateTime.toEpochMillis(yield* DateTime.now))
    }).pipe(
      Effect.provide(
        webhooksOver(Engine.layerMemoryStorage).pipe(Layer.provide(RealTime.layer(Clock.make())))
      )
    )
  )

  it.scoped("account.activated goes to the partner's webhook URL, signed with the partner's secret", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const receiver = yield* testReceiver()
      const partner = yield* (yield* Auth.Auth).registerPartner(
        Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
          name: "Socio Uno",
          redirect_url: "https://socio.example.com/callback",
          webhook_url: receiver.url
        })
      )
      const user = yield* merchant({ account_status: "PENDING", partner_id: partner.partner.partner_id })
      yield* (yield* Accounts.Accounts).setStatus(user.user.user_id, "ACTIVE")
      yield* (yield* Webhooks.Webhooks).deliverDue()
      const request = receiver.received[0]!
      expect(JSON.parse(request.body)).toEqual({ message: "account_activated", user_id: "u1" })
      const check = (secret: string) =>
        Either.isRight(
          Receiver.verifySync({ secret, headers: request.headers, body: request.body, now: Date.now() })
        )
      expect(check(partner.client_secret)).toBe(true)
      expect(check(user.client_secret)).toBe(false)
    }).pipe(Effect.provide(memory))
  )

  it.scoped(
    "a failed attempt is retried after 5 s ± jitter with the same webhook-id; a rotated secret signs the retry",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 0, 5))
        const receiver = yield* testReceiver((_, i) => ({ status: i === 0 ? 500 : 200 }))
        const created = yield* merchant()
        yield* paidPayment("o-1", receiver.url)
        const webhooks = yield* Webhooks.Webhooks
        const start = yield* DateTime.now
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 })
        const [waiting] = yield* webhooks.list()
        expect(waiting).toMatchObject({
          status: "pending",
          attempts: 1,
          last_status_code: 500,
          last_error: "HTTP 500"
        })
        const wait = millisOf(waiting!.next_attempt_at) - DateTime.toEpochMillis(start)
        expect(wait).toBeGreaterThanOrEqual(4500)
        expect(wait).toBeLessThanOrEqual(5500)
        // Not before its time.
        yield* TestClock.adjust(Duration.millis(wait - 1))
        expect((yield* webhooks.deliverDue()).attempted).toBe(0)

        const rotated = yield* (yield* Auth.Auth).rotateSecret(u1)
        yield* TestClock.adjust("1 millis")
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 })
        const [first, second] = receiver.received
        expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"])
        expect(second!.body).toBe(first!.body)
        expect(
          Number(second!.headers["webhook-timestamp"]) - Number(first!.headers["webhook-timestamp"])
        ).toBe(Math.floor((DateTime.toEpochMillis(start) + wait) / 1000) - seconds(start))
        const verifies = (r: Received, secret: string) =>
          Either.isRight(
            Receiver.verifySync({
              secret,
              headers: r.headers,
              body: r.body,
              now: Number(r.headers["webhook-timestamp"]) * 1000
            })
          )
        expect(verifies(first!, created.client_secret)).toBe(true)
        expect(verifies(second!, rotated.client_secret)).toBe(true)
        expect(verifies(second!, created.client_secret)).toBe(false)
        const attempts = yield* webhooks.attempts(waiting!.event_id)
        expect(attempts.map((a) => [a.number, a.status_code, a.outcome, a.error])).toEqual([
          [1, 500, "failed", "HTTP 500"],
          [2, 200, "delivered", null]
        ])
      }).pipe(Effect.provide(memory))
  )

  it.scoped(
    "a receiver down for 30 hours gets every event once it is back; attempts follow the schedule ±20 %",
    () =>
      Effect.gen(function* () {
        const T = Date.UTC(2026, 0, 5)
        const backAt = T + 30 * 3_600_000
        yield* TestClock.setTime(T)
        let up = false
        const receiver = yield* testReceiver(() => ({ status: up ? 200 : 503 }))
        const created = yield* merchant()
        const webhooks = yield* Webhooks.Webhooks
        // Three payments paid at T, and two more transfers during the outage, at T+12 h and T+29 h.
        const payments = []
        for (const id of ["o-1", "o-2", "o-3"]) payments.push(yield* paidPayment(id, receiver.url))
        const emissions = [
          { at: T + 12 * 3_600_000, cvu: payments[0]!.cvu },
          { at: T + 29 * 3_600_000, cvu: payments[1]!.cvu }
        ]
        while (true) {
          const pending = yield* webhooks.list({ status: "pending", limit: 500 })
          const due = Math.min(...pending.map((d) => millisOf(d.next_attempt_at)))
          const emit = emissions[0]?.at ?? Infinity
          const next = Math.min(due, emit)
          if (next === Infinity) break
          yield* TestClock.setTime(next)
          up = next >= backAt
          if (emit === next) yield* transfer(emissions.shift()!.cvu, 100n)
          yield* webhooks.deliverDue()
        }
        const all = yield* webhooks.list({ limit: 500 })
        expect(all).toHaveLength(5)
        // Events whose schedule ran out during the outage are dead: replay them now it is back.
        const dead = all.filter((d) => d.status === "dead")
        for (const d of dead) {
          const attempts = yield* webhooks.attempts(d.event_id)
          expect(attempts).toHaveLength(8)
          expect(attempts.every((a) => a.status_code === 503)).toBe(true)
          yield* webhooks.replay(d.event_id)
        }
        yield* webhooks.deliverDue()

        for (const d of yield* webhooks.list({ limit: 500 })) {
          expect(d.status).toBe("delivered")
          const attempts = yield* webhooks.attempts(d.event_id)
          const firstRound = attempts.slice(0, 8)
          expectOnSchedule(firstRound)
          for (const a of firstRound) {
            // Down before 30 h, up from then on: each attempt got what the receiver answered then.
            expect(a.status_code).toBe(millisOf(a.attempted_at) < backAt ? 503 : 200)
          }
          expect(attempts.filter((a) => a.outcome === "delivered")).toHaveLength(1)
        }
        // The receiver got each event exactly once with a 2xx, signed, with one id across retries.
        const ok = receiver.received.filter((r) => verifiesAt(r, created.client_secret))
        expect(ok).toHaveLength(receiver.received.length)
        const ids = all.map((d) => d.event_id).sort()
        expect([...new Set(receiver.received.map((r) => r.headers["webhook-id"]))].sort()).toEqual(ids)
        // The events emitted at 12 h and 29 h were still being retried when it came back: no replay
        // needed. Those of T ran out of retries at about 27.6 h (± jitter), during the outage.
        const late = all.filter((d) => millisOf(d.created_at) > T)
        expect(late).toHaveLength(2)
        for (const d of late) expect((yield* webhooks.get(d.event_id)).replays).toBe(0)
        expect(dead.map((d) => millisOf(d.created_at))).toEqual([T, T, T])
      }).pipe(Effect.provide(memory), Effect.withRandom(Random.make("thirty-hour outage")))
  )

  it.scoped(
    "after the last retry a delivery is dead; a replay sends it again (same id), also a delivered one",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 0, 5))
        let status = 503
        const receiver = yield* testReceiver(() => ({ status }))
        yield* merchant()
        yield* paidPayment("o-1", receiver.url)
        const webhooks = yield* Webhooks.Webhooks
        while (yield* stepToNextDue) {
          /* every attempt of the schedule */
        }
        const [dead] = yield* webhooks.list({ status: "dead" })
        expect(dead).toMatchObject({
          status: "dead",
          attempts: 8,
          round_attempts: 8,
          next_attempt_at: null,
          last_status_code: 503,
          last_error: "HTTP 503"
        })
        expectOnSchedule(yield* webhooks.attempts(dead!.event_id))
        // Dead stays dead, whatever time passes.
        yield* TestClock.adjust("3 days")
        expect((yield* webhooks.deliverDue()).attempted).toBe(0)

        status = 200
        const replayed = yield* webhooks.replay(dead!.event_id)
        expect(replayed).toMatchObject({ status: "pending", round_attempts: 0, replays: 1, attempts: 8 })
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 })
        expect(yield* webhooks.get(dead!.event_id)).toMatchObject({
          status: "delivered",
          attempts: 9,
          replays: 1
        })
        // A delivered event can be replayed too.
        yield* webhooks.replay(dead!.event_id)
        yield* webhooks.deliverDue()
        expect(receiver.received).toHaveLength(10)
        expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(
          new Set([dead!.event_id])
        )
        expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1)
        expect((yield* webhooks.attempts(dead!.event_id)).map((a) => a.number)).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8, 9, 10
        ])

        // Unknown events, and bad input, are typed errors.
        const unknown = Ids.EventId.make("evt_unknown")
        expect(yield* Effect.flip(webhooks.replay(unknown))).toMatchObject({
          _tag: "NotFound",
          key: "webhook_delivery.not.found"
        })
        expect((yield* Effect.flip(webhooks.attempts(unknown)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(webhooks.get(unknown)))._tag).toBe("NotFound")
        expect(yield* Effect.flip(webhooks.list({ limit: 0 }))).toMatchObject({
          _tag: "InvalidInput",
          field: "limit"
        })
        expect((yield* Effect.flip(webhooks.list({ limit: 501 })))._tag).toBe("InvalidInput")
      }).pipe(Effect.provide(memory))
  )

  it.scoped(
    "only 2xx is success: a redirect is a failed attempt and is not followed; a silent receiver times out after 3 s",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 0, 5))
        const target = yield* testReceiver()
        const redirector = yield* testReceiver(() => ({ status: 302, headers: { location: target.url } }))
        const silent = yield* testReceiver(() => "hold")
        yield* merchant()
        const redirected = yield* appendEvent(redirector.url, { message: "to a redirect" })
        const timedOut = yield* appendEvent(silent.url, { message: "to a silent receiver" })
        const webhooks = yield* Webhooks.Webhooks
        const started = performance.now()
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 2, retrying: 2 })
        expect(performance.now() - started).toBeGreaterThanOrEqual(2990)
        const [r] = yield* webhooks.attempts(redirected.event_id)
        expect(r).toMatchObject({
          status_code: 302,
          outcome: "failed",
          error: `HTTP 302: redirect to ${target.url} not followed`
        })
        expect(target.received).toHaveLength(0)
        const [t] = yield* webhooks.attempts(timedOut.event_id)
        expect(t).toMatchObject({
          status_code: null,
          outcome: "failed",
          error: "timeout: no response within 3000 ms"
        })
        expect(t!.duration_ms).toBeGreaterThanOrEqual(2990)
        expect(t!.duration_ms).toBeLessThan(4000)
        silent.release(200)
      }).pipe(Effect.provide(memory)),
    15_000
  )

  it.scoped("without a secret to sign with, an attempt fails without sending anything", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver()
      const event = yield* appendEvent(receiver.url, { message: "x" }) // u1 was never created
      const webhooks = yield* Webhooks.Webhooks
      expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 })
      expect(yield* webhooks.attempts(event.event_id)).toMatchObject([
        { status_code: null, error: "no signing secret: account u1 has no API credential", duration_ms: 0 }
      ])
      expect(receiver.received).toHaveLength(0)
    }).pipe(Effect.provide(memory))
  )

  it.scoped(
    "in production mode a URL refused for what it is (non-public literal, localhost, scheme) is dead at its first attempt, with why",
    () =>
      Effect.gen(function* () {
        const receiver = yield* testReceiver()
        yield* merchant()
        // Rows written before production refused these URLs at creation (or by a sandbox engine).
        const urls: ReadonlyArray<readonly [string, string]> = [
          [receiver.url, "refused: production webhooks must use https"],
          [`https://127.0.0.1:${receiver.port}/hooks`, "refused: 127.0.0.1 is a loopback address"],
          [`https://0x7f.1:${receiver.port}/hooks`, "refused: 127.0.0.1 is a loopback address"],
          ["https://169.254.169.254/latest", "refused: 169.254.169.254 is a link-local address"],
          [`https://localhost:${receiver.port}/hooks`, "refused: localhost is a loopback name"],
          ["ftp://hooks.example.com/x", "scheme ftp: is not http(s)"]
        ]
        const events = []
        for (const [url] of urls) events.push(yield* appendEvent(url, { message: "x" }))
        const webhooks = yield* Webhooks.Webhooks
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: urls.length, dead: urls.length })
        for (const [i, [url, error]] of urls.entries()) {
          const delivery = yield* webhooks.get(events[i]!.event_id)
          expect({
            url,
            status: delivery.status,
            attempts: delivery.attempts,
            error: delivery.last_error
          }).toEqual({
            url,
            status: "dead",
            attempts: 1,
            error
          })
          expect(delivery.next_attempt_at).toBeNull()
          expect(delivery.finished_at).not.toBeNull()
        }
        // Nothing is left to retry; a replay tries once more and ends the same way.
        yield* TestClock.adjust("2 days")
        expect((yield* webhooks.deliverDue()).attempted).toBe(0)
        yield* webhooks.replay(events[0]!.event_id)
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, dead: 1 })
        expect(yield* webhooks.get(events[0]!.event_id)).toMatchObject({ status: "dead", attempts: 2 })
        expect(receiver.received).toHaveLength(0)
      }).pipe(Effect.provide(webhooksOver(Engine.layerMemoryStorage, {}, { mode: "production" })))
  )

  it.scoped(
    "in production mode a name refused after DNS keeps its whole schedule (the answer may change), saying why",
    () =>
      Effect.gen(function* () {
        const receiver = yield* testReceiver()
        yield* merchant()
        const event = yield* appendEvent(`https://hooks.example.test:${receiver.port}/hooks`, {
          message: "x"
        })
        const webhooks = yield* Webhooks.Webhooks
        const why = "refused: hooks.example.test resolves to 127.0.0.1, a loopback address"
        expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 })
        const pending = yield* webhooks.get(event.event_id)
        expect(pending).toMatchObject({ status: "pending", attempts: 1, last_error: why })
        expect(pending.next_attempt_at).not.toBeNull()
        while (yield* stepToNextDue) {
          /* the whole schedule */
        }
        const attempts = yield* webhooks.attempts(event.event_id)
        expect(attempts).toHaveLength(8)
        for (const a of attempts) expect(a.error).toBe(why)
        expectOnSchedule(attempts)
        expect(yield* webhooks.get(event.event_id)).toMatchObject({ status: "dead", last_error: why })
        expect(receiver.received).toHaveLength(0)
      }).pipe(
        Effect.provide(
          webhooksOver(
            Engine.layerMemoryStorage,
            {},
            { mode: "production", resolve: async () => [{ address: "127.0.0.1", family: 4 }] }
          )
        )
      )
  )

  it.scoped("concurrent runs in one process deliver each event once", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver()
      yield* merchant()
      for (let i = 0; i < 30; i++) yield* appendEvent(receiver.url, { message: "x", n: i })
      const webhooks = yield* Webhooks.Webhooks
      const reports = yield* Effect.all(
        [0, 1, 2].map(() => webhooks.deliverDue()),
        { concurrency: "unbounded" }
      )
      expect(reports.reduce((n, r) => n + r.delivered, 0)).toBe(30)
      expect(receiver.received).toHaveLength(30)
      expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(30)
    }).pipe(Effect.provide(webhooksOver(Engine.layerMemoryStorage, { batchSize: 4, concurrency: 2 })))
  )

  it.scoped("layerWorker delivers and retries in the background, on its interval, as the clock moves", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver((_, i) => ({ status: i === 0 ? 500 : 200 }))
      yield* merchant()
      const event = yield* appendEvent(receiver.url, { message: "x" })
      const webhooks = yield* Webhooks.Webhooks
      const sleep = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      // Nobody calls deliverDue here: only the clock moves, a second at a time.
      let seconds = 0
      while ((yield* webhooks.get(event.event_id)).status !== "delivered" && seconds < 60) {
        yield* TestClock.adjust("1 second")
        yield* sleep
        seconds++
      }
      const attempts = yield* webhooks.attempts(event.event_id)
      expect(attempts.map((a) => a.status_code)).toEqual([500, 200])
      // The retry waited for its 5 s (± jitter), on a worker that looks every 2 s.
      const gap = millisOf(attempts[1]!.attempted_at) - millisOf(attempts[0]!.attempted_at)
      expect(gap).toBeGreaterThanOrEqual(4500)
      expect(gap).toBeLessThanOrEqual(7500)
      expect(millisOf(attempts[1]!.attempted_at) % 2000).toBe(0)
      expect(receiver.received).toHaveLength(2)
    }).pipe(
      Effect.provide(
        Webhooks.layerWorker.pipe(
          Layer.provideMerge(webhooksOver(Engine.layerMemoryStorage, { pollInterval: Duration.seconds(2) }))
        )
      )
    )
  )
})

const verifiesAt = (r: Received, secret: string) =>
  Either.isRight(
    Receiver.verifySync({
      secret,
      headers: r.headers,
      body: r.body,
      now: Number(r.headers["webhook-timestamp"]) * 1000
    })
  )
