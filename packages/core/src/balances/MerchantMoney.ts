/**
 * The merchant's money as read: its balance in each currency (available, in transit) and the
 * payouts that sent it out — schedule sweeps, split payouts and refunds —
 * as one list. Each payout source maps its own record to `MerchantPayout`
 * (`payoutSources.ts`); the list and its pages do not know how many sources there are.
 */
import { Schema } from "effect"
import { BankTransactionId, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { Omittable, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/**
 * Where a payout comes from: `schedule` (a payout schedule's sweep of the available balance),
 * `split` (one payout of a split payment's instruction), `refund` (a payment's money returned to
 * the account it came from).
 */
export const PayoutKind = Schema.Literal("schedule", "split", "refund")
export type PayoutKind = typeof PayoutKind.Type

/** PENDING: not yet confirmed by the bank; SUCCESS: the money left; FAILED: it came back. */
export const PayoutStatus = Schema.Literal("PENDING", "SUCCESS", "FAILED")
export type PayoutStatus = typeof PayoutStatus.Type

/** One currency of a merchant's balance, amounts as decimal text ("1500.00"). */
export class CurrencyBalance extends Class<CurrencyBalance>("CurrencyBalance")({
  currency: Money.Currency,
  /** What can be paid out now. */
  available: Schema.String,
  /** Sent to the bank in payouts the bank has not confirmed yet. */
  in_transit: Schema.String
}) {
  static of(available: Money.Money, inTransit: Money.Money): CurrencyBalance {
    return new CurrencyBalance({
      currency: available.currency,
      available: Money.format(available),
      in_transit: Money.format(inTransit)
    })
  }
}

/** GET /users/{user_id}/balance: ARS always, other currencies when they hold money. */
export class MerchantBalance extends Class<MerchantBalance>("MerchantBalance")({
  user_id: UserId,
  balances: Schema.Array(CurrencyBalance)
}) {}

/** One payout of a merchant, whatever its source. */
export class MerchantPayout extends Class<MerchantPayout>("MerchantPayout")({
  payout_id: Schema.String,
  kind: PayoutKind,
  /** Decimal text in `currency` ("1500.00"). */
  amount: Schema.String,
  currency: Money.Currency,
  /** The CVU, CBU or alias the money goes to. */
  destination: Schema.String,
  status: PayoutStatus,
  /** The bank's id of the transfer, once the bank took it. */
  bank_reference: Omittable(BankTransactionId),
  /** Why the bank refused it (FAILED). */
  failure_reason: Omittable(Schema.String),
  /** The schedule that swept it (`kind` schedule). */
  schedule_id: Omittable(Schema.String),
  /** The split payment it pays out (`kind` split). */
  split_payment_id: Omittable(Schema.String),
  /** The payment it refunds (`kind` refund). */
  payment_id: Omittable(Schema.String),
  creation_timestamp: Timestamp,
  /** When it became SUCCESS or FAILED. */
  executed_timestamp: Omittable(Timestamp)
}) {}
