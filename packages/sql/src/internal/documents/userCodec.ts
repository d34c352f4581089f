/**
 * The stored user's version 1 read and written by hand: the trusted path of `User` in
 * `account.ts`, as `paymentCodec.ts` is the payment's. A user is read on every creation of a
 * payment and every detailed read of one (its `user_info`), and the schema's parser (the CUIT's
 * check digit, the settings' ranges) was most of that read's CPU.
 * Every row was written through the validated domain value; `userCodec.test.ts` checks that this
 * codec and the schema's answer the same for users of every kind of content.
 */
import { Money, User as U } from "@cobro/core"
import { arsNumber, iso, time, trusted } from "./trusted.js"

type Frozen = typeof U.User.Encoded

export const decode = (d: Frozen): U.User =>
  new U.User(
    {
      user_id: d.user_id as U.User["user_id"],
      name: d.name,
      email: d.email,
      cuit: d.cuit as U.User["cuit"],
      account_status: d.account_status,
      alias_prefix: d.alias_prefix as U.User["alias_prefix"],
      cancellation_period: d.cancellation_period,
      cancellation_period_minutes: d.cancellation_period_minutes,
      automatic_cancellation: d.automatic_cancellation,
      transfer_tolerance: arsNumber(d.transfer_tolerance),
      payout_schedule:
        d.payout_schedule === null ? null : new U.PayoutScheduleConfig({ ...d.payout_schedule }, trusted),
      partner_id: d.partner_id as U.User["partner_id"],
      creation_timestamp: time(d.creation_timestamp),
      last_modified_timestamp: time(d.last_modified_timestamp)
    },
    trusted
  )

export const encode = (u: U.User): Frozen => ({
  user_id: u.user_id,
  name: u.name,
  email: u.email,
  cuit: u.cuit,
  account_status: u.account_status,
  alias_prefix: u.alias_prefix,
  cancellation_period: u.cancellation_period,
  cancellation_period_minutes: u.cancellation_period_minutes,
  automatic_cancellation: u.automatic_cancellation,
  transfer_tolerance: Money.toNumber(u.transfer_tolerance),
  payout_schedule:
    u.payout_schedule === null
      ? null
      : { address: u.payout_schedule.address, frequency: u.payout_schedule.frequency },
  partner_id: u.partner_id,
  creation_timestamp: iso(u.creation_timestamp),
  last_modified_timestamp: iso(u.last_modified_timestamp)
})
