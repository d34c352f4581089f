/**
 * The sources of a merchant's payout list. A source reads its own records through its
 * repository, newest first after a cursor, and maps each to a `MerchantPayout`.
 */
import { Effect, type Option } from "effect"
import type { UserId } from "../Ids.js"
import * as Money from "../Money.js"
import type { Cursor } from "../Page.js"
import type { Payout } from "../schedules/Schedule.js"
import { ScheduleRepository } from "../schedules/ScheduleRepository.js"
import type { SplitPayout } from "../splits/Split.js"
import { SplitRepository } from "../splits/SplitRepository.js"
import type { Refund } from "../refunds/Refund.js"
import { RefundRepository } from "../refunds/RefundRepository.js"
import { MerchantPayout, type PayoutKind } from "./MerchantMoney.js"

export interface PayoutSource {
  readonly kind: PayoutKind
  /** Up to `limit` of the user's payouts of this kind, newest first, after `before`. */
  readonly page: (
    user: UserId,
    before: Option.Option<Cursor>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<MerchantPayout>>
}

/** A schedule's sweep as listed; it is final (SUCCESS or FAILED) from its last change. */
export const fromSchedulePayout = (p: Payout): MerchantPayout =>
  new MerchantPayout({
    payout_id: p.payout_id,
    kind: "schedule",
    amount: Money.format(p.amount),
    currency: p.amount.currency,
    destination: p.address,
    status: p.payout_status,
    bank_reference: p.bank_transaction_id,
    failure_reason: p.payout_status === "FAILED" ? p.error : null,
    schedule_id: p.schedule_id,
    split_payment_id: null,
    payment_id: null,
    creation_timestamp: p.creation_timestamp,
    executed_timestamp: p.payout_status === "PENDING" ? null : p.last_modified_timestamp
  })

/** One payout of a split's instruction as listed. */
export const fromSplitPayout = (p: SplitPayout): MerchantPayout =>
  new MerchantPayout({
    payout_id: p.payout_id,
    kind: "split",
    amount: Money.format(p.amount),
    currency: p.amount.currency,
    destination: p.destination,
    status: p.status,
    bank_reference: p.bank_transaction_id,
    failure_reason: p.failure_reason,
    schedule_id: null,
    split_payment_id: p.split_payment_id,
    payment_id: null,
    creation_timestamp: p.creation_timestamp,
    executed_timestamp: p.executed_timestamp
  })

/** A refund as listed: the payment's money on its way back to the account it came from. */
export const fromRefund = (r: Refund): MerchantPayout =>
  new MerchantPayout({
    payout_id: r.refund_id,
    kind: "refund",
    amount: Money.format(r.amount),
    currency: r.amount.currency,
    destination: r.destination.address,
    status: r.status,
    bank_reference: r.bank_transaction_id,
    failure_reason: r.failure_reason,
    schedule_id: null,
    split_payment_id: null,
    payment_id: r.payment_id,
    creation_timestamp: r.creation_timestamp,
    executed_timestamp: r.status === "PENDING" ? null : r.last_modified_timestamp
  })

/** Every payout source, over the host's repositories. */
export const sources: Effect.Effect<
  ReadonlyArray<PayoutSource>,
  never,
  ScheduleRepository | SplitRepository | RefundRepository
> = Effect.gen(function* () {
  const schedules = yield* ScheduleRepository
  const splits = yield* SplitRepository
  const refunds = yield* RefundRepository
  return [
    {
      kind: "schedule",
      page: (user, before, limit) =>
        Effect.map(schedules.listPayoutsByUser(user, before, limit), (rows) => rows.map(fromSchedulePayout))
    },
    {
      kind: "split",
      page: (user, before, limit) =>
        Effect.map(splits.listPayoutsByUser(user, before, limit), (rows) => rows.map(fromSplitPayout))
    },
    {
      kind: "refund",
      page: (user, before, limit) =>
        Effect.map(refunds.listByUser(user, before, limit), (rows) => rows.map(fromRefund))
    }
  ]
})
