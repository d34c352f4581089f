/**
 * Webhook delivery state: a delivery row exists exactly when its event does (same unit of work),
 * claims lease due rows to one worker at a time, a lapsed lease is taken over, writes are fenced
 * on the lease, replays restart the schedule.
 */
import { expect } from "@effect/vitest"
import { Ids, Outbox, Payments, Principal, Transfers, WebhookDeliveries } from "@cobro/core"
import { Transactor, WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, Layer, Option, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, seedUser, u1, u2 } from "./fixtures.js"

const appendEvent = (webhook_url: string | null, payload: Record<string, unknown> = { message: "x" }) =>
  Effect.gen(function* () {
    const event = yield* Outbox.makeEvent({ type: "payment.updated", user_id: u1, webhook_url, payload })
    yield* (yield* Outbox.Outbox).append(event)
    return event
  })

const at = (millis: number) => DateTime.unsafeMake(millis)

/** The attempt a worker records, and the state it would store, for a claimed delivery. */
const attemptOn = (
  claimed: W.WebhookDelivery,
  worker: string,
  now: DateTime.Utc,
  outcome: W.AttemptOutcome
): readonly [W.DeliveryAttempt, W.WebhookDelivery] => {
  const attempt = new W.DeliveryAttempt({
    attempt_id: `${claimed.event_id}-${worker}-${claimed.attempts + 1}`,
    event_id: claimed.event_id,
    number: claimed.attempts + 1,
    attempted_at: now,
    duration_ms: 12,
    status_code: outcome === "delivered" ? 200 : 503,
    error: outcome === "delivered" ? null : "HTTP 503",
    outcome,
    worker
  })
  const next = new W.WebhookDelivery({
    ...claimed,
    status: outcome === "delivered" ? "delivered" : "pending",
    attempts: claimed.attempts + 1,
    round_attempts: claimed.round_attempts + 1,
    next_attempt_at: outcome === "delivered" ? null : DateTime.addDuration(now, Duration.seconds(5)),
    lease_owner: null,
    lease_until: null,
    last_attempt_at: now,
    last_status_code: attempt.status_code,
    last_error: attempt.error,
    finished_at: outcome === "delivered" ? now : null
  })
  return [attempt, next]
}

export const webhookScenarios: ReadonlyArray<Scenario> = [
  {
    name: "webhooks: an event with a URL gets its pending delivery in the same unit of work; none without a URL",
    run: Effect.gen(function* () {
      const repo = yield* W.WebhookDeliveryRepository
      const transactor = yield* Transactor.Transactor
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const payload = { message: "Payment updated", paymentId: "VAR-u1-o-1", externalId: "o-1" }
      const event = yield* appendEvent("https://hooks.example.com/cobro", payload)
      const delivery = Option.getOrThrow(yield* repo.find(event.event_id))
      expect(delivery).toEqual(Option.getOrThrow(W.pendingFor(event)))
      expect(delivery).toMatchObject({
        status: "pending",
        attempts: 0,
        webhook_url: "https://hooks.example.com/cobro",
        lease_owner: null,
        type: "payment.updated",
        user_id: u1
      })
      // The body is the payload's JSON text, keys in the order SPEC lists them.
      expect(delivery.body).toBe('{"message":"Payment updated","paymentId":"VAR-u1-o-1","externalId":"o-1"}')
      expect(DateTime.toEpochMillis(delivery.next_attempt_at!)).toBe(Date.UTC(2026, 0, 1))

      const silent = yield* appendEvent(null)
      expect(yield* repo.find(silent.event_id)).toEqual(Option.none())

      // A unit of work that fails leaves neither the event nor its delivery.
      const lost = yield* Effect.flip(
        transactor.withTransaction(
          Effect.gen(function* () {
            const e = yield* appendEvent("https://hooks.example.com/rolled-back")
            expect(Option.isSome(yield* repo.find(e.event_id))).toBe(true)
            return yield* Effect.fail(e)
          })
        )
      )
      expect(yield* (yield* Outbox.Outbox).findById(lost.event_id)).toEqual(Option.none())
      expect(yield* repo.find(lost.event_id)).toEqual(Option.none())

      // The engine's own events: a credited transfer writes "Payment updated" with its delivery.
      yield* TestClock.adjust("1 second")
      yield* seedUser()
      const p = yield* (yield* Payments.Payments).create(
        createRequest({ external_id: "o-2", webhook_url: "https://shop.example.com/hooks" })
      )
      const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu: p.cvu, amount: ars(150000n) })
      yield* (yield* Transfers.Transfers).ingest(t)
      const fromEngine = yield* repo.list({ user_id: u1, limit: 10 })
      expect(fromEngine.map((d) => d.webhook_url)).toEqual([
        "https://hooks.example.com/cobro",
        "https://shop.example.com/hooks"
      ])
      expect(JSON.parse(fromEngine[1]!.body)).toEqual({
        message: "Payment updated",
        paymentId: p.id,
        externalId: "o-2"
      })
    })
  },
  {
    name: "webhooks: claims lease due deliveries oldest first; a held lease is skipped until it passes; writes are fenced on it",
    run: Effect.gen(function* () {
      const repo = yield* W.WebhookDeliveryRepository
      yield* TestClock.setTime(10_000)
      const first = yield* appendEvent("https://a.example.com/")
      yield* TestClock.adjust("1 second")
      const second = yield* appendEvent("https://b.example.com/")
      yield* TestClock.adjust("1 second")
      const now = yield* DateTime.now

      // Not due yet: nothing is claimed.
      expect(yield* repo.claimDue(at(10_000 - 1), "w1", at(70_000), 10)).toEqual([])
      expect(yield* repo.claimDue(now, "w1", at(72_000), 0)).toEqual([])
      const claimed = yield* repo.claimDue(now, "w1", at(72_000), 1)
      expect(claimed.map((d) => [d.event_id, d.lease_owner])).toEqual([[first.event_id, "w1"]])
      expect(DateTime.toEpochMillis(claimed[0]!.lease_until!)).toBe(72_000)
      // Another worker gets the other one only; the leased one stays with w1.
      const other = yield* repo.claimDue(now, "w2", at(72_000), 10)
      expect(other.map((d) => d.event_id)).toEqual([second.event_id])
      expect(yield* repo.claimDue(now, "w3", at(72_000), 10)).toEqual([])

      // w1 goes quiet; past its lease w3 takes the delivery over.
      const takeover = yield* repo.claimDue(at(72_000), "w3", at(132_000), 10)
      expect(takeover.map((d) => [d.event_id, d.lease_owner])).toEqual([
        [first.event_id, "w3"],
        [second.event_id, "w3"]
      ])
      // w1 comes back: its attempt is recorded, its state is not (it lost the lease).
      const [lateAttempt, lateNext] = attemptOn(claimed[0]!, "w1", at(73_000), "failed")
      expect(yield* repo.complete(claimed[0]!, lateAttempt, lateNext)).toBe(false)
      const [attempt, next] = attemptOn(takeover[0]!, "w3", at(73_500), "delivered")
      expect(yield* repo.complete(takeover[0]!, attempt, next)).toBe(true)
      expect(Option.getOrThrow(yield* repo.find(first.event_id))).toEqual(next)
      expect(yield* repo.attemptsOf(first.event_id)).toEqual([lateAttempt, attempt])
      expect(yield* repo.attemptsOf(second.event_id)).toEqual([])
      // A fenced write cannot be repeated: the lease is gone.
      const repeated = new W.DeliveryAttempt({ ...attempt, attempt_id: `${attempt.attempt_id}-again` })
      expect(yield* repo.complete(takeover[0]!, repeated, next)).toBe(false)
      // Delivered is never claimed again; the other one is still w3's.
      expect(yield* repo.claimDue(at(75_000), "w4", at(135_000), 10)).toEqual([])

      // A failed attempt with a retry: due again at its next time, and claimable then.
      const [failed, retry] = attemptOn(takeover[1]!, "w3", at(74_000), "failed")
      expect(yield* repo.complete(takeover[1]!, failed, retry)).toBe(true)
      expect(yield* repo.attemptsOf(first.event_id)).toHaveLength(3)
      expect(yield* repo.claimDue(at(78_999), "w4", at(140_000), 10)).toEqual([])
      const again = yield* repo.claimDue(at(79_000), "w4", at(140_000), 10)
      expect(again.map((d) => [d.event_id, d.attempts, d.lease_owner])).toEqual([[second.event_id, 1, "w4"]])
    })
  },
  {
    name: "webhooks: two workers claiming at once never get the same delivery, and together get them all",
    run: Effect.gen(function* () {
      const repo = yield* W.WebhookDeliveryRepository
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const events = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => appendEvent(`https://hooks.example.com/${i}`)
      )
      const now = yield* DateTime.now
      const until = DateTime.addDuration(now, Duration.minutes(1))
      const worker = (owner: string) =>
        Effect.gen(function* () {
          const mine: Array<string> = []
          while (true) {
            const batch = yield* repo.claimDue(now, owner, until, 4)
            if (batch.length === 0) return mine
            for (const d of batch) {
              expect(d.lease_owner).toBe(owner)
              mine.push(d.event_id)
            }
          }
        })
      const [a, b, c] = yield* Effect.all([worker("a"), worker("b"), worker("c")], {
        concurrency: "unbounded"
      })
      const all = [...a!, ...b!, ...c!]
      expect(new Set(all).size).toBe(all.length)
      expect([...all].sort()).toEqual(events.map((e) => e.event_id).sort())
    })
  },
  {
    name: "webhooks: list filters and pages by event id; replay restarts the schedule of a delivered or dead delivery",
    run: Effect.gen(function* () {
      const repo = yield* W.WebhookDeliveryRepository
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const events: Array<Outbox.OutboxEvent> = []
      for (let i = 0; i < 5; i++) {
        events.push(yield* appendEvent(`https://hooks.example.com/${i}`))
        yield* TestClock.adjust("1 millis")
      }
      const other = yield* Outbox.makeEvent({
        type: "account.activated",
        user_id: u2,
        webhook_url: "https://partner.example.com/",
        payload: { message: "account_activated", user_id: u2 }
      })
      yield* (yield* Outbox.Outbox).append(other)
      const ids = events.map((e) => e.event_id)

      const page1 = yield* repo.list({ user_id: u1, limit: 3 })
      const page2 = yield* repo.list({ user_id: u1, after: page1[2]!.event_id, limit: 3 })
      expect([...page1, ...page2].map((d) => d.event_id)).toEqual(ids)
      expect((yield* repo.list({ limit: 100 })).map((d) => d.event_id)).toEqual([...ids, other.event_id])
      expect((yield* repo.list({ user_id: u2, limit: 10 })).map((d) => d.type)).toEqual(["account.activated"])

      // Deliver the first, kill the second (as a worker would after its last attempt).
      const now = yield* DateTime.now
      const claimed = yield* repo.claimDue(now, "w", DateTime.addDuration(now, Duration.minutes(1)), 2)
      const [ok, delivered] = attemptOn(claimed[0]!, "w", now, "delivered")
      yield* repo.complete(claimed[0]!, ok, delivered)
      const [bad, failed] = attemptOn(claimed[1]!, "w", now, "failed")
      const dead = new W.WebhookDelivery({
        ...failed,
        status: "dead",
        next_attempt_at: null,
        finished_at: now
      })
      yield* repo.complete(claimed[1]!, bad, dead)
      expect((yield* repo.list({ status: "delivered", limit: 10 })).map((d) => d.event_id)).toEqual([ids[0]])
      expect((yield* repo.list({ status: "dead", limit: 10 })).map((d) => d.event_id)).toEqual([ids[1]])
      expect(
        (yield* repo.list({ status: "pending", user_id: u1, limit: 10 })).map((d) => d.event_id)
      ).toEqual(ids.slice(2))

      yield* TestClock.adjust("1 hour")
      const later = yield* DateTime.now
      const replayed = Option.getOrThrow(yield* repo.replay(ids[1]!, later))
      expect(replayed).toEqual(W.replayOf(dead, later))
      expect(replayed).toMatchObject({ status: "pending", attempts: 1, round_attempts: 0, replays: 1 })
      expect(Option.getOrThrow(yield* repo.find(ids[1]!))).toEqual(replayed)
      expect(Option.getOrThrow(yield* repo.replay(ids[0]!, later)).status).toBe("pending")
      expect(yield* repo.replay(Ids.EventId.make("evt_nope"), later)).toEqual(Option.none())
      // Replaying drops a lease: the worker holding it can no longer write.
      const held = yield* repo.claimDue(later, "w2", DateTime.addDuration(later, Duration.minutes(1)), 1)
      expect(held.map((d) => d.event_id)).toEqual([ids[2]])
      yield* repo.replay(held[0]!.event_id, later)
      const [lost, lostNext] = attemptOn(held[0]!, "w2", later, "delivered")
      expect(yield* repo.complete(held[0]!, lost, lostNext)).toBe(false)
      expect(Option.getOrThrow(yield* repo.find(held[0]!.event_id)).status).toBe("pending")
      expect((yield* repo.attemptsOf(held[0]!.event_id)).map((a) => a.worker)).toEqual(["w2"])
    })
  },
  {
    name: "webhooks: list filters by event type and signer; a merchant's service sees its own, a partner also its own",
    run: Effect.gen(function* () {
      const repo = yield* W.WebhookDeliveryRepository
      const outbox = yield* Outbox.Outbox
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const p1 = Ids.PartnerId.make("par_one")
      const p2 = Ids.PartnerId.make("par_two")
      const own = yield* appendEvent("https://hooks.example.com/own")
      yield* TestClock.adjust("1 millis")
      const toPartner = (partner_id: Ids.PartnerId) =>
        Effect.gen(function* () {
          const event = yield* Outbox.makeEvent({
            type: "account.activated",
            user_id: u1,
            partner_id,
            webhook_url: `https://partner.example.com/${partner_id}`,
            payload: { message: "account_activated", user_id: u1 }
          })
          yield* outbox.append(event)
          yield* TestClock.adjust("1 millis")
          return event
        })
      const forP1 = yield* toPartner(p1)
      const forP2 = yield* toPartner(p2)
      const foreign = yield* Outbox.makeEvent({
        type: "payment.updated",
        user_id: u2,
        webhook_url: "https://hooks.example.com/u2",
        payload: { message: "x" }
      })
      yield* outbox.append(foreign)
      const ids = (query: Omit<W.ListQuery, "limit">) =>
        Effect.map(repo.list({ ...query, limit: 10 }), (page) => page.map((d) => d.event_id))

      expect(yield* ids({ type: "account.activated" })).toEqual([forP1.event_id, forP2.event_id])
      expect(yield* ids({ type: "payment.updated", user_id: u1 })).toEqual([own.event_id])
      expect(yield* ids({ signers: [{ kind: "partner", partner_id: p2 }] })).toEqual([forP2.event_id])
      expect(yield* ids({ signers: [] })).toEqual([])
      expect(
        yield* ids({
          user_id: u1,
          signers: [
            { kind: "merchant", user_id: u1 },
            { kind: "partner", partner_id: p1 }
          ]
        })
      ).toEqual([own.event_id, forP1.event_id])

      const service = yield* Effect.provide(
        WebhookDeliveries.WebhookDeliveries,
        WebhookDeliveries.WebhookDeliveries.Default.pipe(
          Layer.provide(Layer.succeed(W.WebhookDeliveryRepository, repo))
        )
      )
      const merchant = Principal.Principal.User({ user_id: u1 })
      const partner = Principal.Principal.Partner({ user_id: u1, partner_id: p1 })
      const listed = (principal: Principal.Principal) =>
        Effect.map(service.list(principal, {}), (page) => page.deliveries.map((d) => d.delivery.event_id))
      expect(yield* listed(merchant)).toEqual([own.event_id])
      expect(yield* listed(partner)).toEqual([own.event_id, forP1.event_id])
      const first = yield* service.list(partner, { limit: 1 })
      expect(first.next_after).toEqual(Option.some(own.event_id))
      const rest = yield* service.list(partner, { limit: 1, after: own.event_id })
      expect(rest.deliveries.map((d) => d.delivery.event_id)).toEqual([forP1.event_id])
      expect(rest.next_after).toEqual(Option.none())
      // Another signer's delivery about the same account, or another account's: not found.
      for (const [principal, id] of [
        [merchant, forP1.event_id],
        [partner, forP2.event_id],
        [merchant, foreign.event_id]
      ] as const) {
        const error = yield* Effect.flip(service.replay(principal, id))
        expect(error).toMatchObject({ _tag: "NotFound", key: "webhook_delivery.not.found" })
      }
      expect(Option.getOrThrow(yield* repo.find(forP2.event_id)).replays).toBe(0)
      const replayed = yield* service.replay(partner, forP1.event_id)
      expect(replayed.delivery).toMatchObject({ status: "pending", replays: 1 })
      expect(yield* Effect.flip(service.list(merchant, { limit: 101 }))).toMatchObject({
        _tag: "InvalidInput",
        field: "limit"
      })
    })
  }
]
