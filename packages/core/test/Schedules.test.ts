import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
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
  Schedule,
  Schedules,
  Transfers,
  User
} from "../src/index.js"
import { OutgoingTransferRepository, UserRepository } from "../src/ports.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { ars, createRequest, expectLedgerOk, merchantCuit, seedUser } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")
const p1 = Ids.PartnerId.make("p1")
const p2 = Ids.PartnerId.make("p2")
const asPartner = (partner_id: Ids.PartnerId, user_id: Ids.UserId = u1) =>
  Principal.Principal.Partner({ user_id, partner_id })
const asUser = (user_id: Ids.UserId = u1) => Principal.Principal.User({ user_id })

/** The merchant's own bank account (same CUIT), known by CBU and alias. */
const ownCbu = BankAccount.makeCbu("2850590", "0000000012345")
const ownAlias = "tienda.uno.banco"
/** Somebody else's account. */
const otherCbu = BankAccount.makeCbu("0170099", "0000000067890")

/** Wednesday 2026-01-28 12:00 in Buenos Aires. */
const start = Date.UTC(2026, 0, 28, 15, 0)

const setup = Effect.gen(function* () {
  yield* TestClock.setTime(start)
  yield* seedUser()
  const bank = yield* SandboxBank.SandboxBank
  yield* bank.registerHolder({ account: ownCbu, alias: ownAlias, cuit: merchantCuit, name: "Tienda Uno SA" })
  yield* bank.registerHolder({
    account: otherCbu,
    cuit: BankAccount.makeCuit("20", "12345678"),
    name: "Otra Persona"
  })
})

const createReq = (frequency: string, address: string = ownCbu) =>
  Schema.decodeUnknownSync(Schedule.CreateScheduleRequest)({
    schedule_type: "payout",
    frequency,
    payload: { address }
  })
const patchReq = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Schedule.PatchScheduleRequest)(fields)

/** Puts money in the merchant's available balance: a payment paid by transfer. */
let orders = 0
const fund = (amount: string) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const payment = yield* payments.create(
      createRequest({ external_id: `order-${++orders}`, price: { amount: Number(amount), currency: "ARS" } })
    )
    const bank = yield* SandboxBank.SandboxBank
    const transfer = yield* bank.simulateIncoming({ cvu: payment.cvu, amount: ars(amount) })
    yield* (yield* Transfers.Transfers).ingest(transfer)
  })

const balances = Effect.gen(function* () {
  const ledger = yield* Ledger.Ledger
  return {
    available: (yield* ledger.balance(LedgerAccount.merchantAvailable(u1))).minor,
    inTransit: (yield* ledger.balance(LedgerAccount.merchantInTransit(u1))).minor
  }
})

const runDue = Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
const sent = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)
const iso = (t: DateTime.DateTime) => DateTime.formatIso(t)
const payoutsOf = (id: Ids.ScheduleId) =>
  Effect.flatMap(Schedules.Schedules, (s) => s.payouts(asPartner(p1), id))
const reload = (id: Ids.ScheduleId) => Effect.flatMap(Schedules.Schedules, (s) => s.get(asPartner(p1), id))
/** Moves the clock to the schedule's next run. */
const toNextRun = (id: Ids.ScheduleId) =>
  Effect.flatMap(reload(id), (s) => TestClock.setTime(DateTime.toEpochMillis(s.next_run_date)))

describe("Schedules.create", () => {
  it.effect("creates an active payout schedule whose next run is the next Buenos Aires slot", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const daily = yield* schedules.create(asPartner(p1), createReq("daily"))
        expect(daily.schedule_type).toBe("payout")
        expect(daily.schedule_status).toBe("active")
        expect(daily.user_id).toBe(u1)
        expect(daily.partner_id).toBe(p1)
        expect(daily.payload.address).toBe(ownCbu)
        expect(iso(daily.creation_timestamp)).toBe("2026-01-28T15:00:00.000Z")
        expect(iso(daily.next_run_date)).toBe("2026-01-29T03:00:00.000Z")

        const byAlias = yield* schedules.create(asPartner(p1), createReq("monthly", ownAlias))
        expect(iso(byAlias.next_run_date)).toBe("2026-02-01T03:00:00.000Z")
        const weekly = yield* schedules.create(asPartner(p1), createReq("weekly"))
        expect(iso(weekly.next_run_date)).toBe("2026-02-02T03:00:00.000Z")
        const biDaily = yield* schedules.create(asPartner(p1), createReq("bi_daily"))
        expect(iso(biDaily.next_run_date)).toBe("2026-01-29T03:00:00.000Z")

        // The wire form is exactly SPEC's resource: no internal fields.
        const wire = Schema.encodeSync(Schedule.PayoutScheduleWire)(daily)
        expect(wire).toEqual({
          schedule_id: daily.schedule_id,
          schedule_type: "payout",
          frequency: "daily",
          schedule_status: "active",
          next_run_date: "2026-01-29T03:00:00.000Z",
          creation_timestamp: "2026-01-28T15:00:00.000Z",
          user_id: "u1",
          payload: { address: ownCbu }
        })

        // The account shows the most recently changed active schedule.
        const user = yield* (yield* UserRepository.UserRepository).findById(u1)
        expect(Option.getOrThrow(user).payout_schedule).toMatchObject({
          address: ownCbu,
          frequency: "bi_daily"
        })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects an address whose holder is not the merchant, or that the bank does not know", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const mismatch = yield* Effect.flip(schedules.create(asPartner(p1), createReq("daily", otherCbu)))
        expect(mismatch).toMatchObject({
          _tag: "InvalidInput",
          key: "schedule.address.holder.mismatch",
          field: "payload.address"
        })
        const unknown = BankAccount.makeCbu("0110599", "0000000000001")
        const notFound = yield* Effect.flip(schedules.create(asPartner(p1), createReq("daily", unknown)))
        expect(notFound).toMatchObject({ _tag: "InvalidInput", key: "schedule.address.not.found" })
        expect(yield* schedules.list(asPartner(p1))).toEqual([])
        yield* expectLedgerOk
      })
    )
  )

  it.effect("is a partner operation: a user token is NotPermitted", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const error = yield* Effect.flip(schedules.create(asUser(), createReq("daily")))
        expect(error).toMatchObject({ _tag: "NotPermitted", key: "schedule.partner.required" })
        yield* expectLedgerOk
      })
    )
  )

  it("validates schedule_type, frequency and the address format", () => {
    const decode = Schema.decodeUnknownEither(Schedule.CreateScheduleRequest)
    expect(decode({ schedule_type: "payout", frequency: "daily", payload: { address: ownCbu } })._tag).toBe(
      "Right"
    )
    expect(decode({ schedule_type: "refund", frequency: "daily", payload: { address: ownCbu } })._tag).toBe(
      "Left"
    )
    expect(decode({ schedule_type: "payout", frequency: "hourly", payload: { address: ownCbu } })._tag).toBe(
      "Left"
    )
    expect(decode({ schedule_type: "payout", frequency: "daily", payload: { address: "1234" } })._tag).toBe(
      "Left"
    )
    expect(decode({ schedule_type: "payout", frequency: "daily" })._tag).toBe("Left")
    const patch = Schema.decodeUnknownEither(Schedule.PatchScheduleRequest)
    expect(patch({})._tag).toBe("Right")
    expect(patch({ schedule_status: "paused" })._tag).toBe("Left")
  })
})

describe("Schedules.list", () => {
  it.effect("a partner sees only the schedules it created for its user", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* seedUser({ user_id: u2, email: "dos@example.com" })
        const schedules = yield* Schedules.Schedules
        const mine = yield* schedules.create(asPartner(p1), createReq("daily"))
        const theirs = yield* schedules.create(asPartner(p2), createReq("weekly"))
        expect((yield* schedules.list(asPartner(p1))).map((s) => s.schedule_id)).toEqual([mine.schedule_id])
        expect((yield* schedules.list(asPartner(p2))).map((s) => s.schedule_id)).toEqual([theirs.schedule_id])
        // Same partner, another user: nothing.
        expect(yield* schedules.list(asPartner(p1, u2))).toEqual([])
        // The merchant itself sees all of its schedules.
        // (created in the same millisecond: the order among them is by id)
        expect((yield* schedules.list(asUser())).map((s) => s.schedule_id).sort()).toEqual(
          [mine.schedule_id, theirs.schedule_id].sort()
        )
        const hidden = yield* Effect.flip(schedules.get(asPartner(p1), theirs.schedule_id))
        expect(hidden).toMatchObject({ _tag: "NotFound", key: "schedule.not.found" })
        yield* expectLedgerOk
      })
    )
  )
})

describe("Schedules.patch", () => {
  it.effect("only the creating partner may change a schedule (403); another user's is not found", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* seedUser({ user_id: u2, email: "dos@example.com" })
        const schedules = yield* Schedules.Schedules
        const schedule = yield* schedules.create(asPartner(p1), createReq("daily"))
        const forbidden = yield* Effect.flip(
          schedules.patch(asPartner(p2), schedule.schedule_id, patchReq({ schedule_status: "inactive" }))
        )
        expect(forbidden).toMatchObject({ _tag: "NotPermitted", key: "schedule.forbidden" })
        const byUser = yield* Effect.flip(
          schedules.patch(asUser(), schedule.schedule_id, patchReq({ schedule_status: "inactive" }))
        )
        expect(byUser).toMatchObject({ _tag: "NotPermitted", key: "schedule.partner.required" })
        const otherUser = yield* Effect.flip(
          schedules.patch(asPartner(p1, u2), schedule.schedule_id, patchReq({ schedule_status: "inactive" }))
        )
        expect(otherUser).toMatchObject({ _tag: "NotFound", key: "schedule.not.found" })
        expect((yield* reload(schedule.schedule_id)).schedule_status).toBe("active")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("changes frequency, address and status; the account's payout_schedule follows", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const users = yield* UserRepository.UserRepository
        const account = Effect.map(users.findById(u1), (u) => Option.getOrThrow(u).payout_schedule)
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))

        const monthly = yield* schedules.patch(
          asPartner(p1),
          s.schedule_id,
          patchReq({ frequency: "monthly" })
        )
        expect(monthly.frequency).toBe("monthly")
        expect(iso(monthly.next_run_date)).toBe("2026-02-01T03:00:00.000Z")
        expect(yield* account).toMatchObject({ address: ownCbu, frequency: "monthly" })

        const moved = yield* schedules.patch(asPartner(p1), s.schedule_id, patchReq({ address: ownAlias }))
        expect(moved.payload.address).toBe(ownAlias)
        expect(iso(moved.next_run_date)).toBe("2026-02-01T03:00:00.000Z")
        expect(yield* account).toMatchObject({ address: ownAlias, frequency: "monthly" })

        const mismatch = yield* Effect.flip(
          schedules.patch(asPartner(p1), s.schedule_id, patchReq({ address: otherCbu }))
        )
        expect(mismatch).toMatchObject({ _tag: "InvalidInput", key: "schedule.address.holder.mismatch" })
        expect((yield* reload(s.schedule_id)).payload.address).toBe(ownAlias)

        const off = yield* schedules.patch(
          asPartner(p1),
          s.schedule_id,
          patchReq({ schedule_status: "inactive" })
        )
        expect(off.schedule_status).toBe("inactive")
        expect(yield* account).toBeNull()

        // Reactivated after its date passed: it waits for the next slot instead of running at once.
        yield* TestClock.setTime(Date.UTC(2026, 2, 10, 15, 0))
        const on = yield* schedules.patch(
          asPartner(p1),
          s.schedule_id,
          patchReq({ schedule_status: "active" })
        )
        expect(iso(on.next_run_date)).toBe("2026-04-01T03:00:00.000Z")
        expect(yield* account).toMatchObject({ address: ownAlias, frequency: "monthly" })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("deactivating the schedule the account shows falls back to another active one", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const users = yield* UserRepository.UserRepository
        const account = Effect.map(users.findById(u1), (u) => Option.getOrThrow(u).payout_schedule)
        const first = yield* schedules.create(asPartner(p1), createReq("daily"))
        yield* TestClock.adjust("1 minute")
        const second = yield* schedules.create(asPartner(p2), createReq("weekly", ownAlias))
        expect(yield* account).toMatchObject({ address: ownAlias, frequency: "weekly" })
        // Deactivating one the account does not show leaves the account alone.
        yield* schedules.patch(asPartner(p1), first.schedule_id, patchReq({ schedule_status: "inactive" }))
        expect(yield* account).toMatchObject({ address: ownAlias, frequency: "weekly" })
        yield* schedules.patch(asPartner(p1), first.schedule_id, patchReq({ schedule_status: "active" }))
        expect(yield* account).toMatchObject({ address: ownCbu, frequency: "daily" })
        yield* schedules.patch(asPartner(p1), first.schedule_id, patchReq({ schedule_status: "inactive" }))
        expect(yield* account).toMatchObject({ address: ownAlias, frequency: "weekly" })
        yield* schedules.patch(asPartner(p2), second.schedule_id, patchReq({ schedule_status: "inactive" }))
        expect(yield* account).toBeNull()
        yield* expectLedgerOk
      })
    )
  )

  it("the status machine is data: every move SPEC allows is in the table", () => {
    for (const from of Schedule.ScheduleStatus.literals) {
      for (const to of Schedule.ScheduleStatus.literals) {
        expect(Schedule.guardSchedule(from, to)._tag).toBe("Right")
      }
    }
    expect(Schedule.payoutTransitions.SUCCESS).toEqual([])
    expect(Schedule.payoutTransitions.FAILED).toEqual([])
  })
})

describe("Schedules.runDue", () => {
  it.effect("sweeps the whole available balance to the address once, and advances next_run_date", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        yield* fund("500")
        const before = yield* balances
        expect(before.available).toBe(148185n) // 1500.00 less 1 % commission and 21 % IVA on it
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))

        // Not due yet: nothing happens.
        yield* TestClock.setTime(Date.UTC(2026, 0, 29, 2, 59))
        expect((yield* runDue).payouts.runs).toBe(0)
        expect(yield* sent).toEqual([])

        yield* toNextRun(s.schedule_id)
        const report = yield* runDue
        expect(report.payouts).toEqual({ runs: 1, sent: 1, failed: 0, retrying: 0, skipped: 0, errors: 0 })
        const [payout] = yield* payoutsOf(s.schedule_id)
        expect(payout).toMatchObject({ payout_status: "SUCCESS", address: ownCbu, attempts: 1, error: null })
        expect(payout!.amount).toEqual(Money.make(148185n, "ARS"))
        const transfers = yield* sent
        expect(transfers).toHaveLength(1)
        expect(transfers[0]).toMatchObject({ to: ownCbu, reference: payout!.payout_id })
        expect(transfers[0]!.amount).toEqual(Money.make(148185n, "ARS"))
        expect(payout!.bank_transaction_id).toBe(transfers[0]!.bank_transaction_id)
        expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
        expect(iso((yield* reload(s.schedule_id)).next_run_date)).toBe("2026-01-30T03:00:00.000Z")

        // Running again at the same time does nothing more.
        expect((yield* runDue).payouts.runs).toBe(0)
        expect(yield* sent).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("runs exactly once under concurrent runDue calls", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const schedules = yield* Schedules.Schedules
        const a = yield* schedules.create(asPartner(p1), createReq("bi_daily"))
        yield* toNextRun(a.schedule_id)
        const reports = yield* Effect.all([runDue, runDue, runDue], { concurrency: "unbounded" })
        expect(reports.reduce((n, r) => n + r.payouts.runs, 0)).toBe(1)
        expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
        expect(yield* sent).toHaveLength(1)
        expect(yield* payoutsOf(a.schedule_id)).toHaveLength(1)

        // More money, the next slot, and a burst of runs again: one more transfer.
        yield* fund("200")
        yield* toNextRun(a.schedule_id)
        yield* Effect.all(
          Array.from({ length: 5 }, () => runDue),
          { concurrency: "unbounded" }
        )
        yield* runDue
        const transfers = yield* sent
        expect(transfers).toHaveLength(2)
        expect(transfers[1]!.amount).toEqual(Money.make(19758n, "ARS"))
        expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a refused transfer fails the payout, puts the money back, and the next run retries it", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const bank = yield* SandboxBank.SandboxBank
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily", ownAlias))
        const { available } = yield* balances
        yield* bank.failTransfersTo(ownAlias, "rejected")

        yield* toNextRun(s.schedule_id)
        const report = yield* runDue
        expect(report.payouts).toMatchObject({ runs: 1, sent: 0, failed: 1 })
        const [failed] = yield* payoutsOf(s.schedule_id)
        expect(failed!.payout_status).toBe("FAILED")
        expect(failed!.error).toContain("rejected")
        expect(yield* sent).toEqual([])
        expect(yield* balances).toEqual({ available, inTransit: 0n })
        yield* expectLedgerOk

        // Still refused at the next slot: another failed attempt, no money lost.
        yield* toNextRun(s.schedule_id)
        expect((yield* runDue).payouts.failed).toBe(1)
        expect(yield* balances).toEqual({ available, inTransit: 0n })

        yield* bank.clearFailures(ownAlias)
        // Not before the next slot.
        expect((yield* runDue).payouts.runs).toBe(0)
        yield* toNextRun(s.schedule_id)
        expect((yield* runDue).payouts.sent).toBe(1)
        const all = yield* payoutsOf(s.schedule_id)
        expect(all.map((p) => p.payout_status)).toEqual(["FAILED", "FAILED", "SUCCESS"])
        const transfers = yield* sent
        expect(transfers).toHaveLength(1)
        expect(transfers[0]!.amount.minor).toBe(available)
        expect(transfers[0]!.reference).toBe(all[2]!.payout_id)
        expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect(
    "an unknown outcome keeps the payout PENDING in transit; the bank's status settles it, without a resend",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* setup
          yield* fund("1000")
          const bank = yield* SandboxBank.SandboxBank
          const schedules = yield* Schedules.Schedules
          const s = yield* schedules.create(asPartner(p1), createReq("daily"))
          const { available } = yield* balances
          yield* bank.failTransfersTo(ownCbu, "unavailable")

          yield* toNextRun(s.schedule_id)
          expect((yield* runDue).payouts).toMatchObject({ runs: 1, retrying: 1 })
          const [pending] = yield* payoutsOf(s.schedule_id)
          expect(pending).toMatchObject({ payout_status: "PENDING", attempts: 1 })
          // The unknown outcome is on the transfer in flight, not the payout (never a failure).
          const inFlight =
            yield* (yield* OutgoingTransferRepository.OutgoingTransferRepository).findByReference(
              pending!.payout_id
            )
          expect(Option.getOrThrow(inFlight).last_error).toContain("unavailable")
          expect(yield* balances).toEqual({ available: 0n, inTransit: available })
          yield* expectLedgerOk

          // The bank comes back; a concurrent run right away leaves the fresh attempt alone.
          yield* bank.clearFailures(ownCbu)
          expect((yield* runDue).payouts.sent).toBe(0)
          // Say the bank had in fact executed it (we crashed before recording the answer).
          const provider = yield* BankProvider.BankProvider
          yield* provider.sendTransfer({ to: ownCbu, amount: pending!.amount, reference: pending!.payout_id })

          yield* TestClock.adjust(Schedules.payoutRetryAfter)
          expect((yield* runDue).payouts).toMatchObject({ runs: 0, sent: 1 })
          const [done] = yield* payoutsOf(s.schedule_id)
          expect(done).toMatchObject({ payout_id: pending!.payout_id, payout_status: "SUCCESS", attempts: 1 })
          // Sent once: the status query found it done, so nothing was sent again.
          expect(yield* sent).toHaveLength(1)
          expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("a transfer the bank never received is sent again, with the same reference, once", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const bank = yield* SandboxBank.SandboxBank
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))
        yield* bank.failTransfersTo(ownCbu, "unavailable")
        yield* toNextRun(s.schedule_id)
        expect((yield* runDue).payouts).toMatchObject({ runs: 1, retrying: 1 })
        expect(yield* sent).toEqual([])
        yield* bank.clearFailures(ownCbu)
        yield* TestClock.adjust(Schedules.payoutRetryAfter)
        const reports = yield* Effect.all([runDue, runDue, runDue], { concurrency: "unbounded" })
        expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
        const [done] = yield* payoutsOf(s.schedule_id)
        expect(done).toMatchObject({ payout_status: "SUCCESS", attempts: 2 })
        expect((yield* sent).map((t) => t.reference)).toEqual([done!.payout_id])
        expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("inactive schedules do not run", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))
        yield* schedules.patch(asPartner(p1), s.schedule_id, patchReq({ schedule_status: "inactive" }))
        const { available } = yield* balances
        yield* TestClock.adjust("10 days")
        expect((yield* runDue).payouts.runs).toBe(0)
        expect(yield* sent).toEqual([])
        expect(yield* payoutsOf(s.schedule_id)).toEqual([])
        expect((yield* balances).available).toBe(available)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a run with nothing available sends nothing and moves to the next slot", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("weekly"))
        yield* toNextRun(s.schedule_id)
        expect((yield* runDue).payouts).toMatchObject({ runs: 1, skipped: 1, sent: 0 })
        expect(yield* payoutsOf(s.schedule_id)).toEqual([])
        expect(yield* sent).toEqual([])
        expect(iso((yield* reload(s.schedule_id)).next_run_date)).toBe("2026-02-09T03:00:00.000Z")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a run that was missed for days runs once and schedules the next slot after now", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))
        yield* TestClock.setTime(Date.UTC(2026, 1, 3, 18, 30))
        expect((yield* runDue).payouts).toMatchObject({ runs: 1, sent: 1 })
        expect(iso((yield* reload(s.schedule_id)).next_run_date)).toBe("2026-02-04T03:00:00.000Z")
        expect(yield* sent).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a suspended account's runs are held: nothing is sent", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* setup
        yield* fund("1000")
        const schedules = yield* Schedules.Schedules
        const s = yield* schedules.create(asPartner(p1), createReq("daily"))
        const users = yield* UserRepository.UserRepository
        const user = Option.getOrThrow(yield* users.findById(u1))
        yield* users.update(new User.User({ ...user, account_status: "SUSPENDED" }))
        yield* toNextRun(s.schedule_id)
        expect((yield* runDue).payouts).toMatchObject({ runs: 1, skipped: 1 })
        expect(yield* sent).toEqual([])
        yield* expectLedgerOk
      })
    )
  )
})
