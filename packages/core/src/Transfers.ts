/**
 * Incoming transfers: the bank tells us money reached one of our CVUs, and we credit whatever
 * that CVU belongs to. Each notification is one unit of work — the transfer log (idempotency on
 * the bank's transaction id), the credited record, the new state, a balanced ledger entry and the
 * outbox event commit together. Money reaching a closed or unknown CVU is recorded and returned.
 */
import { DateTime, Effect, Option } from "effect"
import type { Cvu } from "./BankAccount.js"
import { BankProvider, type IncomingTransfer } from "./BankProvider.js"
import { CustomerRepository } from "./CustomerRepository.js"
import { Customers, transferTargetId } from "./Customers.js"
import { InvalidInput, ProviderFailure } from "./Errors.js"
import * as FeePolicy from "./FeePolicy.js"
import { emitPaymentUpdated, isClosed } from "./internal/paymentEvents.js"
import { Ledger, credit, debit } from "./Ledger.js"
import * as Accounts from "./LedgerAccount.js"
import * as Money from "./Money.js"
import { Outbox } from "./Outbox.js"
import * as P from "./Payment.js"
import { PaymentRepository } from "./PaymentRepository.js"
import { Splits } from "./Splits.js"
import { Transactor } from "./Transactor.js"
import { TransferRepository, type TransferTarget } from "./TransferRepository.js"
import { creditPostings, type IngestOutcome, recordTransfer } from "./internal/transferLog.js"
import { UserRepository } from "./UserRepository.js"

export { type IngestOutcome, creditPostings } from "./internal/transferLog.js"

export class Transfers extends Effect.Service<Transfers>()("@cobro/core/Transfers", {
  effect: Effect.gen(function* () {
    const log = yield* TransferRepository
    const payments = yield* PaymentRepository
    const users = yield* UserRepository
    const bank = yield* BankProvider
    const fees = yield* FeePolicy.FeePolicy
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const transactor = yield* Transactor
    const customerRepo = yield* CustomerRepository
    const customers = yield* Customers
    const splits = yield* Splits

    const record = (transfer: IncomingTransfer, target: TransferTarget, target_id: string | null) =>
      Effect.provideService(recordTransfer(transfer, target, target_id), TransferRepository, log)

    /** Records the transfer as bounced, books it in and out of suspense, and returns it. */
    const bounce = (transfer: IncomingTransfer, target_id: string | null, reason: string) =>
      Effect.gen(function* () {
        yield* record(transfer, "bounced", target_id)
        const ref = transfer.bank_transaction_id
        yield* ledger.post({
          kind: "transfer.bounced.received",
          reference: ref,
          postings: [
            debit(Accounts.bankClearing, transfer.amount),
            credit(Accounts.bouncedTransfers, transfer.amount)
          ]
        })
        yield* bank.returnTransfer(transfer).pipe(
          Effect.mapError(
            (e) =>
              new ProviderFailure({
                key: "bank.unavailable",
                message: `returning the transfer failed: ${e.message}`
              })
          )
        )
        yield* ledger.post({
          kind: "transfer.bounced.returned",
          reference: ref,
          postings: [
            debit(Accounts.bouncedTransfers, transfer.amount),
            credit(Accounts.bankClearing, transfer.amount)
          ]
        })
        return { _tag: "Bounced", reason } as IngestOutcome
      })

    /** Credits a payment read under its row lock (`findByCvuForUpdate`). */
    const creditPayment = (transfer: IncomingTransfer, payment: P.Payment) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        if (transfer.amount.currency !== "ARS")
          return yield* bounce(transfer, payment.id, "transfers are in ARS only")
        if (payment.payment_status === "EXPIRED" || isClosed(payment, now)) {
          return yield* bounce(transfer, payment.id, "the payment's CVU is closed")
        }
        yield* record(transfer, "payment", payment.id)
        const applied = yield* fees.feesFor({
          user_id: payment.user_id,
          amount: transfer.amount,
          kind: "payment"
        })
        const user = yield* users.findById(payment.user_id)
        const transaction = new P.Transaction({
          address: payment.cvu,
          amount: transfer.amount,
          commission: applied.commission_rate,
          commission_amount: applied.commission,
          commission_taxes: applied.commission_taxes,
          commission_tax_amount: FeePolicy.totalOf("ARS", applied.commission_taxes),
          creation_timestamp: now,
          credited_amount: FeePolicy.credited(transfer.amount, applied),
          currency: "ARS",
          network: P.transferNetwork,
          sender_address: transfer.sender_account,
          taxes: applied.taxes,
          tax_amount: FeePolicy.totalOf("ARS", applied.taxes),
          transaction_status: "PROCESSED",
          transaction_data: {
            PROCESSED: new P.TransferDetails({
              amount: transfer.amount,
              currency: "ARS",
              recipient: payment.cvu,
              recipientCuit: Option.match(user, { onNone: () => "", onSome: (u) => u.cuit }),
              recipientTitular: Option.match(user, { onNone: () => "", onSome: (u) => u.name }),
              sender: transfer.sender_account,
              senderCuit: transfer.sender_cuit,
              senderTitular: transfer.sender_name,
              trxId: transfer.bank_transaction_id
            })
          }
        })
        const transactions = [...payment.transactions, transaction]
        const tolerance = Option.match(user, {
          onNone: () => Money.zero("ARS"),
          onSome: (u) => u.transfer_tolerance
        })
        // Validated once, as `settled`: this intermediate only computes the amount received.
        const updated = new P.Payment(
          {
            ...payment,
            transactions,
            transaction_fields: P.transactionFields(payment.quoteAmount, transactions),
            last_modified_timestamp: now
          },
          true
        )
        const settled = new P.Payment({
          ...updated,
          payment_status: P.settle(payment.quoteAmount, updated.totalReceived, tolerance)
        })
        yield* payments.update(settled)
        yield* ledger.post({
          kind: "payment.transfer",
          reference: transfer.bank_transaction_id,
          postings: creditPostings(transfer.amount, applied, Accounts.merchantAvailable(payment.user_id))
        })
        yield* emitPaymentUpdated(outbox, settled)
        return { _tag: "Credited", target: "payment", target_id: payment.id } as IngestOutcome
      })

    /** Finds what a CVU belongs to and credits it; unknown CVUs bounce. */
    const route = (transfer: IncomingTransfer, cvu: Cvu) =>
      Effect.flatMap(
        payments.findByCvuForUpdate(cvu),
        Option.match({
          onNone: () => routeToCustomer(transfer, cvu),
          onSome: (payment) => creditPayment(transfer, payment)
        })
      )

    /** A CVU that is no payment's may be a fixed customer's (its current one). */
    const routeToCustomer = (transfer: IncomingTransfer, cvu: Cvu) =>
      Effect.flatMap(
        customerRepo.findByCvu(cvu),
        Option.match({
          onNone: () => routeToSplit(transfer, cvu),
          onSome: (customer) =>
            transfer.amount.currency !== "ARS"
              ? bounce(transfer, transferTargetId(customer), "transfers are in ARS only")
              : Effect.as(customers.creditTransfer(customer, transfer), {
                  _tag: "Credited",
                  target: "customer",
                  target_id: transferTargetId(customer)
                } as IngestOutcome)
        })
      )

    /** Else a split payment's CVU; a split that refuses the money (see `Split.refusal`) bounces it. */
    const routeToSplit = (transfer: IncomingTransfer, cvu: Cvu) =>
      Effect.flatMap(
        splits.findByCvu(cvu),
        Option.match({
          onNone: () => bounce(transfer, null, "unknown CVU"),
          onSome: (split) =>
            Effect.flatMap(splits.creditTransfer(split, transfer), (outcome) =>
              outcome._tag === "Refused"
                ? bounce(transfer, split.split_payment_id, outcome.reason)
                : Effect.succeed<IngestOutcome>(outcome)
            )
        })
      )

    /**
     * A repeated notification is recognised by the transfer log's key: every receiver records
     * the transfer before anything else it writes, the insert finds the first notification's row
     * (`AlreadyRecorded`), the unit of work rolls back and the first outcome is answered. No
     * read ahead of it: repeats are rare, and the common case saves a statement.
     */
    const ingest = Effect.fn("Transfers.ingest")(function* (transfer: IncomingTransfer) {
      if (transfer.amount.minor <= 0n) return yield* InvalidInput.of("amount", "must be positive")
      return yield* transactor
        .withTransaction(route(transfer, transfer.cvu))
        .pipe(
          Effect.catchTag("AlreadyRecorded", () =>
            Effect.flatMap(log.findById(transfer.bank_transaction_id), (previous) =>
              Option.isSome(previous)
                ? Effect.succeed<IngestOutcome>({ _tag: "Duplicate", previous: previous.value })
                : Effect.dieMessage("transfer log lost a record")
            )
          )
        )
    })

    return { ingest } as const
  })
}) {}
