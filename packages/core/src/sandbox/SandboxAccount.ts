/**
 * Bank accounts a sandbox tester registers at the sandbox bank: external CBUs/CVUs with an alias,
 * a holder name and a CUIT, which the bank then knows like any account (holder look-ups, payouts
 * and refunds to them). Each belongs to the merchant that registered it (its `user_id`), which
 * alone lists it and reads what it received.
 */
import { Schema } from "effect"
import { Alias, Cuit, isValidCbu } from "../bank/BankAccount.js"
import { CuitInput, DisplayName } from "../accounts/Accounts.js"
import { UserId } from "../Ids.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** Accounts one merchant may have registered at a time (removing one frees its place). */
export const maxAccountsPerMerchant = 20

/** Received transfers one read answers, newest first. */
export const maxReceivedListed = 100

/** A 22-digit CBU or CVU with correct check digits. */
export const AccountNumber = Schema.String.pipe(
  Schema.filter(isValidCbu, {
    message: () => "must be a valid 22-digit CBU or CVU (both check digits right)"
  })
)

export class SandboxAccount extends Class<SandboxAccount>("SandboxAccount")({
  /** The CBU or CVU. */
  cbu: AccountNumber,
  alias: Alias,
  holder_name: Schema.String,
  cuit: Cuit,
  user_id: UserId,
  creation_timestamp: Timestamp
}) {}

/**
 * `POST /sandbox/bank-accounts`. Every field may be left out: a random valid CBU, a random
 * three-word alias, and the merchant's own name and CUIT (an account of its own, which payout
 * schedules require).
 */
export class RegisterRequest extends Class<RegisterRequest>("SandboxBankAccountRequest")({
  cbu: Schema.optional(AccountNumber),
  alias: Schema.optional(Alias),
  holder_name: Schema.optional(DisplayName),
  /** Bare digits or written with dashes ("30-71234567-1"). */
  cuit: Schema.optional(CuitInput)
}) {}
