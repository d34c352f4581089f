/**
 * Automatic payout schedules: a partner tells us to sweep a merchant's available balance to one
 * of the merchant's own bank accounts at a fixed rhythm. This module is the pure domain — the
 * schedule and payout records, their state machines as data, the request schemas and the
 * calendar (`nextRunDate`). Storage is `ScheduleRepository`, behaviour `Schedules`.
 */
import { DateTime, Either, Match, Schema } from "effect"
import { PayoutAddress } from "../bank/BankAccount.js"
import { Conflict } from "../Errors.js"
import { BankTransactionId, PartnerId, PayoutId, ScheduleId, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { PayoutFrequency } from "../accounts/User.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export { PayoutFrequency } from "../accounts/User.js"

export const ScheduleType = Schema.Literal("payout")
export type ScheduleType = typeof ScheduleType.Type

export const ScheduleStatus = Schema.Literal("active", "inactive")
export type ScheduleStatus = typeof ScheduleStatus.Type

export class SchedulePayload extends Class<SchedulePayload>("SchedulePayload")({
  /** CVU, CBU or alias of an account held by the merchant (same CUIT). */
  address: PayoutAddress
}) {}

/** The fields SPEC's Payout schedule resource shows, in its order. */
const wireFields = {
  schedule_id: ScheduleId,
  schedule_type: ScheduleType,
  frequency: PayoutFrequency,
  schedule_status: ScheduleStatus,
  next_run_date: Timestamp,
  creation_timestamp: Timestamp,
  user_id: UserId,
  payload: SchedulePayload
}

/** SPEC's Payout schedule on the wire; encoding a `PayoutSchedule` with it drops the internal fields. */
export const PayoutScheduleWire = Schema.Struct(wireFields)

export class PayoutSchedule extends Class<PayoutSchedule>("PayoutSchedule")({
  ...wireFields,
  /** The partner that created the schedule; only it may change it (internal). */
  partner_id: PartnerId,
  last_modified_timestamp: Timestamp
}) {}

/** What a status change does besides setting the status. */
export interface ScheduleMove {
  /**
   * Whether `next_run_date` restarts from now. A reactivated schedule waits for its next slot
   * instead of running at once for a date that passed while it was inactive.
   */
  readonly restartsCalendar: boolean
}

/**
 * The schedule state machine as data: for each status, the statuses a PATCH may move it to.
 * SPEC lets either value be set from either value; a move missing here is a `Conflict`.
 */
export const scheduleTransitions: Record<ScheduleStatus, Partial<Record<ScheduleStatus, ScheduleMove>>> = {
  active: { active: { restartsCalendar: false }, inactive: { restartsCalendar: false } },
  inactive: { active: { restartsCalendar: true }, inactive: { restartsCalendar: false } }
}

export const guardSchedule = (
  from: ScheduleStatus,
  to: ScheduleStatus
): Either.Either<ScheduleMove, Conflict> => {
  const move = scheduleTransitions[from][to]
  return move !== undefined
    ? Either.right(move)
    : Either.left(
        new Conflict({
          key: "schedule.transition.invalid",
          message: `a schedule cannot go from ${from} to ${to}`
        })
      )
}

// ---------------------------------------------------------------------------------------------
// Payouts

export const PayoutStatus = Schema.Literal("PENDING", "SUCCESS", "FAILED")
export type PayoutStatus = typeof PayoutStatus.Type

/**
 * One sweep of a schedule. Created PENDING together with the ledger move available → in
 * transit; the bank transfer happens after that commits, and its outcome moves the payout to
 * SUCCESS (money left the bank) or FAILED (money back to available). A PENDING payout whose
 * outcome is unknown (bank unavailable, crash) is retried with the same reference.
 */
export class Payout extends Class<Payout>("Payout")({
  payout_id: PayoutId,
  schedule_id: ScheduleId,
  user_id: UserId,
  address: PayoutAddress,
  amount: Money.Money,
  payout_status: PayoutStatus,
  /** The bank's id of the transfer, once it was sent. */
  bank_transaction_id: Schema.NullOr(BankTransactionId),
  /** The last error the bank answered, kept for the record. */
  error: Schema.NullOr(Schema.String),
  /** How many times the transfer was handed to the bank. */
  attempts: Schema.Int,
  /** When the current attempt was claimed; a PENDING payout is retried once this is old enough. */
  attempted_at: Timestamp,
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {
  /** Our reference for the bank transfer: the payout id, so a retry is deduplicated. */
  get reference(): string {
    return this.payout_id
  }
}

/** The payout state machine as data; SUCCESS and FAILED are final. */
export const payoutTransitions: Record<PayoutStatus, ReadonlyArray<PayoutStatus>> = {
  PENDING: ["PENDING", "SUCCESS", "FAILED"],
  SUCCESS: [],
  FAILED: []
}

export const guardPayout = (payout: Payout, to: PayoutStatus): Either.Either<Payout, Conflict> =>
  payoutTransitions[payout.payout_status].includes(to)
    ? Either.right(payout)
    : Either.left(
        new Conflict({
          key: "payout.transition.invalid",
          message: `payout ${payout.payout_id} is ${payout.payout_status} and cannot become ${to}`
        })
      )

// ---------------------------------------------------------------------------------------------
// Requests

export class CreateScheduleRequest extends Class<CreateScheduleRequest>("CreateScheduleRequest")({
  schedule_type: ScheduleType,
  frequency: PayoutFrequency,
  payload: SchedulePayload
}) {}

/** Every field optional; only those sent change. */
export class PatchScheduleRequest extends Class<PatchScheduleRequest>("PatchScheduleRequest")({
  frequency: Schema.optional(PayoutFrequency),
  address: Schema.optional(PayoutAddress),
  schedule_status: Schema.optional(ScheduleStatus)
}) {}

// ---------------------------------------------------------------------------------------------
// Calendar

/**
 * Buenos Aires time as a fixed UTC−03:00 offset. Argentina has observed no daylight saving time
 * since 2009, and a fixed offset keeps the calendar independent of the host's time-zone data.
 */
export const buenosAires: DateTime.TimeZone = DateTime.zoneMakeOffset(-3 * 60 * 60 * 1000)

/**
 * The next run of a schedule strictly after `now`, in Buenos Aires time: `bi_daily` at 00:00 and
 * 12:00, `daily` at 00:00, `weekly` on Mondays at 00:00, `monthly` on the 1st at 00:00.
 */
export const nextRunDate = (frequency: PayoutFrequency, now: DateTime.DateTime): DateTime.Utc => {
  const local = DateTime.setZone(now, buenosAires)
  const midnight = DateTime.startOf(local, "day")
  const next = Match.value(frequency).pipe(
    Match.when("bi_daily", () => {
      const noon = DateTime.add(midnight, { hours: 12 })
      return DateTime.greaterThan(noon, local) ? noon : DateTime.add(midnight, { days: 1 })
    }),
    Match.when("daily", () => DateTime.add(midnight, { days: 1 })),
    Match.when("weekly", () =>
      DateTime.add(DateTime.startOf(local, "week", { weekStartsOn: 1 }), { weeks: 1 })
    ),
    Match.when("monthly", () => DateTime.add(DateTime.startOf(local, "month"), { months: 1 })),
    Match.exhaustive
  )
  return DateTime.toUtc(next)
}
