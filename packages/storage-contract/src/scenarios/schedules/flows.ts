/** Payout schedules: the engine flows over the repository. */
import { expect } from "@effect/vitest"
import { BankProvider, Ids, Money, Schedule, Schedules } from "@cobro/core"
import { ScheduleRepository, UserRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import type { Scenario } from "../../Scenario.js"
import { expectLedgerOk, runDue, seedUser, u1, u2 } from "../fixtures.js"
import {
  p1,
  p2,
  asPartner,
  asUser,
  ownCbu,
  ownAlias,
  ids,
  payoutIds,
  setup,
  createReq,
  fund,
  balances,
  reload,
  toNextRun
} from "./helpers.js"

const patchReq = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Schedule.PatchScheduleRequest)(fields)

const sent = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)

const payoutsOf = (id: Ids.ScheduleId) => Effect.flatMap(Schedules.Schedules, (s) => s.payouts(asUser(), id))

const iso = (t: DateTime.DateTime) => DateTime.formatIso(t)

export const scheduleFlowScenarios: ReadonlyArray<Scenario> = [
  {
    name: "schedules flow: a partner creates and patches schedules; the account's payout_schedule follows",
    run: Effect.gen(function* () {
      yield* setup
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const schedules = yield* Schedules.Schedules
      const users = yield* UserRepository.UserRepository
      const account = Effect.map(users.findById(u1), (u) => Option.getOrThrow(u).payout_schedule)
      const daily = yield* schedules.create(asPartner(p1), createReq("daily"))
      expect(iso(daily.next_run_date)).toBe("2026-01-29T03:00:00.000Z")
      expect(
        Option.getOrThrow(yield* (yield* ScheduleRepository.ScheduleRepository).findById(daily.schedule_id))
      ).toEqual(daily)
      yield* TestClock.adjust("1 minute")
      const weekly = yield* schedules.create(asPartner(p2), createReq("weekly", ownAlias))
      expect(yield* account).toMatchObject({ address: ownAlias, frequency: "weekly" })
      expect(ids(yield* schedules.list(asPartner(p1)))).toEqual([daily.schedule_id])
      expect(ids(yield* schedules.list(asUser()))).toEqual([daily.schedule_id, weekly.schedule_id])
      expect(yield* schedules.list(asPartner(p1, u2))).toEqual([])
      const forbidden = yield* Effect.flip(
        schedules.patch(asPartner(p2), daily.schedule_id, patchReq({ schedule_status: "inactive" }))
      )
      expect(forbidden).toMatchObject({ _tag: "NotPermitted", key: "schedule.forbidden" })

      const monthly = yield* schedules.patch(
        asPartner(p1),
        daily.schedule_id,
        patchReq({ frequency: "monthly" })
      )
      expect(iso(monthly.next_run_date)).toBe("2026-02-01T03:00:00.000Z")
      expect(yield* account).toMatchObject({ address: ownCbu, frequency: "monthly" })
      yield* schedules.patch(asPartner(p1), daily.schedule_id, patchReq({ schedule_status: "inactive" }))
      expect(yield* account).toMatchObject({ address: ownAlias, frequency: "weekly" })
      yield* schedules.patch(asPartner(p2), weekly.schedule_id, patchReq({ schedule_status: "inactive" }))
      expect(yield* account).toBeNull()
      // Inactive schedules never come due.
      yield* TestClock.adjust("40 days")
      expect((yield* runDue).payouts.runs).toBe(0)
      // Reactivated after its date passed: it waits for its next slot.
      const on = yield* schedules.patch(
        asPartner(p1),
        daily.schedule_id,
        patchReq({ schedule_status: "active" })
      )
      expect(iso(on.next_run_date)).toBe("2026-04-01T03:00:00.000Z")
      expect(yield* reload(daily.schedule_id)).toEqual(on)
      expect(yield* account).toMatchObject({ address: ownCbu, frequency: "monthly" })
      yield* expectLedgerOk
    })
  },
  {
    name: "schedules flow: concurrent runDue calls run a due schedule exactly once and sweep the balance",
    run: Effect.gen(function* () {
      yield* setup
      yield* fund("o-1", 100000n)
      const schedules = yield* Schedules.Schedules
      const a = yield* schedules.create(asPartner(p1), createReq("bi_daily"))
      const b = yield* schedules.create(asPartner(p2), createReq("daily", ownAlias))
      yield* TestClock.setTime(Date.UTC(2026, 0, 29, 2, 59))
      expect((yield* runDue).payouts.runs).toBe(0)

      yield* toNextRun(a.schedule_id)
      const reports = yield* Effect.all(
        Array.from({ length: 6 }, () => runDue),
        { concurrency: "unbounded" }
      )
      // Both schedules came due at 00:00; the first run swept everything, the second had nothing.
      expect(reports.reduce((n, r) => n + r.payouts.runs, 0)).toBe(2)
      expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
      expect(reports.reduce((n, r) => n + r.payouts.skipped, 0)).toBe(1)
      expect(reports.reduce((n, r) => n + r.payouts.errors, 0)).toBe(0)
      const payouts = [...(yield* payoutsOf(a.schedule_id)), ...(yield* payoutsOf(b.schedule_id))]
      expect(payouts).toHaveLength(1)
      expect(payouts[0]).toMatchObject({ payout_status: "SUCCESS", attempts: 1 })
      expect(payouts[0]!.amount).toEqual(Money.make(98790n, "ARS"))
      const transfers = yield* sent
      expect(transfers).toHaveLength(1)
      expect(transfers[0]).toMatchObject({ reference: payouts[0]!.payout_id })
      expect(payouts[0]!.bank_transaction_id).toBe(transfers[0]!.bank_transaction_id)
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      expect(iso((yield* reload(a.schedule_id)).next_run_date)).toBe("2026-01-29T15:00:00.000Z")
      expect(iso((yield* reload(b.schedule_id)).next_run_date)).toBe("2026-01-30T03:00:00.000Z")

      // More money, the next slot of one schedule, another burst: one more transfer.
      yield* fund("o-2", 20000n)
      yield* toNextRun(a.schedule_id)
      yield* Effect.all(
        Array.from({ length: 5 }, () => runDue),
        { concurrency: "unbounded" }
      )
      expect((yield* runDue).payouts.runs).toBe(0)
      expect(yield* sent).toHaveLength(2)
      expect((yield* sent)[1]!.amount).toEqual(Money.make(19758n, "ARS"))
      // The first sweep went with whichever schedule ran first; this one with `a`.
      const all = [...(yield* payoutsOf(a.schedule_id)), ...(yield* payoutsOf(b.schedule_id))]
      expect(all.map((p) => p.payout_status)).toEqual(["SUCCESS", "SUCCESS"])
      expect(all.map((p) => p.amount.minor).sort()).toEqual([19758n, 98790n])
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* expectLedgerOk
    })
  },
  {
    name: "schedules flow: refused payouts fail and return the money; unknown outcomes stay pending and are resent",
    run: Effect.gen(function* () {
      yield* setup
      yield* fund("o-1", 100000n)
      const bank = yield* SandboxBank.SandboxBank
      const schedules = yield* Schedules.Schedules
      const s = yield* schedules.create(asPartner(p1), createReq("daily"))
      const { available } = yield* balances

      yield* bank.failTransfersTo(ownCbu, "rejected")
      yield* toNextRun(s.schedule_id)
      expect((yield* runDue).payouts).toMatchObject({ runs: 1, failed: 1, sent: 0 })
      const [failed] = yield* payoutsOf(s.schedule_id)
      expect(failed).toMatchObject({ payout_status: "FAILED" })
      expect(failed!.error).toContain("rejected")
      expect(yield* balances).toEqual({ available, inTransit: 0n })
      yield* expectLedgerOk

      yield* bank.failTransfersTo(ownCbu, "unavailable")
      yield* toNextRun(s.schedule_id)
      expect((yield* runDue).payouts).toMatchObject({ runs: 1, retrying: 1 })
      const pending = (yield* payoutsOf(s.schedule_id))[1]!
      expect(pending).toMatchObject({ payout_status: "PENDING", attempts: 1 })
      expect(yield* balances).toEqual({ available: 0n, inTransit: available })
      const repo = yield* ScheduleRepository.ScheduleRepository
      const now = yield* DateTime.now
      expect(payoutIds(yield* repo.findPendingPayouts(now, 10))).toEqual([pending.payout_id])

      // The bank comes back: not asked before payoutRetryAfter; then its status shows the transfer
      // done, so it is settled without sending it again (attempts stays 1).
      yield* bank.clearFailures(ownCbu)
      expect((yield* runDue).payouts.sent).toBe(0)
      const provider = yield* BankProvider.BankProvider
      yield* provider.sendTransfer({ to: ownCbu, amount: pending.amount, reference: pending.payout_id })
      yield* TestClock.adjust(Schedules.payoutRetryAfter)
      const reports = yield* Effect.all([runDue, runDue, runDue], { concurrency: "unbounded" })
      expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
      const done = (yield* payoutsOf(s.schedule_id))[1]!
      expect(done).toMatchObject({ payout_id: pending.payout_id, payout_status: "SUCCESS", attempts: 1 })
      expect(yield* repo.findPendingPayouts(yield* DateTime.now, 10)).toEqual([])
      expect(yield* sent).toHaveLength(1)
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* expectLedgerOk
    })
  }
]
