/**
 * A fixed customer as a receiver of incoming money: each transfer is a customer transaction, its
 * credited amount goes to the customer's balance (which mirrors the ledger account
 * `customerBalance`) and "Customer payment received" is sent. A customer takes any ARS amount.
 */
import { type DateTime, Either } from "effect"
import type { IncomingTransfer } from "../../bank/BankProvider.js"
import * as Customer from "../../customers/Customer.js"
import * as LedgerAccount from "../../ledger/LedgerAccount.js"
import * as Money from "../../Money.js"
import * as FeePolicy from "../FeePolicy.js"
import { arsOnly, breakdown, type Credit, creditOf, type Refusal } from "./receiver.js"

/** The transfer log's `target_id` of a customer (`Customer.transferTargetId`). */
export const targetId = Customer.transferTargetId

/** A customer, and the id the transaction of the transfer it is about to receive takes. */
export interface CustomerState {
  readonly customer: Customer.Customer
  readonly transaction_id: Customer.CustomerTransactionId
}

/** A credit to a customer also stores the customer transaction it makes. */
export interface CustomerCredit extends Credit<CustomerState> {
  readonly transaction: Customer.CustomerTransaction
}

/** A customer takes any amount in ARS. */
export const refusal = (_: CustomerState, transfer: IncomingTransfer): Either.Either<void, Refusal> =>
  arsOnly(transfer)

/** Credits `transfer` to the customer: its transaction, its balance, the event. */
export const apply = (
  state: CustomerState,
  transfer: IncomingTransfer,
  fees: FeePolicy.Fees,
  now: DateTime.Utc
): Either.Either<CustomerCredit, Refusal> =>
  Either.gen(function* () {
    const { customer, transaction_id } = state
    yield* refusal(state, transfer)
    const transaction = new Customer.CustomerTransaction({
      ...breakdown(transfer, fees, now),
      transaction_id,
      customer_id: customer.customer_id,
      user_id: customer.user_id,
      sender_cuit: transfer.sender_cuit,
      sender_name: transfer.sender_name,
      bank_transaction_id: transfer.bank_transaction_id
    })
    const balance = Money.orThrow(Money.add(customer.balance, FeePolicy.credited(transfer.amount, fees)))
    const credit = creditOf({
      next: { customer: new Customer.Customer({ ...customer, balance }), transaction_id },
      transfer,
      fees,
      now,
      target: "customer",
      target_id: targetId(customer),
      kind: "customer.transfer",
      account: LedgerAccount.customerBalance(customer.user_id, customer.customer_id),
      events: [
        {
          type: "customer.payment_received",
          user_id: customer.user_id,
          webhook_url: customer.webhook_url,
          payload: {
            message: Customer.paymentReceivedMessage,
            transactionId: transaction_id,
            customerId: customer.customer_id
          }
        }
      ]
    })
    return { ...credit, transaction }
  })
