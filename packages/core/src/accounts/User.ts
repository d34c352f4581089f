/**
 * A merchant (a "user" in SPEC) and the account configuration that shapes its payments.
 */
import { Duration, Option, Schema } from "effect"
import { Cuit } from "../bank/BankAccount.js"
import * as Money from "../Money.js"
import { PartnerId, UserId } from "../Ids.js"
import { ArsNumber, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export const AccountStatus = Schema.Literal("ACTIVE", "PENDING", "REJECTED", "SUSPENDED")
export type AccountStatus = typeof AccountStatus.Type

export const PayoutFrequency = Schema.Literal("bi_daily", "daily", "weekly", "monthly")
export type PayoutFrequency = typeof PayoutFrequency.Type

/** At most 8 characters of lowercase letters, digits and underscore. */
export const AliasPrefix = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9_]{1,8}$/, {
    message: () => "must be 1-8 characters of lowercase letters, digits and underscore"
  }),
  Schema.brand("AliasPrefix")
)
export type AliasPrefix = typeof AliasPrefix.Type

export const CancellationPeriodHours = Schema.Int.pipe(
  Schema.between(1, 200, { message: () => "must be an integer between 1 and 200 (hours)" })
)
export const CancellationPeriodMinutes = Schema.Int.pipe(
  Schema.between(5, 20160, { message: () => "must be an integer between 5 and 20160 (minutes)" })
)

export class PayoutScheduleConfig extends Class<PayoutScheduleConfig>("PayoutScheduleConfig")({
  address: Schema.String,
  frequency: PayoutFrequency
}) {}

export class User extends Class<User>("User")({
  user_id: UserId,
  name: Schema.String,
  email: Schema.String,
  cuit: Cuit,
  account_status: AccountStatus,
  alias_prefix: Schema.NullOr(AliasPrefix),
  cancellation_period: Schema.NullOr(CancellationPeriodHours),
  cancellation_period_minutes: Schema.NullOr(CancellationPeriodMinutes),
  automatic_cancellation: Schema.Boolean,
  /** Absolute ARS amount by which a payment may differ from its quote and still be SUCCESS. */
  transfer_tolerance: ArsNumber,
  payout_schedule: Schema.NullOr(PayoutScheduleConfig),
  /** The partner that onboarded this user, if any. */
  partner_id: Schema.NullOr(PartnerId),
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {}

/** A new account's settings: no alias prefix, cancellation, tolerance or payout schedule. */
export const initialSettings = () =>
  ({
    alias_prefix: null,
    cancellation_period: null,
    cancellation_period_minutes: null,
    automatic_cancellation: false,
    transfer_tolerance: Money.zero("ARS"),
    payout_schedule: null
  }) as const

/**
 * How long a new one-off payment stays payable: with `automatic_cancellation`, the minutes
 * setting wins over the hours setting; otherwise (or with neither set) the engine default.
 */
export const paymentLifetime = (user: User, fallback: Duration.Duration): Duration.Duration => {
  if (!user.automatic_cancellation) return fallback
  return Option.firstSomeOf([
    Option.map(Option.fromNullable(user.cancellation_period_minutes), Duration.minutes),
    Option.map(Option.fromNullable(user.cancellation_period), Duration.hours)
  ]).pipe(Option.getOrElse(() => fallback))
}
