/**
 * Bank accounts a sandbox tester registers at the sandbox bank: external CBUs/CVUs with an alias,
 * a holder name and a CUIT, which the bank then knows like any account (holder look-ups, payouts
 * and refunds to them). Each belongs to the merchant that registered it (its `user_id`), which
 * alone lists it and reads what it received.
 */
import { Schema } from "effect"
import { Accounts, BankAccount, Ids, Wire } from "@cobro/core"

/** Accounts one merchant may have registered at a time (removing one frees its place). */
export const maxAccountsPerMerchant = 20

/** Received transfers one read answers, newest first. */
export const maxReceivedListed = 100

/** A 22-digit CBU or CVU with correct check digits. */
export const AccountNumber = Schema.String.pipe(
  Schema.filter(BankAccount.isValidCbu, {
    message: () => "must be a valid 22-digit CBU or CVU (both check digits right)"
  })
)

export class SandboxAccount extends Wire.Class<SandboxAccount>("SandboxAccount")({
  /** The CBU or CVU. */
  cbu: AccountNumber,
  alias: BankAccount.Alias,
  holder_name: Schema.String,
  cuit: BankAccount.Cuit,
  user_id: Ids.UserId,
  creation_timestamp: Wire.Timestamp
}) {}

/**
 * `POST /sandbox/bank-accounts`. Every field may be left out: a random valid CBU, a random
 * three-word alias, and the merchant's own name and CUIT (an account of its own, which payout
 * schedules require).
 */
export class RegisterRequest extends Wire.Class<RegisterRequest>("SandboxBankAccountRequest")({
  cbu: Schema.optional(AccountNumber),
  alias: Schema.optional(BankAccount.Alias),
  holder_name: Schema.optional(Accounts.DisplayName),
  /** Bare digits or written with dashes ("30-71234567-1"). */
  cuit: Schema.optional(Accounts.CuitInput)
}) {}
