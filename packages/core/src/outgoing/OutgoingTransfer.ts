/**
 * An outgoing transfer in flight: money that left a balance for the bank and whose fate the
 * bank has not confirmed yet. One record per transfer, keyed by our reference (the payout's or
 * refund's id, the bank's idempotency key), whatever the transfer is for; the owner (a schedule
 * payout, a split payout, a refund) keeps its own record and is told the outcome once.
 *
 * Its money waits in `in_transit`; when the bank confirms, it goes to the bank
 * (`bank:clearing`); when the bank fails it, it goes back to `return_to`. Both moves are written
 * in the same unit of work as the settlement, so each transfer is settled exactly once.
 */
import { Schema } from "effect"
import { BankTransactionId } from "../Ids.js"
import { LedgerAccount } from "../ledger/LedgerAccount.js"
import { Money } from "../Money.js"
import { Class } from "../internal/schemaClass.js"
import { Timestamp } from "../Wire.js"

/** What a transfer is for: which owner hears of its outcome. */
export const TransferPurpose = Schema.Literal("schedule_payout", "split_payout", "refund")
export type TransferPurpose = typeof TransferPurpose.Type

/**
 * - `SENDING`: recorded; the bank may or may not hold it (never sent, or the answer was lost).
 * - `PENDING`: the bank accepted it; it may still complete or fail.
 * - `COMPLETED` / `FAILED`: settled, final.
 */
export const TransferState = Schema.Literal("SENDING", "PENDING", "COMPLETED", "FAILED")
export type TransferState = typeof TransferState.Type

export const inFlightStates: ReadonlyArray<TransferState> = ["SENDING", "PENDING"]

export class OutgoingTransfer extends Class<OutgoingTransfer>("OutgoingTransfer")({
  /** Our reference: the owner's payout or refund id; the bank deduplicates on it. */
  reference: Schema.String,
  purpose: TransferPurpose,
  /** The owner's record the outcome goes to (a split payment for a split payout). */
  owner_id: Schema.String,
  /** Destination CVU, CBU or alias. */
  destination: Schema.String,
  amount: Money,
  /** Where the money waits while the transfer is in flight. */
  in_transit: LedgerAccount,
  /** Where the money goes back to if the bank fails the transfer. */
  return_to: LedgerAccount,
  status: TransferState,
  bank_transaction_id: Schema.NullOr(BankTransactionId),
  /** Why the bank failed it (FAILED only). */
  failure_reason: Schema.NullOr(Schema.String),
  /** The last answer that left the outcome unknown (a timeout, a 5xx), for operators. */
  last_error: Schema.NullOr(Schema.String),
  /** How many times it was sent to the bank (each with the same reference). */
  sends: Schema.Int,
  /** How many times the bank was asked for its status. */
  checks: Schema.Int,
  /** When the settle job looks at it next; until then a send or check in progress owns it. */
  next_check_at: Timestamp,
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {}

/** A transfer's state as its first send starts: SENDING, sent once, not yet checked, no answer yet. */
export const firstSend = () =>
  ({
    status: "SENDING",
    bank_transaction_id: null,
    failure_reason: null,
    last_error: null,
    sends: 1,
    checks: 0
  }) as const

export const isInFlight = (t: OutgoingTransfer): boolean => inFlightStates.includes(t.status)
