/**
 * Storage of payout schedules and of the payouts their runs make.
 */
import { Context, DateTime, Effect, HashMap, Layer, Option, Order, RedBlackTree } from "effect"
import { Conflict } from "../Errors.js"
import type { PartnerId, PayoutId, ScheduleId, UserId } from "../Ids.js"
import { makeRef, type MemoryDb, timeKey } from "../internal/memoryDb.js"
import type { Cursor } from "../Page.js"
import type { Payout, PayoutSchedule } from "./Schedule.js"
import { type DueScope, everyone, includes } from "../clocks/DueScope.js"

export class ScheduleRepository extends Context.Tag("@cobro/core/ScheduleRepository")<
  ScheduleRepository,
  {
    /** Fails with `Conflict` when the id is taken. */
    readonly insert: (schedule: PayoutSchedule) => Effect.Effect<void, Conflict>
    readonly update: (schedule: PayoutSchedule) => Effect.Effect<void>
    readonly findById: (id: ScheduleId) => Effect.Effect<Option.Option<PayoutSchedule>>
    /** Like `findById`, and inside a transaction the row stays locked until it ends. */
    readonly findByIdForUpdate: (id: ScheduleId) => Effect.Effect<Option.Option<PayoutSchedule>>
    /** Every schedule of a user, oldest first. */
    readonly listByUser: (user: UserId) => Effect.Effect<ReadonlyArray<PayoutSchedule>>
    /** The schedules `partner` created for `user`, oldest first. */
    readonly listByUserAndPartner: (
      user: UserId,
      partner: PartnerId
    ) => Effect.Effect<ReadonlyArray<PayoutSchedule>>
    /** Active schedules whose `next_run_date <= now`, earliest first. Only those of `scope` (everyone by default). */
    readonly findDue: (
      now: DateTime.Utc,
      limit: number,
      scope?: DueScope
    ) => Effect.Effect<ReadonlyArray<PayoutSchedule>>

    /** Fails with `Conflict` when the id is taken. */
    readonly insertPayout: (payout: Payout) => Effect.Effect<void, Conflict>
    readonly updatePayout: (payout: Payout) => Effect.Effect<void>
    readonly findPayoutById: (id: PayoutId) => Effect.Effect<Option.Option<Payout>>
    /** Like `findPayoutById`, and inside a transaction the row stays locked until it ends. */
    readonly findPayoutByIdForUpdate: (id: PayoutId) => Effect.Effect<Option.Option<Payout>>
    /** The payouts of a schedule, oldest first. */
    readonly listPayouts: (schedule: ScheduleId) => Effect.Effect<ReadonlyArray<Payout>>
    /**
     * Up to `limit` of a user's payouts (every schedule's), newest first (creation time, then
     * payout id, both descending), after `before` (the last item of the previous page).
     */
    readonly listPayoutsByUser: (
      user: UserId,
      before: Option.Option<Cursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Payout>>
    /** PENDING payouts whose current attempt was claimed at or before `attemptedBefore`, oldest first. */
    readonly findPendingPayouts: (
      attemptedBefore: DateTime.Utc,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Payout>>
  }
>() {}

const userKey = (s: PayoutSchedule) =>
  `${s.user_id}\u0000${timeKey(s.creation_timestamp)}\u0000${s.schedule_id}`
const dueKey = (s: PayoutSchedule) => `${timeKey(s.next_run_date)}\u0000${s.schedule_id}`
const payoutKey = (p: Payout) => `${p.schedule_id}\u0000${timeKey(p.creation_timestamp)}\u0000${p.payout_id}`
const payoutUserKey = (user: string, at: DateTime.Utc, id: string) => `${user}\u0000${timeKey(at)}\u0000${id}`
const pendingKey = (p: Payout) => `${timeKey(p.attempted_at)}\u0000${p.payout_id}`

interface Tables {
  readonly schedules: HashMap.HashMap<ScheduleId, PayoutSchedule>
  readonly byUser: RedBlackTree.RedBlackTree<string, ScheduleId>
  /** Active schedules by next run. */
  readonly due: RedBlackTree.RedBlackTree<string, ScheduleId>
  readonly payouts: HashMap.HashMap<PayoutId, Payout>
  readonly bySchedule: RedBlackTree.RedBlackTree<string, PayoutId>
  /** PENDING payouts by attempt time. */
  readonly pending: RedBlackTree.RedBlackTree<string, PayoutId>
  /** Payouts by user, then creation time. */
  readonly payoutsByUser: RedBlackTree.RedBlackTree<string, PayoutId>
}

const withDue = (due: Tables["due"], s: PayoutSchedule) =>
  s.schedule_status === "active" ? RedBlackTree.insert(due, dueKey(s), s.schedule_id) : due
const withPending = (pending: Tables["pending"], p: Payout) =>
  p.payout_status === "PENDING" ? RedBlackTree.insert(pending, pendingKey(p), p.payout_id) : pending

/** The `Conflict` the adapters raise (memory and SQL alike) when a schedule's or payout's id is taken. */
export const idTaken = (what: "schedule" | "payout") =>
  new Conflict({ key: `${what}.id.taken`, message: `a ${what} with this id already exists` })

const taken = (what: "schedule" | "payout") => Effect.fail(idTaken(what))

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({
    schedules: HashMap.empty(),
    byUser: RedBlackTree.empty(Order.string),
    due: RedBlackTree.empty(Order.string),
    payouts: HashMap.empty(),
    bySchedule: RedBlackTree.empty(Order.string),
    pending: RedBlackTree.empty(Order.string),
    payoutsByUser: RedBlackTree.empty(Order.string)
  })

  const findById = (id: ScheduleId) => Effect.map(tables.get, (t) => HashMap.get(t.schedules, id))
  const findPayoutById = (id: PayoutId) => Effect.map(tables.get, (t) => HashMap.get(t.payouts, id))

  const listByUser = (user: UserId, keep: (s: PayoutSchedule) => boolean) =>
    Effect.map(tables.get, (t) => {
      const out: Array<PayoutSchedule> = []
      for (const [key, id] of RedBlackTree.greaterThanEqual(t.byUser, `${user}\u0000`)) {
        if (!key.startsWith(`${user}\u0000`)) break
        const schedule = Option.getOrThrow(HashMap.get(t.schedules, id))
        if (keep(schedule)) out.push(schedule)
      }
      return out
    })

  return ScheduleRepository.of({
    insert: (schedule) =>
      tables
        .modify((t) =>
          HashMap.has(t.schedules, schedule.schedule_id)
            ? ([false, t] as const)
            : ([
                true,
                {
                  ...t,
                  schedules: HashMap.set(t.schedules, schedule.schedule_id, schedule),
                  byUser: RedBlackTree.insert(t.byUser, userKey(schedule), schedule.schedule_id),
                  due: withDue(t.due, schedule)
                }
              ] as const)
        )
        .pipe(Effect.flatMap((inserted) => (inserted ? Effect.void : taken("schedule")))),
    update: (schedule) =>
      tables.update((t) =>
        Option.match(HashMap.get(t.schedules, schedule.schedule_id), {
          onNone: () => t,
          onSome: (previous) => ({
            ...t,
            schedules: HashMap.set(t.schedules, schedule.schedule_id, schedule),
            due: withDue(RedBlackTree.removeFirst(t.due, dueKey(previous)), schedule)
          })
        })
      ),
    findById,
    findByIdForUpdate: findById,
    listByUser: (user) => listByUser(user, () => true),
    listByUserAndPartner: (user, partner) => listByUser(user, (s) => s.partner_id === partner),
    findDue: (now, limit, scope = everyone) =>
      Effect.map(tables.get, (t) => {
        const out: Array<PayoutSchedule> = []
        for (const [, id] of t.due) {
          const schedule = Option.getOrThrow(HashMap.get(t.schedules, id))
          if (out.length >= limit || DateTime.greaterThan(schedule.next_run_date, now)) break
          if (includes(scope, schedule.user_id)) out.push(schedule)
        }
        return out
      }),

    insertPayout: (payout) =>
      tables
        .modify((t) =>
          HashMap.has(t.payouts, payout.payout_id)
            ? ([false, t] as const)
            : ([
                true,
                {
                  ...t,
                  payouts: HashMap.set(t.payouts, payout.payout_id, payout),
                  bySchedule: RedBlackTree.insert(t.bySchedule, payoutKey(payout), payout.payout_id),
                  pending: withPending(t.pending, payout),
                  payoutsByUser: RedBlackTree.insert(
                    t.payoutsByUser,
                    payoutUserKey(payout.user_id, payout.creation_timestamp, payout.payout_id),
                    payout.payout_id
                  )
                }
              ] as const)
        )
        .pipe(Effect.flatMap((inserted) => (inserted ? Effect.void : taken("payout")))),
    updatePayout: (payout) =>
      tables.update((t) =>
        Option.match(HashMap.get(t.payouts, payout.payout_id), {
          onNone: () => t,
          onSome: (previous) => ({
            ...t,
            payouts: HashMap.set(t.payouts, payout.payout_id, payout),
            pending: withPending(RedBlackTree.removeFirst(t.pending, pendingKey(previous)), payout)
          })
        })
      ),
    findPayoutById,
    findPayoutByIdForUpdate: findPayoutById,
    listPayouts: (schedule) =>
      Effect.map(tables.get, (t) => {
        const out: Array<Payout> = []
        for (const [key, id] of RedBlackTree.greaterThanEqual(t.bySchedule, `${schedule}\u0000`)) {
          if (!key.startsWith(`${schedule}\u0000`)) break
          out.push(Option.getOrThrow(HashMap.get(t.payouts, id)))
        }
        return out
      }),
    listPayoutsByUser: (user, before, limit) =>
      Effect.map(tables.get, (t) => {
        const prefix = `${user}\u0000`
        // `\uffff` sorts after every key of this user: the newest first when no cursor.
        const from = Option.match(before, {
          onNone: () => `${prefix}\uffff`,
          onSome: (c) => payoutUserKey(user, c.creation_timestamp, c.id)
        })
        const out: Array<Payout> = []
        for (const [key, id] of RedBlackTree.lessThanReversed(t.payoutsByUser, from)) {
          if (!key.startsWith(prefix) || out.length >= limit) break
          out.push(Option.getOrThrow(HashMap.get(t.payouts, id)))
        }
        return out
      }),
    findPendingPayouts: (attemptedBefore, limit) =>
      Effect.map(tables.get, (t) => {
        const out: Array<Payout> = []
        for (const [, id] of t.pending) {
          const payout = Option.getOrThrow(HashMap.get(t.payouts, id))
          if (out.length >= limit || DateTime.greaterThan(payout.attempted_at, attemptedBefore)) break
          out.push(payout)
        }
        return out
      })
  })
})

export const layerMemory: Layer.Layer<ScheduleRepository, never, MemoryDb> = Layer.effect(
  ScheduleRepository,
  makeMemory
)
