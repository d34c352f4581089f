/**
 * Branded identifiers. A brand keeps a user id from being passed where a payment id is expected;
 * the wire form is always the plain string.
 */
import { Schema } from "effect"

export const UserId = Schema.String.pipe(Schema.minLength(1), Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const PaymentId = Schema.String.pipe(Schema.minLength(1), Schema.brand("PaymentId"))
export type PaymentId = typeof PaymentId.Type

/**
 * The merchant's order id. It becomes part of the payment id and of URL paths, so it is limited
 * to 1–64 characters of letters, digits, `-`, `_` and `.`.
 */
export const ExternalId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9._-]{1,64}$/, {
    message: () => "must be 1-64 characters of letters, digits, '-', '_' and '.'"
  }),
  Schema.brand("ExternalId")
)
export type ExternalId = typeof ExternalId.Type

export const EventId = Schema.String.pipe(Schema.minLength(1), Schema.brand("EventId"))
export type EventId = typeof EventId.Type

export const LedgerEntryId = Schema.String.pipe(Schema.minLength(1), Schema.brand("LedgerEntryId"))
export type LedgerEntryId = typeof LedgerEntryId.Type

/** The bank's own id of a transfer; incoming transfers are idempotent on it. */
export const BankTransactionId = Schema.String.pipe(Schema.minLength(1), Schema.brand("BankTransactionId"))
export type BankTransactionId = typeof BankTransactionId.Type

export const PartnerId = Schema.String.pipe(Schema.minLength(1), Schema.brand("PartnerId"))
export type PartnerId = typeof PartnerId.Type

export const TeamId = Schema.String.pipe(Schema.minLength(1), Schema.brand("TeamId"))
export type TeamId = typeof TeamId.Type

export const ScheduleId = Schema.String.pipe(Schema.minLength(1), Schema.brand("ScheduleId"))
export type ScheduleId = typeof ScheduleId.Type

/** A payout of a schedule; also the `reference` of its bank transfer (the bank deduplicates on it). */
export const PayoutId = Schema.String.pipe(Schema.minLength(1), Schema.brand("PayoutId"))
export type PayoutId = typeof PayoutId.Type

/** The public half of an API credential (of a user or a partner); the secret is never an id. */
export const ClientId = Schema.String.pipe(Schema.minLength(1), Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

export const SplitPaymentId = Schema.String.pipe(Schema.minLength(1), Schema.brand("SplitPaymentId"))
export type SplitPaymentId = typeof SplitPaymentId.Type

export const PayoutAccountId = Schema.String.pipe(Schema.minLength(1), Schema.brand("PayoutAccountId"))
export type PayoutAccountId = typeof PayoutAccountId.Type

export const VerificationRequestId = Schema.String.pipe(
  Schema.minLength(1),
  Schema.brand("VerificationRequestId")
)
export type VerificationRequestId = typeof VerificationRequestId.Type

export const SplitPayoutId = Schema.String.pipe(Schema.minLength(1), Schema.brand("SplitPayoutId"))
export type SplitPayoutId = typeof SplitPayoutId.Type
