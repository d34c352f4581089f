/**
 * Incoming transfers: the bank tells us money reached one of our CVUs, and we credit whatever
 * that CVU belongs to. Each notification is one unit of work — the transfer log (idempotency on
 * the bank's transaction id), the credited record, the new state, a balanced ledger entry and the
 * outbox event commit together. Money reaching a closed or unknown CVU is recorded and returned.
 * Notifications that arrive together (`ingestAll`) answer the same, and those to open payments
 * share one unit of work per batch.
 */
import { DateTime, Effect, Either, Exit, Metric, Option } from "effect"
import type { Cvu } from "../bank/BankAccount.js"
import { BankProvider, type IncomingTransfer } from "../bank/BankProvider.js"
import { CustomerRepository } from "../customers/CustomerRepository.js"
import { Customers, transferTargetId } from "../customers/Customers.js"
import { type Conflict, InvalidInput, ProviderFailure } from "../Errors.js"
import * as FeePolicy from "./FeePolicy.js"
import * as GroupCommit from "./groupCommit.js"
import { emitPaymentUpdated, isClosed, paymentUpdated } from "../payments/paymentEvents.js"
import { type EntryInput, Ledger, credit, debit } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import * as Money from "../Money.js"
import { Outbox, type OutboxEvent } from "../webhooks/Outbox.js"
import * as P from "../payments/Payment.js"
import { PaymentRepository } from "../payments/PaymentRepository.js"
import { Splits } from "../splits/Splits.js"
import { Transactor } from "../Transactor.js"
import { TransferRecord, TransferRepository, type TransferTarget } from "./TransferRepository.js"
import { creditPostings, type IngestOutcome, recordTransfer } from "./transferLog.js"
import type { User } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"

export { type IngestOutcome, creditPostings } from "./transferLog.js"

/** Most transfers a batch of `ingestAll` credits in one unit of work. */
export const batchSize = 100

/**
 * What `ingest` fails with: a notification it refuses (`InvalidInput`), the bank failing a
 * return (`ProviderFailure`), or the ledger refusing a movement (`Conflict`).
 */
export type IngestError = InvalidInput | ProviderFailure | Conflict

/** Why money reaching `payment`'s CVU now is returned rather than credited, if it is. */
const refusal = (transfer: IncomingTransfer, payment: P.Payment, now: DateTime.Utc): string | undefined =>
  transfer.amount.currency !== "ARS"
    ? "transfers are in ARS only"
    : payment.payment_status === "EXPIRED" || isClosed(payment, now)
      ? "the payment's CVU is closed"
      : undefined

/** Counts an ingested transfer by its outcome (`Metrics.transfersIngested`). */
const count = (outcome: IngestOutcome) =>
  Metric.increment(
    Metrics.transfersIngested[
      outcome._tag === "Credited" ? "credited" : outcome._tag === "Duplicate" ? "duplicate" : "returned"
    ]
  )

const credited = (payment: P.Payment): IngestOutcome => ({
  _tag: "Credited",
  target: "payment",
  target_id: payment.id
})

/**
 * What crediting `transfer` to the open `payment` makes, computed and not yet written: the
 * payment with the transaction added and its state settled, and the ledger entry.
 */
const creditOf = (
  transfer: IncomingTransfer,
  payment: P.Payment,
  user: Option.Option<User>,
  applied: FeePolicy.Fees,
  now: DateTime.Utc
) => {
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
  const entry: EntryInput = {
    kind: "payment.transfer",
    reference: transfer.bank_transaction_id,
    postings: creditPostings(transfer.amount, applied, Accounts.merchantAvailable(payment.user_id))
  }
  return { settled, entry }
}

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
        const refused = refusal(transfer, payment, now)
        if (refused !== undefined) return yield* bounce(transfer, payment.id, refused)
        yield* record(transfer, "payment", payment.id)
        const applied = yield* fees.feesFor({
          user_id: payment.user_id,
          amount: transfer.amount,
          kind: "payment"
        })
        const user = yield* users.findById(payment.user_id)
        const { settled, entry } = creditOf(transfer, payment, user, applied, now)
        yield* payments.update(settled)
        yield* ledger.post(entry)
        yield* emitPaymentUpdated(outbox, settled)
        return credited(payment)
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
    const ingestOne = (transfer: IncomingTransfer): Effect.Effect<IngestOutcome, IngestError> =>
      transfer.amount.minor <= 0n
        ? Effect.fail(InvalidInput.of("amount", "must be positive"))
        : transactor
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

    /**
     * The common case of a batch, in one unit of work: transfers in ARS to open payments, each
     * bank transaction's first notification in the batch and not recorded before. Their payments
     * are read and locked in one statement, their log rows, ledger entries and events written in
     * one statement each, and each payment written once, whatever number of its transfers the
     * batch holds. Answers the outcome of each transfer it credited, by its index in `batch`.
     */
    const creditTogether = (batch: ReadonlyArray<IncomingTransfer>) =>
      transactor.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const firsts = new Set<string>()
          const candidates = batch.flatMap((transfer, index) => {
            if (transfer.amount.minor <= 0n || firsts.has(transfer.bank_transaction_id)) return []
            firsts.add(transfer.bank_transaction_id)
            return [{ transfer, index }]
          })
          const found = yield* payments.findByCvusForUpdate(candidates.map((c) => c.transfer.cvu))
          const byCvu = new Map(found.map((p) => [p.cvu as string, p]))
          // Fees come first: a transfer whose fees exceed it would take from the merchant's
          // balance, which `ingest` checks entry by entry, so it is left to `ingest`. Every entry
          // of the batch then only adds to balances owed to someone, and checking them once all
          // are added (`postAll`) answers what checking each in turn would.
          const open: Array<{
            index: number
            transfer: IncomingTransfer
            payment: P.Payment
            applied: FeePolicy.Fees
          }> = []
          for (const { index, transfer } of candidates) {
            const payment = byCvu.get(transfer.cvu)
            if (payment === undefined || refusal(transfer, payment, now) !== undefined) continue
            const applied = yield* fees.feesFor({
              user_id: payment.user_id,
              amount: transfer.amount,
              kind: "payment"
            })
            if (FeePolicy.credited(transfer.amount, applied).minor >= 0n)
              open.push({ index, transfer, payment, applied })
          }
          const outcomes = new Map<number, IngestOutcome>()
          if (open.length === 0) return outcomes
          const recorded = new Set<string>(
            yield* log.insertAll(
              open.map(
                ({ payment, transfer }) =>
                  new TransferRecord({
                    bank_transaction_id: transfer.bank_transaction_id,
                    cvu: transfer.cvu,
                    amount: transfer.amount,
                    target: "payment",
                    target_id: payment.id,
                    received_at: now
                  })
              )
            )
          )
          const userOf = new Map<string, Option.Option<User>>()
          const current = new Map<string, P.Payment>()
          const entries: Array<EntryInput> = []
          const events: Array<OutboxEvent> = []
          for (const { applied, index, payment: read, transfer } of open) {
            if (!recorded.has(transfer.bank_transaction_id)) continue
            const payment = current.get(read.id) ?? read
            if (!userOf.has(payment.user_id))
              userOf.set(payment.user_id, yield* users.findById(payment.user_id))
            const { settled, entry } = creditOf(transfer, payment, userOf.get(payment.user_id)!, applied, now)
            current.set(payment.id, settled)
            entries.push(entry)
            events.push(yield* paymentUpdated(settled))
            outcomes.set(index, credited(payment))
          }
          for (const payment of current.values()) yield* payments.update(payment)
          yield* ledger.postAll(entries)
          yield* outbox.appendAll(events)
          return outcomes
        })
      )

    /**
     * What ingesting each transfer of `batch` (at most `batchSize`) in turn ends in: transfers to
     * open payments credited together, every other one, and all of them when the common unit of
     * work fails (for whatever reason: it left nothing), through `ingestOne`.
     */
    const settle = (batch: ReadonlyArray<IncomingTransfer>) =>
      Effect.gen(function* () {
        const together = yield* creditTogether(batch).pipe(
          Effect.catchAllCause(() => Effect.succeed(new Map<number, IngestOutcome>()))
        )
        const exits: Array<Exit.Exit<IngestOutcome, IngestError>> = []
        for (let index = 0; index < batch.length; index++) {
          const outcome = together.get(index)
          exits.push(
            outcome !== undefined ? Exit.succeed(outcome) : yield* Effect.exit(ingestOne(batch[index]!))
          )
        }
        return exits
      })

    /**
     * Ingests notifications that arrived together (a bank's batch, a statement read): the
     * outcome of each, in order, is what `ingest` of each in that order answers, and each is as
     * durable. Transfers to open payments are credited together (`creditTogether`), by batches of
     * at most `batchSize`; every other transfer (a customer's or split's CVU, an unknown or
     * closed CVU, another currency, a repeated notification, a non-positive amount, fees above
     * the amount) then goes through `ingest`, one by one, as does every transfer of a batch whose
     * common unit of work failed. A defect (a storage fault) fails `ingestAll` once the batch it
     * happened in is done: what was ingested stays, and the same list can be handed over again.
     */
    const ingestAll = Effect.fn("Transfers.ingestAll")(function* (
      transfers: ReadonlyArray<IncomingTransfer>
    ) {
      const outcomes: Array<Either.Either<IngestOutcome, IngestError>> = []
      for (let from = 0; from < transfers.length; from += batchSize) {
        for (const exit of yield* settle(transfers.slice(from, from + batchSize))) {
          const outcome = yield* Effect.either(exit)
          if (Either.isRight(outcome)) yield* count(outcome.right)
          outcomes.push(outcome)
        }
      }
      return outcomes
    })

    /** Concurrent notifications share units of work: one alone, several through `settle`. */
    const grouped = GroupCommit.make({
      batchSize,
      run: (batch: ReadonlyArray<IncomingTransfer>) =>
        batch.length === 1 ? Effect.map(Effect.exit(ingestOne(batch[0]!)), (exit) => [exit]) : settle(batch)
    })

    /**
     * Ingests one bank notification: whatever its CVU belongs to is credited, or the money is
     * recorded and returned. Concurrent calls outside a unit of work share units of work (group
     * commit, `internal/groupCommit.ts`); each answers what it would alone. Inside the caller's
     * unit of work it runs in it, alone: batched with others, it would commit or roll back with
     * them.
     */
    const ingest = Effect.fn("Transfers.ingest")(function* (transfer: IncomingTransfer) {
      const outcome = yield* (yield* transactor.inTransaction) ? ingestOne(transfer) : grouped(transfer)
      yield* count(outcome)
      return outcome
    })

    return { ingest, ingestAll } as const
  })
}) {}
