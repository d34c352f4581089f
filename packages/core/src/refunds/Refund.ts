/**
 * A refund: money of a paid payment sent back to the account it came from, through an outgoing
 * transfer (`OutgoingTransfers`, purpose `refund`, reference the refund id). Its wire shape, its
 * request and its states: PENDING (the money left the merchant's available balance and is in
 * transit) → SUCCESS (the bank confirmed the transfer) | FAILED (the bank refused or failed it;
 * the money is back in the merchant's available balance).
 */
import { Schema } from "effect"
import { BankTransactionId, IdString, PaymentId, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { Omittable, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** `rfd_` and 22 characters of [0-9a-z]: the time it was made (base 36) and randomness. */
export const RefundId = IdString.pipe(Schema.brand("RefundId"))
export type RefundId = typeof RefundId.Type

export const RefundStatus = Schema.Literal("PENDING", "SUCCESS", "FAILED")
export type RefundStatus = typeof RefundStatus.Type

export const RefundType = Schema.Literal("FULL", "PARTIAL")
export type RefundType = typeof RefundType.Type

/** Who asked for the refund, as the client says (kept and answered as given). */
export class Blame extends Class<Blame>("Blame")({
  team_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  mail: Schema.optional(Schema.String.pipe(Schema.maxLength(320)))
}) {}

/** Where the money goes: the account the payment's money came from. */
export class RefundDestination extends Class<RefundDestination>("RefundDestination")({
  /** The sender's CBU or CVU. */
  address: Schema.String,
  /** The sender's CUIT, as the bank reported it. */
  cuit: Schema.String,
  /** The sender's name, as the bank reported it. */
  name: Schema.String
}) {}

export class Refund extends Class<Refund>("Refund")({
  refund_id: RefundId,
  payment_id: PaymentId,
  /** The payment's owner (whose available balance pays it). */
  user_id: UserId,
  refund_type: RefundType,
  amount: Money.Money,
  status: RefundStatus,
  destination: RefundDestination,
  blame: Omittable(Blame),
  /** The bank's id of the transfer, once the bank took it. */
  bank_transaction_id: Schema.NullOr(BankTransactionId),
  /** Why the bank refused or failed the transfer (FAILED). */
  failure_reason: Schema.NullOr(Schema.String),
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {}

/** A refund on the wire (`data` of the refund routes, an item of a payment's `refunds`). */
export const RefundWire = Schema.Struct({
  refund_id: RefundId,
  payment_id: PaymentId,
  user_id: UserId,
  refund_type: RefundType,
  /** Decimal text ("250.50"). */
  amount: Schema.String,
  currency: Money.Currency,
  status: RefundStatus,
  destination: RefundDestination,
  blame: Schema.optional(Blame),
  bank_reference: Schema.optional(BankTransactionId),
  failure_reason: Schema.optional(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Refund" })
export type RefundWire = typeof RefundWire.Type

export const toWire = (r: Refund): RefundWire => ({
  refund_id: r.refund_id,
  payment_id: r.payment_id,
  user_id: r.user_id,
  refund_type: r.refund_type,
  amount: Money.format(r.amount),
  currency: r.amount.currency,
  status: r.status,
  destination: r.destination,
  ...(r.blame === null ? {} : { blame: r.blame }),
  ...(r.bank_transaction_id === null ? {} : { bank_reference: r.bank_transaction_id }),
  ...(r.failure_reason === null ? {} : { failure_reason: r.failure_reason }),
  created_at: r.creation_timestamp,
  updated_at: r.last_modified_timestamp
})

/**
 * POST /payments/{payment_id}/refunds, as existing clients send it. `amount` (PARTIAL only) is a
 * decimal string ("250.50") or a JSON number, at most 2 decimals; `currency` is ARS when given;
 * `user_id` is the token's own user when given. The service checks each and names the field.
 */
export class RefundRequest extends Class<RefundRequest>("RefundRequest")({
  refund_type: RefundType,
  amount: Schema.optional(
    Schema.Union(Schema.String, Schema.Number).annotations({
      description: 'PARTIAL only: pesos as a decimal string ("250.50") or a number, at most 2 decimals'
    })
  ),
  currency: Schema.optional(Schema.String.annotations({ description: "ARS (the payment's currency)" })),
  user_id: Schema.optional(UserId),
  blame: Schema.optional(Blame)
}) {}

/** Whether a refund's money is spoken for: PENDING or SUCCESS (a FAILED one came back). */
export const counts = (r: Refund): boolean => r.status !== "FAILED"

/** The total of the refunds that count, in ARS. */
export const refundedTotal = (refunds: ReadonlyArray<Refund>): Money.Money =>
  Money.orThrow(
    Money.sum(
      "ARS",
      refunds.filter(counts).map((r) => r.amount)
    )
  )
