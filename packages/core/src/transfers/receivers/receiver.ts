/**
 * What every receiver of incoming money (a payment, a fixed customer, a split payment) shares:
 * the shape of its pure `apply`, the fee breakdown of a credited transfer and the ledger lines
 * that book it. A receiver computes; `Transfers` writes what it computed, in one unit of work.
 */
import { type DateTime, Either } from "effect"
import { senderProblems } from "../../bank/BankAccount.js"
import type { IncomingTransfer } from "../../bank/BankProvider.js"
import { credit, debit, type EntryInput } from "../../ledger/Ledger.js"
import * as LedgerAccount from "../../ledger/LedgerAccount.js"
import type * as Money from "../../Money.js"
import { transferNetwork } from "../../payments/Payment.js"
import type { makeEvent } from "../../webhooks/Outbox.js"
import * as FeePolicy from "../FeePolicy.js"
import { TransferRecord, type TransferTarget } from "../TransferRepository.js"

/** An event to append, before it gets its id and time (`makeEvent`). */
export type EventInput = Parameters<typeof makeEvent>[0]

/** What crediting a transfer to a receiver makes: all of it computed, nothing written yet. */
export interface Credit<S> {
  /** The receiver's next state. */
  readonly next: S
  /** The transfer log's row. */
  readonly record: TransferRecord
  /** The balanced ledger entry: the gross amount in, fees apart, the rest to the receiver. */
  readonly entry: EntryInput
  readonly events: ReadonlyArray<EventInput>
}

/** Why the money is returned to its sender instead. */
export interface Refusal {
  readonly _tag: "Refusal"
  readonly reason: string
}

export const refuse = (reason: string): Refusal => ({ _tag: "Refusal", reason })

/** Money in another currency than ARS is returned by every receiver. */
export const arsOnly = (transfer: IncomingTransfer): Either.Either<void, Refusal> =>
  transfer.amount.currency === "ARS" ? Either.void : Either.left(refuse("transfers are in ARS only"))

/** Why a receiver returns money, decided before its fees are computed (`apply` decides it too). */
export type Refuse<S> = (
  state: S,
  transfer: IncomingTransfer,
  now: DateTime.Utc
) => Either.Either<void, Refusal>

/** A receiver's pure credit (`C`: what it makes besides the common parts, as a customer's transaction). */
export type Apply<S, C extends Credit<S> = Credit<S>> = (
  state: S,
  transfer: IncomingTransfer,
  fees: FeePolicy.Fees,
  now: DateTime.Utc
) => Either.Either<C, Refusal>

/** The ledger lines of a credited transfer: the bank holds the gross amount, fees go to us. */
export const creditPostings = (
  amount: Money.Money,
  fees: FeePolicy.Fees,
  beneficiary: LedgerAccount.LedgerAccount
) => [
  debit(LedgerAccount.bankClearing, amount),
  credit(beneficiary, FeePolicy.credited(amount, fees)),
  credit(LedgerAccount.platformCommission, fees.commission),
  ...[...fees.commission_taxes, ...fees.taxes].map((t) =>
    credit(LedgerAccount.platformTax(t.tax_type), t.tax_amount)
  )
]

/**
 * The fee breakdown of a credited transfer, as both a payment's transaction and a customer's
 * transaction show it (SPEC's Transaction fields).
 */
export const breakdown = (transfer: IncomingTransfer, fees: FeePolicy.Fees, now: DateTime.Utc) => {
  const problems = senderProblems(transfer.sender_account, transfer.sender_cuit)
  return {
    address: transfer.cvu,
    amount: transfer.amount,
    commission: fees.commission_rate,
    commission_amount: fees.commission,
    commission_taxes: fees.commission_taxes,
    commission_tax_amount: FeePolicy.totalOf("ARS", fees.commission_taxes),
    taxes: fees.taxes,
    tax_amount: FeePolicy.totalOf("ARS", fees.taxes),
    credited_amount: FeePolicy.credited(transfer.amount, fees),
    currency: "ARS",
    network: transferNetwork,
    sender_address: transfer.sender_account,
    transaction_status: "PROCESSED",
    creation_timestamp: now,
    sender_problems: problems.length === 0 ? null : problems
  } as const
}

/** What a credit is made of, from the receiver's parts. */
export const creditOf = <S>(input: {
  readonly next: S
  readonly transfer: IncomingTransfer
  readonly fees: FeePolicy.Fees
  readonly now: DateTime.Utc
  readonly target: Exclude<TransferTarget, "bounced">
  readonly target_id: string
  readonly kind: string
  readonly account: LedgerAccount.LedgerAccount
  readonly events: ReadonlyArray<EventInput>
}): Credit<S> => ({
  next: input.next,
  // The transfer's own typed values: not checked again (every credited transfer).
  record: new TransferRecord(
    {
      bank_transaction_id: input.transfer.bank_transaction_id,
      cvu: input.transfer.cvu,
      amount: input.transfer.amount,
      target: input.target,
      target_id: input.target_id,
      received_at: input.now
    },
    true
  ),
  entry: {
    kind: input.kind,
    reference: input.transfer.bank_transaction_id,
    postings: creditPostings(input.transfer.amount, input.fees, input.account)
  },
  events: input.events
})
