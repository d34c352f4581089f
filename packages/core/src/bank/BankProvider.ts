/**
 * The port to the bank (PSP) that holds the CVUs. Everything outside our database that moves
 * money or names an account goes through here. The sandbox implementation lives in
 * `SandboxBank.ts`.
 */
import { Context, type DateTime, type Effect, Schema } from "effect"
import { Alias, Cuit, Cvu } from "./BankAccount.js"
import { BankTransactionId } from "../Ids.js"
import { Money } from "../Money.js"
import { Class } from "../internal/schemaClass.js"

/** A CVU issued to us, with its alias. */
export class BankAccountRef extends Class<BankAccountRef>("BankAccountRef")({
  cvu: Cvu,
  alias: Alias
}) {}

/** The holder of an account, as the bank reports it. */
export class AccountHolder extends Class<AccountHolder>("AccountHolder")({
  /** CVU or CBU of the account (an alias resolves to it). */
  account: Schema.String,
  cuit: Cuit,
  name: Schema.String
}) {}

/**
 * A transfer the bank notifies us about. The sender's fields are what the bank says, unchecked:
 * the money arrived whatever they hold, and `senderProblems` says what is wrong with them (the
 * transfer is credited and shows it; no refund goes there).
 */
export class IncomingTransfer extends Class<IncomingTransfer>("IncomingTransfer")({
  bank_transaction_id: BankTransactionId,
  /** Our CVU that received the money. */
  cvu: Cvu,
  amount: Money,
  /** The sender's CUIT, as the bank reported it. */
  sender_cuit: Schema.String,
  sender_name: Schema.String,
  /** The sender's CVU/CBU, as the bank reported it. */
  sender_account: Schema.String
}) {}

/**
 * The bank refused or failed an operation. `alias_taken`: the alias is another holder's;
 * `alias_invalid`: the bank refuses its format; `alias_change_refused`: the bank refuses to change
 * this CVU's alias now (too recent a change); `unavailable`: trying later can help.
 */
export class BankError extends Schema.TaggedError<BankError>()("BankError", {
  reason: Schema.Literal(
    "alias_taken",
    "alias_invalid",
    "alias_change_refused",
    "holder_not_found",
    "rejected",
    "unavailable"
  ),
  message: Schema.String
}) {}

export interface BankTransferRequest {
  /** Destination CVU, CBU or alias. */
  readonly to: string
  readonly amount: Money
  /** Our own reference, unique per payout or refund (its id); the bank deduplicates on it. */
  readonly reference: string
}

/**
 * The bank took an outgoing transfer: still `pending` (it may yet fail) or already `completed`.
 * A repeated send with the same reference answers the transfer the bank already holds.
 */
export interface TransferAcceptance {
  readonly status: "pending" | "completed"
  readonly bank_transaction_id: BankTransactionId
}

/** Where an outgoing transfer stands at the bank, found by our reference. */
export type TransferStatus =
  | { readonly _tag: "Pending"; readonly bank_transaction_id: BankTransactionId }
  | { readonly _tag: "Completed"; readonly bank_transaction_id: BankTransactionId }
  /** Failed after it was accepted (or refused): the money never left. */
  | {
      readonly _tag: "Failed"
      readonly bank_transaction_id: BankTransactionId | null
      readonly reason: string
    }
  /** The bank holds no transfer with that reference: it never arrived, resending it is safe. */
  | { readonly _tag: "NotFound" }

/** A transfer of the statement that cannot be booked as the bank describes it (a field unreadable). */
export interface UnreadableTransfer {
  /** The bank's id of the transfer, or "" when not even that can be read. */
  readonly bank_transaction_id: string
  /** Which field, and why. */
  readonly reason: string
  /** The entry as the bank sent it (JSON). */
  readonly body: string
}

/** What the statement of a window holds: the transfers in, and the entries that cannot be read. */
export interface Statement {
  readonly transfers: ReadonlyArray<IncomingTransfer>
  readonly unreadable: ReadonlyArray<UnreadableTransfer>
}

/** A window of the collecting account's statement: from `from` (included) to `to` (excluded). */
export interface IncomingWindow {
  readonly from: DateTime.Utc
  readonly to: DateTime.Utc
}

export class BankProvider extends Context.Tag("@cobro/core/BankProvider")<
  BankProvider,
  {
    /**
     * Opens a CVU. With `alias` the bank must assign exactly that alias (else `alias_taken`).
     * `holder`: the merchant the CVU collects for, for a bank that opens CVUs in its clients'
     * names (then `lookupHolder` of the CVU answers it, as payers' banks show it); a bank that
     * opens them under the platform's own name ignores it.
     */
    readonly openAccount: (request: {
      readonly alias?: Alias | undefined
      readonly holder?: { readonly cuit: Cuit; readonly name: string } | undefined
    }) => Effect.Effect<BankAccountRef, BankError>
    /** Changes the alias of an open CVU; the bank may refuse (`alias_change_refused`). */
    readonly changeAlias: (cvu: Cvu, alias: Alias) => Effect.Effect<BankAccountRef, BankError>
    /** Closes a CVU; later transfers to it are bounced. Releasing twice is not an error. */
    readonly releaseAccount: (cvu: Cvu) => Effect.Effect<void, BankError>
    /** Looks up who holds a CVU, CBU or alias. */
    readonly lookupHolder: (address: string) => Effect.Effect<AccountHolder, BankError>
    /**
     * Sends money out; idempotent on `reference`. Answers the bank's acceptance; `unavailable`
     * means the outcome is unknown (the bank may hold the transfer): ask `transferStatus`, never
     * count it as failed. Any other `BankError` is a definitive refusal: nothing was sent.
     */
    readonly sendTransfer: (transfer: BankTransferRequest) => Effect.Effect<TransferAcceptance, BankError>
    /** Where the transfer sent with `reference` stands; `unavailable` when the bank cannot say. */
    readonly transferStatus: (reference: string) => Effect.Effect<TransferStatus, BankError>
    /** Returns a received transfer to its sender (a bounce); idempotent on the transfer id. */
    readonly returnTransfer: (transfer: IncomingTransfer) => Effect.Effect<void, BankError>
    /**
     * The transfers received into our collecting account (any of our CVUs) that the bank booked
     * in `[from, to)`: the statement reconciliation reads to find notifications that never came.
     * An entry that cannot be read is `unreadable` (quarantined), never dropped nor guessed at.
     */
    readonly incomingTransfers: (window: IncomingWindow) => Effect.Effect<Statement, BankError>
  }
>() {}
