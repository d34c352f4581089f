/**
 * A one-off payment as a receiver of incoming money: the transfer becomes one of its
 * transactions and its status follows from the total received (`Payment.statusFor`). Money
 * reaching an expired or closed payment's CVU is refused.
 */
import { type DateTime, Either, Option } from "effect"
import type { User } from "../../accounts/User.js"
import type { IncomingTransfer } from "../../bank/BankProvider.js"
import * as LedgerAccount from "../../ledger/LedgerAccount.js"
import * as Money from "../../Money.js"
import * as Payment from "../../payments/Payment.js"
import { isClosed, paymentUpdatedInput } from "../../payments/paymentEvents.js"
import type * as FeePolicy from "../FeePolicy.js"
import { arsOnly, breakdown, type Credit, creditOf, type Refusal, refuse } from "./receiver.js"

/** A payment and its owner (whose name and CUIT the transaction shows, whose tolerance applies). */
export interface PaymentState {
  readonly payment: Payment.Payment
  readonly owner: Option.Option<User>
}

/** Why money reaching the payment's CVU now is returned, if it is: not ARS, or the CVU closed. */
export const refusal = (
  state: PaymentState,
  transfer: IncomingTransfer,
  now: DateTime.Utc
): Either.Either<void, Refusal> =>
  Either.flatMap(arsOnly(transfer), () =>
    state.payment.payment_status === "EXPIRED" || isClosed(state.payment, now)
      ? Either.left(refuse("the payment's CVU is closed"))
      : Either.void
  )

/**
 * The transaction a credited transfer adds to the payment (SPEC's Transaction): made of typed
 * values (the transfer, the fees, the payment's own), so its classes do not check them again, nor
 * does the payment that holds it (`apply`).
 */
const transactionOf = (
  transfer: IncomingTransfer,
  payment: Payment.Payment,
  owner: Option.Option<User>,
  fees: FeePolicy.Fees,
  now: DateTime.Utc
) =>
  new Payment.Transaction(
    {
      ...breakdown(transfer, fees, now),
      address: payment.cvu,
      transaction_data: {
        PROCESSED: new Payment.TransferDetails(
          {
            amount: transfer.amount,
            currency: "ARS",
            recipient: payment.cvu,
            recipientCuit: Option.match(owner, { onNone: () => "", onSome: (u) => u.cuit }),
            recipientTitular: Option.match(owner, { onNone: () => "", onSome: (u) => u.name }),
            sender: transfer.sender_account,
            senderCuit: transfer.sender_cuit,
            senderTitular: transfer.sender_name,
            trxId: transfer.bank_transaction_id
          },
          true
        )
      }
    },
    true
  )

/** Credits `transfer` to the payment: a transaction more, totals and status recomputed. */
export const apply = (
  state: PaymentState,
  transfer: IncomingTransfer,
  fees: FeePolicy.Fees,
  now: DateTime.Utc
): Either.Either<Credit<PaymentState>, Refusal> =>
  Either.gen(function* () {
    const { owner, payment } = state
    yield* refusal(state, transfer, now)
    const transactions = [...payment.transactions, transactionOf(transfer, payment, owner, fees, now)]
    const tolerance = Option.match(owner, {
      onNone: () => Money.zero("ARS"),
      onSome: (u) => u.transfer_tolerance
    })
    const next = new Payment.Payment(
      {
        ...payment,
        transactions,
        transaction_fields: Payment.transactionFields(payment.quoteAmount, transactions),
        last_modified_timestamp: now,
        payment_status: Payment.statusFor(payment.quoteAmount, Payment.totalReceived(transactions), tolerance)
      },
      true
    )
    return creditOf({
      next: { payment: next, owner },
      transfer,
      fees,
      now,
      target: "payment",
      target_id: payment.id,
      kind: "payment.transfer",
      account: LedgerAccount.merchantAvailable(payment.user_id),
      events: [paymentUpdatedInput(next)]
    })
  })
