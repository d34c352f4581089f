/**
 * Payout schedules and payouts: the port contract (ids, listings, due schedules, pending payouts,
 * exact amounts) and the engine flows over it (create/patch by a partner, runs through
 * `Jobs.runDue` exactly once under concurrent calls, refused and unknown bank outcomes).
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  BankProvider,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Payments,
  Principal,
  SandboxBank,
  Schedule,
  ScheduleRepository,
  Schedules,
  Transactor,
  Transfers,
  UserRepository
} from "@cobro/core"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import type { EngineContext, Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1, u2 } from "./fixtures.js"

export const p1 = Ids.PartnerId.make("p1")
const p2 = Ids.PartnerId.make("p2")
export const asPartner = (partner_id: Ids.PartnerId, user_id: Ids.UserId = u1) =>
  Principal.Principal.Partner({ user_id, partner_id })
const asUser = (user_id: Ids.UserId = u1) => Principal.Principal.User({ user_id })

/** The merchant's own bank account (the fixtures' CUIT), known by CBU and alias. */
const merchantCuit = BankAccount.makeCuit("30", "71234567")
const ownCbu = BankAccount.makeCbu("2850590", "0000000012345")
const ownAlias = "tienda.uno.banco"
const address = (s: string) => BankAccount.PayoutAddress.make(s)

/** Wednesday 2026-01-28 12:00 in Buenos Aires. */
const start = Date.UTC(2026, 0, 28, 15, 0)

const at = (ms: number) => DateTime.unsafeMake(ms)
const sid = (s: string) => Ids.ScheduleId.make(s)
const pid = (s: string) => Ids.PayoutId.make(s)

const makeSchedule = (
  id: string,
  fields: {
    readonly user?: Ids.UserId
    readonly partner?: Ids.PartnerId
    readonly created: number
    readonly next: number
    readonly status?: Schedule.ScheduleStatus
  }
) =>
  new Schedule.PayoutSchedule({
    schedule_id: sid(id),
    schedule_type: "payout",
    frequency: "daily",
    schedule_status: fields.status ?? "active",
    next_run_date: at(fields.next),
    creation_timestamp: at(fields.created),
    user_id: fields.user ?? u1,
    payload: new Schedule.SchedulePayload({ address: address(ownCbu) }),
    partner_id: fields.partner ?? p1,
    last_modified_timestamp: at(fields.created)
  })

const makePayout = (
  id: string,
  fields: {
    readonly schedule: string
    readonly created: number
    readonly attempted: number
    readonly status?: Schedule.PayoutStatus
    readonly minor?: bigint
  }
) =>
  new Schedule.Payout({
    payout_id: pid(id),
    schedule_id: sid(fields.schedule),
    user_id: u1,
    address: address(ownAlias),
    amount: ars(fields.minor ?? 1000n),
    payout_status: fields.status ?? "PENDING",
    bank_transaction_id: null,
    error: null,
    attempts: 1,
    attempted_at: at(fields.attempted),
    creation_timestamp: at(fields.created),
    last_modified_timestamp: at(fields.created)
  })

const keyOf = (e: unknown) => (e as { readonly key?: string }).key
const ids = (rows: ReadonlyArray<{ readonly schedule_id: string }>) => rows.map((r) => r.schedule_id)
const payoutIds = (rows: ReadonlyArray<Schedule.Payout>) => rows.map((r) => r.payout_id)

/** The merchant u1 at the schedules' start time, with its own bank account known to the bank. */
export const setup: Effect.Effect<void, unknown, EngineContext> = Effect.gen(function* () {
  yield* TestClock.setTime(start)
  yield* seedUser()
  const bank = yield* SandboxBank.SandboxBank
  yield* bank.registerHolder({ account: ownCbu, alias: ownAlias, cuit: merchantCuit, name: "Tienda Uno SA" })
})

export const createReq = (frequency: string, to: string = ownCbu) =>
  Schema.decodeUnknownSync(Schedule.CreateScheduleRequest)({
    schedule_type: "payout",
    frequency,
    payload: { address: to }
  })
const patchReq = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Schedule.PatchScheduleRequest)(fields)

/** Puts money in the merchant's available balance: a payment paid by transfer. */
export const fund = (external_id: string, minor: bigint): Effect.Effect<void, unknown, EngineContext> =>
  Effect.gen(function* () {
    const payment = yield* (yield* Payments.Payments).create(
      createRequest({ external_id, price: { amount: Number(minor) / 100, currency: "ARS" } })
    )
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu: payment.cvu,
      amount: ars(minor)
    })
    yield* (yield* Transfers.Transfers).ingest(transfer)
  })

export const balances = Effect.gen(function* () {
  const ledger = yield* Ledger.Ledger
  return {
    available: (yield* ledger.balance(LedgerAccount.merchantAvailable(u1))).minor,
    inTransit: (yield* ledger.balance(LedgerAccount.merchantInTransit(u1))).minor
  }
})

const runDue = Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
const sent = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)
const payoutsOf = (id: Ids.ScheduleId) => Effect.flatMap(Schedules.Schedules, (s) => s.payouts(asUser(), id))
const reload = (id: Ids.ScheduleId) => Effect.flatMap(Schedules.Schedules, (s) => s.get(asUser(), id))
export const toNextRun = (id: Ids.ScheduleId): Effect.Effect<void, unknown, EngineContext> =>
  Effect.flatMap(reload(id), (s) => TestClock.setTime(DateTime.toEpochMillis(s.next_run_date)))
const iso = (t: DateTime.DateTime) => DateTime.formatIso(t)

export const scheduleScenarios: ReadonlyArray<Scenario> = [
  {
    name: "schedules: insert, reads, ids taken, listings by user and partner, due schedules in run order",
    run: Effect.gen(function* () {
      const repo = yield* ScheduleRepository.ScheduleRepository
      const t0 = Date.UTC(2026, 0, 1)
      const a = makeSchedule("sch_b", { created: t0, next: t0 + 5000 })
      yield* repo.insert(a)
      expect(Option.getOrThrow(yield* repo.findById(a.schedule_id))).toEqual(a)
      expect(Option.getOrThrow(yield* repo.findByIdForUpdate(a.schedule_id))).toEqual(a)
      expect(yield* repo.findById(sid("sch_nope"))).toEqual(Option.none())
      expect(keyOf(yield* Effect.flip(repo.insert(a)))).toBe("schedule.id.taken")
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect(keyOf(yield* Effect.flip(repo.insert(a)))).toBe("schedule.id.taken")
          yield* repo.insert(makeSchedule("sch_A", { created: t0, next: t0 + 5000, partner: p2 }))
        })
      )
      // Same creation millisecond: byte order of the ids.
      yield* repo.insert(makeSchedule("sch_a", { created: t0, next: t0 + 1000 }))
      yield* repo.insert(makeSchedule("sch_0", { created: t0 + 1, next: t0, partner: p2 }))
      yield* repo.insert(makeSchedule("sch_off", { created: t0 + 2, next: t0, status: "inactive" }))
      yield* repo.insert(makeSchedule("sch_u2", { created: t0 - 1, next: t0, user: u2 }))
      expect(ids(yield* repo.listByUser(u1))).toEqual(["sch_A", "sch_a", "sch_b", "sch_0", "sch_off"])
      expect(ids(yield* repo.listByUserAndPartner(u1, p1))).toEqual(["sch_a", "sch_b", "sch_off"])
      expect(ids(yield* repo.listByUserAndPartner(u1, p2))).toEqual(["sch_A", "sch_0"])
      expect(ids(yield* repo.listByUserAndPartner(u2, p2))).toEqual([])
      expect(yield* repo.listByUser(Ids.UserId.make("nobody"))).toEqual([])

      // Due: active and next_run_date <= now, earliest first (ties by id), limited.
      expect(ids(yield* repo.findDue(at(t0 - 1), 10))).toEqual([])
      expect(ids(yield* repo.findDue(at(t0), 10))).toEqual(["sch_0", "sch_u2"])
      expect(ids(yield* repo.findDue(at(t0 + 5000), 10))).toEqual([
        "sch_0",
        "sch_u2",
        "sch_a",
        "sch_A",
        "sch_b"
      ])
      expect(ids(yield* repo.findDue(at(t0 + 5000), 3))).toEqual(["sch_0", "sch_u2", "sch_a"])
      // Updates move a schedule in and out of the due list.
      const b = Option.getOrThrow(yield* repo.findById(sid("sch_0")))
      yield* repo.update(new Schedule.PayoutSchedule({ ...b, next_run_date: at(t0 + 9000) }))
      const u2s = Option.getOrThrow(yield* repo.findById(sid("sch_u2")))
      yield* repo.update(new Schedule.PayoutSchedule({ ...u2s, schedule_status: "inactive" }))
      const off = Option.getOrThrow(yield* repo.findById(sid("sch_off")))
      const on = new Schedule.PayoutSchedule({ ...off, schedule_status: "active", frequency: "weekly" })
      yield* repo.update(on)
      expect(Option.getOrThrow(yield* repo.findById(sid("sch_off")))).toEqual(on)
      expect(ids(yield* repo.findDue(at(t0 + 5000), 10))).toEqual(["sch_off", "sch_a", "sch_A", "sch_b"])
      expect(ids(yield* repo.findDue(at(t0 + 9000), 10))).toEqual([
        "sch_off",
        "sch_a",
        "sch_A",
        "sch_b",
        "sch_0"
      ])
      // Updating a schedule that does not exist changes nothing.
      yield* repo.update(makeSchedule("sch_ghost", { created: t0, next: t0 }))
      expect(yield* repo.findById(sid("sch_ghost"))).toEqual(Option.none())
    })
  },
  {
    name: "schedules: payouts keep exact amounts, list per schedule, and pending ones are found by attempt time",
    run: Effect.gen(function* () {
      const repo = yield* ScheduleRepository.ScheduleRepository
      const t0 = Date.UTC(2026, 0, 1)
      yield* repo.insert(makeSchedule("sch_1", { created: t0, next: t0 }))
      yield* repo.insert(makeSchedule("sch_2", { created: t0, next: t0 }))
      // Beyond 2^53 minor units: stored exactly.
      const big = makePayout("po_b", {
        schedule: "sch_1",
        created: t0,
        attempted: t0 + 300,
        minor: 9007199254740993n
      })
      yield* repo.insertPayout(big)
      expect(Option.getOrThrow(yield* repo.findPayoutById(big.payout_id))).toEqual(big)
      expect(Option.getOrThrow(yield* repo.findPayoutByIdForUpdate(big.payout_id)).amount.minor).toBe(
        9007199254740993n
      )
      expect(yield* repo.findPayoutById(pid("po_nope"))).toEqual(Option.none())
      expect(keyOf(yield* Effect.flip(repo.insertPayout(big)))).toBe("payout.id.taken")
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect(keyOf(yield* Effect.flip(repo.insertPayout(big)))).toBe("payout.id.taken")
          yield* repo.insertPayout(
            makePayout("po_A", { schedule: "sch_1", created: t0, attempted: t0 + 100 })
          )
        })
      )
      yield* repo.insertPayout(makePayout("po_a", { schedule: "sch_1", created: t0, attempted: t0 + 100 }))
      yield* repo.insertPayout(makePayout("po_0", { schedule: "sch_1", created: t0 + 1, attempted: t0 }))
      yield* repo.insertPayout(
        makePayout("po_done", { schedule: "sch_1", created: t0 + 2, attempted: t0, status: "SUCCESS" })
      )
      yield* repo.insertPayout(
        makePayout("po_other", { schedule: "sch_2", created: t0, attempted: t0 + 200 })
      )
      expect(payoutIds(yield* repo.listPayouts(sid("sch_1")))).toEqual([
        "po_A",
        "po_a",
        "po_b",
        "po_0",
        "po_done"
      ])
      expect(payoutIds(yield* repo.listPayouts(sid("sch_2")))).toEqual(["po_other"])
      expect(yield* repo.listPayouts(sid("sch_none"))).toEqual([])

      // PENDING only, attempted at or before the cutoff, oldest attempt first (ties by id).
      expect(payoutIds(yield* repo.findPendingPayouts(at(t0 - 1), 10))).toEqual([])
      expect(payoutIds(yield* repo.findPendingPayouts(at(t0 + 100), 10))).toEqual(["po_0", "po_A", "po_a"])
      expect(payoutIds(yield* repo.findPendingPayouts(at(t0 + 1000), 10))).toEqual([
        "po_0",
        "po_A",
        "po_a",
        "po_other",
        "po_b"
      ])
      expect(payoutIds(yield* repo.findPendingPayouts(at(t0 + 1000), 2))).toEqual(["po_0", "po_A"])
      // A new attempt moves it; a final status takes it out.
      const a = Option.getOrThrow(yield* repo.findPayoutById(pid("po_A")))
      const retried = new Schedule.Payout({
        ...a,
        attempts: 2,
        attempted_at: at(t0 + 500),
        error: "unavailable: x"
      })
      yield* repo.updatePayout(retried)
      expect(Option.getOrThrow(yield* repo.findPayoutById(pid("po_A")))).toEqual(retried)
      const zero = Option.getOrThrow(yield* repo.findPayoutById(pid("po_0")))
      yield* repo.updatePayout(
        new Schedule.Payout({
          ...zero,
          payout_status: "SUCCESS",
          bank_transaction_id: Ids.BankTransactionId.make("bt-9")
        })
      )
      expect(payoutIds(yield* repo.findPendingPayouts(at(t0 + 1000), 10))).toEqual([
        "po_a",
        "po_other",
        "po_b",
        "po_A"
      ])
      expect(Option.getOrThrow(yield* repo.findPayoutById(pid("po_0"))).bank_transaction_id).toBe("bt-9")
      yield* repo.updatePayout(makePayout("po_ghost", { schedule: "sch_1", created: t0, attempted: t0 }))
      expect(yield* repo.findPayoutById(pid("po_ghost"))).toEqual(Option.none())
    })
  },
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

      // The bank comes back: not resent before payoutRetryAfter, then resent with the same reference.
      yield* bank.clearFailures(ownCbu)
      expect((yield* runDue).payouts.sent).toBe(0)
      const provider = yield* BankProvider.BankProvider
      yield* provider.sendTransfer({ to: ownCbu, amount: pending.amount, reference: pending.payout_id })
      yield* TestClock.adjust(Schedules.payoutRetryAfter)
      const reports = yield* Effect.all([runDue, runDue, runDue], { concurrency: "unbounded" })
      expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
      const done = (yield* payoutsOf(s.schedule_id))[1]!
      expect(done).toMatchObject({ payout_id: pending.payout_id, payout_status: "SUCCESS", attempts: 2 })
      expect(yield* repo.findPendingPayouts(yield* DateTime.now, 10)).toEqual([])
      expect(yield* sent).toHaveLength(1)
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* expectLedgerOk
    })
  }
]
