/**
 * Branded identifiers. A brand keeps a user id from being passed where a payment id is expected;
 * the wire form is always the plain string.
 */
import { Schema } from "effect"
import { hasControlCharacter } from "./internal/text.js"

/** The longest id cobro takes: a payment id is `VAR-` + a user id (≤ 64) + `-` + an external id (≤ 64). */
export const MAX_ID_LENGTH = 256

/**
 * The string an id is made of: 1 to `MAX_ID_LENGTH` characters, none of them a control character.
 * Ids travel in URL paths, headers and log lines and are keys in every store; a NUL cannot be
 * stored in a Postgres text column at all, and no id cobro issues holds any control character.
 */
export const IdString = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_ID_LENGTH, { message: () => `must be at most ${MAX_ID_LENGTH} characters` }),
  Schema.filter((s) => !hasControlCharacter(s), { message: () => "must not contain control characters" })
)

export const UserId = IdString.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const PaymentId = IdString.pipe(Schema.brand("PaymentId"))
export type PaymentId = typeof PaymentId.Type

/**
 * The string of an id the merchant chooses and cobro puts in URL paths (an order id, a customer
 * id): 1–64 characters of letters, digits, `-`, `_` and `.`.
 */
export const PathIdString = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9._-]{1,64}$/, {
    message: () => "must be 1-64 characters of letters, digits, '-', '_' and '.'"
  })
)

/** The merchant's order id. It becomes part of the payment id and of URL paths (`PathIdString`). */
export const ExternalId = PathIdString.pipe(Schema.brand("ExternalId"))
export type ExternalId = typeof ExternalId.Type

export const EventId = IdString.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

export const LedgerEntryId = IdString.pipe(Schema.brand("LedgerEntryId"))
export type LedgerEntryId = typeof LedgerEntryId.Type

/** The bank's own id of a transfer; incoming transfers are idempotent on it. */
export const BankTransactionId = IdString.pipe(Schema.brand("BankTransactionId"))
export type BankTransactionId = typeof BankTransactionId.Type

export const PartnerId = IdString.pipe(Schema.brand("PartnerId"))
export type PartnerId = typeof PartnerId.Type

export const TeamId = IdString.pipe(Schema.brand("TeamId"))
export type TeamId = typeof TeamId.Type

export const ScheduleId = IdString.pipe(Schema.brand("ScheduleId"))
export type ScheduleId = typeof ScheduleId.Type

/** A payout of a schedule; also the `reference` of its bank transfer (the bank deduplicates on it). */
export const PayoutId = IdString.pipe(Schema.brand("PayoutId"))
export type PayoutId = typeof PayoutId.Type

/** The public half of an API credential (of a user or a partner); the secret is never an id. */
export const ClientId = IdString.pipe(Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

export const SplitPaymentId = IdString.pipe(Schema.brand("SplitPaymentId"))
export type SplitPaymentId = typeof SplitPaymentId.Type

export const PayoutAccountId = IdString.pipe(Schema.brand("PayoutAccountId"))
export type PayoutAccountId = typeof PayoutAccountId.Type

export const VerificationRequestId = IdString.pipe(Schema.brand("VerificationRequestId"))
export type VerificationRequestId = typeof VerificationRequestId.Type

export const SplitPayoutId = IdString.pipe(Schema.brand("SplitPayoutId"))
export type SplitPayoutId = typeof SplitPayoutId.Type

/** `length` uniformly random digits in base `radix`, from `Random` (not for secrets). */
export { randomDigits } from "./internal/ids.js"
