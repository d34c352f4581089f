/** Payout schedules: the repository contract. */
import { expect } from "@effect/vitest"
import { DueScope, Ids, Schedule } from "@cobro/core"
import { ScheduleRepository, Transactor } from "@cobro/core/ports"
import { Effect, Option } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, u1, u2 } from "../fixtures.js"
import { p1, p2, ownCbu, ownAlias, address, at, ids, payoutIds } from "./helpers.js"

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

export const scheduleStorageScenarios: ReadonlyArray<Scenario> = [
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
      // Scoped to one merchant, or to everyone but some (the passes over test clocks).
      expect(ids(yield* repo.findDue(at(t0 + 5000), 10, DueScope.only(u2)))).toEqual(["sch_u2"])
      expect(ids(yield* repo.findDue(at(t0 + 5000), 2, DueScope.only(u1)))).toEqual(["sch_0", "sch_a"])
      expect(ids(yield* repo.findDue(at(t0 + 5000), 10, DueScope.allBut([u2])))).toEqual([
        "sch_0",
        "sch_a",
        "sch_A",
        "sch_b"
      ])
      expect(ids(yield* repo.findDue(at(t0 + 5000), 10, DueScope.allBut([u1, u2])))).toEqual([])
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
  }
]
