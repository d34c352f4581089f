/**
 * The transfer log and the ledger lines shared by every receiver of incoming money (payments,
 * customers, split payments). Kept apart from `Transfers` so receivers do not import the router.
 */
import { Data, DateTime, Effect } from "effect"
import type { IncomingTransfer } from "../bank/BankProvider.js"
import * as FeePolicy from "./FeePolicy.js"
import { credit, debit } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import type * as Money from "../Money.js"
import { TransferRecord, TransferRepository, type TransferTarget } from "./TransferRepository.js"

/** What became of a notification. */
export type IngestOutcome =
  | { readonly _tag: "Credited"; readonly target: TransferTarget; readonly target_id: string }
  | { readonly _tag: "Bounced"; readonly reason: string }
  /** Seen before: nothing was credited again. `previous` is what the first notification did. */
  | { readonly _tag: "Duplicate"; readonly previous: TransferRecord }

/** The ledger lines of a credited transfer: the bank holds the gross amount, fees go to us. */
export const creditPostings = (
  amount: Money.Money,
  fees: FeePolicy.Fees,
  beneficiary: Accounts.LedgerAccount
) => [
  debit(Accounts.bankClearing, amount),
  credit(beneficiary, FeePolicy.credited(amount, fees)),
  credit(Accounts.platformCommission, fees.commission),
  ...[...fees.commission_taxes, ...fees.taxes].map((t) =>
    credit(Accounts.platformTax(t.tax_type), t.tax_amount)
  )
]

/** Another notification of the same bank transaction committed first (a race). */
export class AlreadyRecorded extends Data.TaggedError("AlreadyRecorded")<{}> {}

/**
 * Writes the transfer to the log, inside the crediting unit of work. Fails with
 * `AlreadyRecorded` when a concurrent notification of the same transaction won; `ingest` then
 * rolls back and answers `Duplicate`. Every receiver (payment, customer, split) calls this first.
 */
export const recordTransfer = (
  transfer: IncomingTransfer,
  target: TransferTarget,
  target_id: string | null
) =>
  Effect.gen(function* () {
    const log = yield* TransferRepository
    const inserted = yield* log.insert(
      new TransferRecord({
        bank_transaction_id: transfer.bank_transaction_id,
        cvu: transfer.cvu,
        amount: transfer.amount,
        target,
        target_id,
        received_at: yield* DateTime.now
      })
    )
    if (!inserted) return yield* new AlreadyRecorded()
  })
