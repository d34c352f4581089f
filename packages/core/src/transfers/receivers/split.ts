/**
 * A split payment as a receiver of incoming money: the transfer, fees apart, goes to the split's
 * balance, its totals grow, and "Split funds received" is sent. Once the split's payouts are
 * instructed it refuses more money (`Split.refusal`).
 */
import { type DateTime, Either } from "effect"
import type { IncomingTransfer } from "../../bank/BankProvider.js"
import * as LedgerAccount from "../../ledger/LedgerAccount.js"
import * as Money from "../../Money.js"
import * as Split from "../../splits/Split.js"
import { splitEventInput } from "../../splits/splitShared.js"
import * as FeePolicy from "../FeePolicy.js"
import { type Credit, creditOf, type Refusal, refuse } from "./receiver.js"

/** Why the split returns `transfer`, if it does (`Split.refusal`). */
export const refusal = (
  split: Split.SplitPayment,
  transfer: IncomingTransfer
): Either.Either<void, Refusal> => {
  const reason = Split.refusal(split, transfer.amount)
  return reason === undefined ? Either.void : Either.left(refuse(reason))
}

/** Credits `transfer` to the split: its totals, its status RECEIVED, the event. */
export const apply = (
  split: Split.SplitPayment,
  transfer: IncomingTransfer,
  fees: FeePolicy.Fees,
  now: DateTime.Utc
): Either.Either<Credit<Split.SplitPayment>, Refusal> => {
  const refused = refusal(split, transfer)
  if (Either.isLeft(refused)) return Either.left(refused.left)
  const id = split.split_payment_id
  const next = new Split.SplitPayment({
    ...split,
    // Funds arriving always move a split to (or keep it) RECEIVED.
    payment_status: Either.getOrThrow(
      Split.transition(Split.paymentMachine, split.payment_status, "RECEIVED")
    ),
    amount_received: Money.orThrow(Money.add(split.amount_received, transfer.amount)),
    amount_credited: Money.orThrow(
      Money.add(split.amount_credited, FeePolicy.credited(transfer.amount, fees))
    ),
    last_modified_timestamp: now
  })
  return Either.right(
    creditOf({
      next,
      transfer,
      fees,
      now,
      target: "split",
      target_id: id,
      kind: "split.transfer",
      account: LedgerAccount.splitBalance(id),
      events: [
        splitEventInput(next, "split.funds_received", {
          message: "split.funds_received",
          split_payment_id: id,
          external_id: split.external_id,
          amount: Money.format(transfer.amount),
          hold_until: null
        })
      ]
    })
  )
}
