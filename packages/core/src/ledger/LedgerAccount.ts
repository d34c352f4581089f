/**
 * The chart of accounts. A ledger account is a string whose prefix fixes its normal side and
 * whether its balance may go negative; the builders below are the only way to name one.
 */
import { Schema } from "effect"

export const LedgerAccount = Schema.String.pipe(Schema.brand("LedgerAccount"))
export type LedgerAccount = typeof LedgerAccount.Type

const account = (s: string) => s as LedgerAccount

/** Money at the bank that the bank has told us about (an asset: debit-normal). */
export const bankClearing = account("bank:clearing")
/** What we owe a merchant and it can be paid out. */
export const merchantAvailable = (userId: string) => account(`merchant:${userId}:available`)
/** A merchant's money sent to the bank in a payout not yet confirmed. */
export const merchantInTransit = (userId: string) => account(`merchant:${userId}:in_transit`)
/** A fixed customer's balance. */
export const customerBalance = (userId: string, customerId: string) =>
  account(`customer:${userId}:${customerId}`)
/** Funds received by a split payment and not yet paid out. */
export const splitBalance = (splitId: string) => account(`split:${splitId}:available`)
/** Funds of a split payment committed to payouts (held, then in transit). */
export const splitHeld = (splitId: string) => account(`split:${splitId}:held`)
/** Transfers to closed CVUs, owed back to their senders until returned. */
export const bouncedTransfers = account("suspense:bounced")
/** Our commission revenue. */
export const platformCommission = account("platform:commission")
/** Taxes collected, owed to the tax authority. */
export const platformTax = (taxType: string) => account(`platform:tax:${taxType}`)

export type NormalSide = "debit" | "credit"

/** Assets (the bank) are debit-normal; everything owed or earned is credit-normal. */
export const normalSide = (a: LedgerAccount): NormalSide => (a.startsWith("bank:") ? "debit" : "credit")

/** Balances owed to someone must never go negative. */
export const mustStayNonNegative = (a: LedgerAccount): boolean =>
  a.startsWith("merchant:") ||
  a.startsWith("customer:") ||
  a.startsWith("split:") ||
  a.startsWith("suspense:")

/** Converts a raw signed sum (debits positive) to the balance on the account's normal side. */
export const toNormal = (a: LedgerAccount, signedSum: bigint): bigint =>
  normalSide(a) === "debit" ? signedSum : -signedSum
