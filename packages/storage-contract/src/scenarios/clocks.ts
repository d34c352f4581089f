/**
 * The sandbox's test clocks: the per-merchant offsets (`TestClockRepository`), and the due-work
 * queries scoped to one merchant or to everyone but a few (`DueScope`), which the passes over a
 * moved merchant's work use.
 */
import { expect } from "@effect/vitest"
import { DueScope, Ids, Outbox, Payments } from "@cobro/core"
import { PaymentRepository, TestClockRepository, WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { DateTime, Duration, Effect, Exit, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { createRequest, seedUser, u1, u2 } from "./fixtures.js"

const u3 = Ids.UserId.make("u3")
const ms = (d: Duration.Duration) => Duration.toMillis(d)

export const clockScenarios: ReadonlyArray<Scenario> = [
  {
    name: "test clocks: one offset per merchant, added atomically, raised never lowered, the moved ones listed",
    run: Effect.gen(function* () {
      const repo = yield* TestClockRepository.TestClockRepository
      expect(yield* repo.get(u1)).toEqual({ offset: Duration.zero, movedAt: undefined })
      expect(yield* repo.moved).toEqual([])
      expect(ms(yield* repo.advance(u1, Duration.seconds(90), 1_000))).toBe(90_000)
      // Concurrent advances all count.
      yield* Effect.all(
        Array.from({ length: 10 }, () => repo.advance(u1, Duration.seconds(1), 2_000)),
        { concurrency: "unbounded" }
      )
      expect(yield* repo.get(u1)).toEqual({ offset: Duration.millis(100_000), movedAt: 2_000 })
      // Another merchant's clock did not move.
      expect(ms((yield* repo.get(u2)).offset)).toBe(0)
      // Raising: to the furthest instant asked, never back; concurrent raises end at the maximum.
      expect(ms(yield* repo.raiseTo(u2, Duration.seconds(50), 3_000))).toBe(50_000)
      expect(ms(yield* repo.raiseTo(u2, Duration.seconds(20), 4_000))).toBe(50_000)
      // A raise that does not rise leaves the time of the last move.
      expect((yield* repo.get(u2)).movedAt).toBe(3_000)
      yield* Effect.all(
        [70, 60, 80, 65].map((s) => repo.raiseTo(u2, Duration.seconds(s), 5_000)),
        { concurrency: "unbounded" }
      )
      expect(ms((yield* repo.get(u2)).offset)).toBe(80_000)
      expect(ms(yield* repo.raiseTo(u1, Duration.seconds(20), 6_000))).toBe(100_000)
      // Only forward, by a finite amount.
      for (const bad of [Duration.zero, Duration.infinity]) {
        expect(Exit.isFailure(yield* Effect.exit(repo.advance(u3, bad, 7_000)))).toBe(true)
        expect(Exit.isFailure(yield* Effect.exit(repo.raiseTo(u3, bad, 7_000)))).toBe(true)
      }
      expect(yield* repo.get(u3)).toEqual({ offset: Duration.zero, movedAt: undefined })
      const moved = yield* repo.moved
      expect(moved.map((c) => [c.user_id, ms(c.offset)])).toEqual([
        [u1, 100_000],
        [u2, 80_000]
      ])
    })
  },
  {
    name: "test clocks: due payments and webhook deliveries of one merchant, or of everyone but some",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const payments = yield* Payments.Payments
      const repo = yield* PaymentRepository.PaymentRepository
      const a = yield* payments.create(createRequest({ external_id: "a" }))
      yield* TestClock.adjust("1 second")
      const b = yield* payments.create(createRequest({ user_id: "u2", external_id: "b" }))
      yield* TestClock.adjust("1 second")
      const c = yield* payments.create(createRequest({ external_id: "c" }))
      const later = DateTime.addDuration(c.expiration_timestamp, Duration.seconds(1))
      const due = (scope?: DueScope.DueScope) =>
        Effect.map(repo.findDue(later, 10, scope), (ps) => ps.map((p) => p.external_id))
      expect(yield* due()).toEqual(["a", "b", "c"])
      expect(yield* due(DueScope.everyone)).toEqual(["a", "b", "c"])
      expect(yield* due(DueScope.only(u1))).toEqual(["a", "c"])
      expect(yield* due(DueScope.only(u2))).toEqual(["b"])
      expect(yield* due(DueScope.only(u3))).toEqual([])
      expect(yield* due(DueScope.allBut([u1]))).toEqual(["b"])
      expect(yield* due(DueScope.allBut([u1, u2]))).toEqual([])
      expect(yield* due(DueScope.allBut([u3]))).toEqual(["a", "b", "c"])
      // The limit applies within the scope.
      expect((yield* repo.findDue(later, 1, DueScope.only(u2))).map((p) => p.id)).toEqual([b.id])
      expect((yield* repo.findDue(a.expiration_timestamp, 10, DueScope.only(u2))).map((p) => p.id)).toEqual(
        []
      )

      const outbox = yield* Outbox.Outbox
      const deliveries = yield* W.WebhookDeliveryRepository
      for (const user of [u1, u2, u1]) {
        yield* outbox.append(
          yield* Outbox.makeEvent({
            type: "payment.updated",
            user_id: user,
            webhook_url: `https://${user}.example.com/hooks`,
            payload: { message: "x" }
          })
        )
        yield* TestClock.adjust("1 second")
      }
      const now = yield* DateTime.now
      const until = DateTime.addDuration(now, Duration.minutes(1))
      const pending = (d: ReadonlyArray<W.WebhookDelivery>) =>
        d.filter((x) => x.webhook_url.startsWith("https://u"))
      expect(yield* deliveries.claimDue(now, "w1", until, 10, { scope: DueScope.only(u3) })).toEqual([])
      const ofU2 = pending(yield* deliveries.claimDue(now, "w1", until, 10, { scope: DueScope.only(u2) }))
      expect(ofU2.map((d) => d.user_id)).toEqual([u2])
      expect(yield* deliveries.claimDue(now, "w2", until, 10, { scope: DueScope.only(u2) })).toEqual([])
      const others = pending(
        yield* deliveries.claimDue(now, "w2", until, 10, { scope: DueScope.allBut([u2]) })
      )
      expect(others.map((d) => d.user_id)).toEqual([u1, u1])
      expect(yield* deliveries.claimDue(now, "w3", until, 10)).toEqual([])
      // Leases are compared with `leaseNow` (real time), not with the due time `now` (a merchant's
      // clock, which may have jumped past the lease).
      const farAhead = DateTime.addDuration(now, Duration.days(9))
      expect(
        yield* deliveries.claimDue(farAhead, "w4", until, 10, { scope: DueScope.only(u2), leaseNow: now })
      ).toEqual([])
      const lapsed = yield* deliveries.claimDue(farAhead, "w4", farAhead, 10, {
        scope: DueScope.only(u2),
        leaseNow: until
      })
      expect(lapsed.map((d) => [d.event_id, d.lease_owner])).toEqual([[ofU2[0]!.event_id, "w4"]])
    })
  }
]
