/**
 * Refunds of paid payments: the rules, the money and the reads.
 *
 * A refund returns what the payer sent: FULL is every peso the payment received less
 * its refunds that count, PARTIAL at most that. The commission and taxes stay earned; the
 * merchant's available balance pays the whole refund (docs/decisions/0065-refunds-return-what-was-paid.md). Creating one is one unit of work under the payment's row lock (so concurrent
 * refunds of a payment are serialised and the sum never exceeds what was received): the refund
 * row PENDING, its ledger entry (merchant available → in transit), its outgoing transfer recorded
 * (`OutgoingTransfers`, purpose `refund`, reference the refund id, the bank's idempotency key)
 * and "Payment updated". After commit the transfer is sent; its outcome is settled once by
 * `refundSettlement.ts` (in transit → bank, or back to available with the refund FAILED).
 */
import { DateTime, Effect, Either, Layer, Option } from "effect"
import { senderProblems } from "../bank/BankAccount.js"
import { Conflict, InvalidInput, NotFound, Shortfall } from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { PaymentId, UserId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Money from "../Money.js"
import type { OutgoingTransfer } from "../outgoing/OutgoingTransfer.js"
import { OutgoingTransfers } from "../outgoing/OutgoingTransfers.js"
import * as Page from "../Page.js"
import * as P from "../payments/Payment.js"
import { emitPaymentUpdated } from "../payments/paymentEvents.js"
import { PaymentRepository } from "../payments/PaymentRepository.js"
import { PublicRefunds } from "../payments/PublicRefunds.js"
import { Transactor } from "../Transactor.js"
import { Outbox } from "../webhooks/Outbox.js"
import * as R from "./Refund.js"
import { RefundRepository } from "./RefundRepository.js"
import * as Spans from "../Spans.js"

/** Payment states with money received: the only ones that can be refunded. */
export const refundableStates: ReadonlyArray<P.PaymentStatus> = ["SUCCESS", "OVERPAID", "UNDERPAID"]

const amountInvalid = (message: string) => InvalidInput.of("amount", message, "refund.amount.invalid")

/** The PARTIAL amount asked for, parsed exactly (decimal text or JSON number, ARS). */
const requestedAmount = (
  request: R.RefundRequest
): Either.Either<Option.Option<Money.Money>, InvalidInput> => {
  if (request.currency !== undefined && request.currency !== "ARS") {
    return Either.left(
      InvalidInput.of(
        "currency",
        `the payment is in ARS and is refunded in ARS, not '${request.currency}'`,
        "refund.currency.mismatch"
      )
    )
  }
  const raw = request.amount
  if (request.refund_type === "FULL") {
    return raw === undefined
      ? Either.right(Option.none())
      : Either.left(
          amountInvalid(
            "a FULL refund returns what is left of what the payer sent: send no amount, or use PARTIAL"
          )
        )
  }
  if (raw === undefined) return Either.left(amountInvalid("is required for a PARTIAL refund"))
  const parsed =
    typeof raw === "string"
      ? Either.flatMap(Money.fromString(raw.trim(), "ARS"), Money.withinMaximum)
      : Money.fromInput(raw, "ARS")
  return Either.match(parsed, {
    onLeft: (e) => Either.left(amountInvalid(e.message)),
    onRight: (m) =>
      m.minor > 0n ? Either.right(Option.some(m)) : Either.left(amountInvalid("must be positive"))
  })
}

/** The account the payment's money came from; refused when it came from several. */
const senderOf = (payment: P.Payment): Either.Either<R.RefundDestination, Conflict> => {
  const senders = new Map<string, P.TransferDetails>()
  for (const t of payment.transactions) {
    const details = t.transaction_data.PROCESSED
    senders.set(details.sender, details)
  }
  const [first, ...others] = senders.values()
  if (first === undefined || others.length > 0) {
    return Either.left(
      new Conflict({
        key: "refund.payment.several_senders",
        message: `the payment was paid from ${senders.size} different accounts (${[...senders.keys()].join(", ")}); cobro refunds a payment only to the one account it came from: return this money outside cobro`
      })
    )
  }
  const destination = new R.RefundDestination({
    address: first.sender,
    cuit: first.senderCuit,
    name: first.senderTitular
  })
  const problems = senderProblems(destination.address, destination.cuit).map((p) =>
    p.field === "sender_address"
      ? `account "${destination.address}" ${p.reason}`
      : `CUIT "${destination.cuit}" ${p.reason}`
  )
  if (problems.length > 0) {
    return Either.left(
      new Conflict({
        key: "refund.sender.invalid",
        message: `the payer's ${problems.join(", and the payer's ")}, as the bank reported them: cobro sends no refund there; return this money outside cobro`
      })
    )
  }
  return Either.right(destination)
}

/**
 * What a refund can return of a payment: what the payer sent, the sum of its transactions'
 * gross `amount` (all of it for an OVERPAID payment, what arrived for an UNDERPAID one).
 */
export const refundableOf = (payment: P.Payment): Money.Money => payment.totalReceived

/** A payment's refunds (oldest first) and their total (PENDING and SUCCESS ones). */
export interface PaymentRefunds {
  readonly refunds: ReadonlyArray<R.Refund>
  readonly refunded: Money.Money
  /** Whether the refunds that count return everything the payer sent. */
  readonly full: boolean
}

export class Refunds extends Effect.Service<Refunds>()("@cobro/core/Refunds", {
  effect: Effect.gen(function* () {
    const repo = yield* RefundRepository
    const payments = yield* PaymentRepository
    const ledger = yield* Ledger
    const outgoing = yield* OutgoingTransfers
    const transactor = yield* Transactor
    const outbox = yield* Outbox

    const findOwned = (owner: UserId, id: PaymentId, lock: boolean) =>
      Effect.flatMap(lock ? payments.findByIdForUpdate(id) : payments.findById(id), (found) =>
        Option.isSome(found) && found.value.user_id === owner
          ? Effect.succeed(found.value)
          : Effect.fail(NotFound.of("payment", id))
      )

    const summaryOf = (payment: P.Payment, refunds: ReadonlyArray<R.Refund>): PaymentRefunds => {
      const refunded = R.refundedTotal(refunds)
      return {
        refunds,
        refunded,
        full: refunds.length > 0 && Money.orThrow(Money.compare(refunded, refundableOf(payment))) >= 0
      }
    }

    /**
     * A payment's refunds, for its reads (no owner check: the caller has the payment). A payment
     * that never received a transfer has none to look up (a refund needs money received).
     */
    const ofPayment = (payment: P.Payment) =>
      payment.transactions.length === 0
        ? Effect.succeed(summaryOf(payment, []))
        : Effect.map(repo.listByPayment(payment.id), (r) => summaryOf(payment, r))

    /** The unit of work of a new refund; the transfer to send after it commits. */
    const reserve = (
      owner: UserId,
      id: PaymentId,
      request: R.RefundRequest,
      requested: Option.Option<Money.Money>
    ) =>
      transactor.withTransaction(
        Effect.gen(function* () {
          const payment = yield* findOwned(owner, id, true)
          if (!refundableStates.includes(payment.payment_status)) {
            return yield* new Conflict({
              key: "refund.payment.not_paid",
              message: `a ${payment.payment_status} payment has received no money to refund; only SUCCESS, OVERPAID and UNDERPAID payments are refunded`
            })
          }
          const destination = yield* senderOf(payment)
          const received = refundableOf(payment)
          const refunded = R.refundedTotal(yield* repo.listByPayment(payment.id))
          const left = Money.orThrow(Money.subtract(received, refunded))
          if (!Money.isPositive(left)) {
            return yield* new Conflict({
              key: "refund.payment.fully_refunded",
              message: `the ${Money.format(received)} ARS the payer sent are already refunded (or being refunded)`
            })
          }
          const amount = Option.getOrElse(requested, () => left)
          if (Money.orThrow(Money.compare(amount, left)) > 0) {
            return yield* new Conflict({
              key: "refund.amount.exceeds_refundable",
              message: `${Money.format(amount)} ARS is more than the ${Money.format(left)} ARS left to refund of this payment (the payer sent ${Money.format(received)} ARS, refunded ${Money.format(refunded)} ARS)`
            })
          }
          // The whole refund comes out of the available balance: the payment credited less than
          // the payer sent (the commission and taxes stay earned), so other money may pay the rest.
          const available = Accounts.merchantAvailable(owner)
          const balance = yield* ledger.balance(available, "ARS")
          const insufficient = (have: Money.Money) => {
            const shortfall = Shortfall.of(amount, have)
            return new Conflict({
              key: "refund.balance.insufficient",
              message: `the refund needs ${Money.format(amount)} ARS and the available balance is ${Money.format(have)} ARS: ${Money.format(shortfall.missing)} ARS short (money in transit does not count; the commission and taxes of the payment are not returned to the balance)`,
              shortfall
            })
          }
          if (Money.orThrow(Money.compare(balance, amount)) < 0) return yield* insufficient(balance)

          const now = yield* DateTime.now
          const refund = new R.Refund({
            refund_id: R.RefundId.make(yield* newId("rfd")),
            payment_id: payment.id,
            user_id: owner,
            refund_type: request.refund_type,
            amount,
            status: "PENDING",
            destination,
            blame: request.blame ?? null,
            bank_transaction_id: null,
            failure_reason: null,
            creation_timestamp: now,
            last_modified_timestamp: now
          })
          yield* Effect.orDie(repo.insert(refund))
          const inTransit = Accounts.merchantInTransit(owner)
          yield* ledger
            .post({
              kind: "refund.reserved",
              reference: refund.refund_id,
              postings: [debit(available, amount), credit(inTransit, amount)]
            })
            .pipe(
              // A concurrent movement took the balance between the check and the post.
              Effect.catchTag("Conflict", () =>
                Effect.flatMap(ledger.balance(available, "ARS"), (have) => Effect.fail(insufficient(have)))
              )
            )
          const transfer = yield* outgoing.record({
            reference: refund.refund_id,
            purpose: "refund",
            owner_id: refund.refund_id,
            destination: destination.address,
            amount,
            in_transit: inTransit,
            return_to: available
          })
          const touched = new P.Payment({ ...payment, last_modified_timestamp: now })
          yield* payments.update(touched)
          yield* emitPaymentUpdated(outbox, touched)
          // Under an `Idempotency-Key`, the refund (PENDING) is its answer from this commit on.
          yield* Idempotency.committing(refund)
          return { refund, transfer }
        })
      )

    /**
     * Refunds `request` of the owner's payment `id`: PENDING, or already SUCCESS/FAILED when the
     * bank answered at once.
     */
    const create = Spans.fn("Refunds.create")(function* (
      owner: UserId,
      id: PaymentId,
      request: R.RefundRequest
    ) {
      if (request.user_id !== undefined && request.user_id !== owner) {
        return yield* NotFound.of("user", request.user_id)
      }
      const requested = yield* requestedAmount(request)
      const { refund, transfer } = yield* reserve(owner, id, request, requested)
      yield* Option.match(transfer, {
        onNone: () => Effect.void,
        onSome: (t: OutgoingTransfer) =>
          outgoing
            .dispatch(t)
            .pipe(
              Effect.catchAllDefect((cause) =>
                Effect.logWarning(
                  "sending a refund failed; the settle job asks the bank later",
                  refund.refund_id,
                  cause
                )
              )
            )
      })
      return Option.getOrElse(yield* repo.findById(refund.refund_id), () => refund)
    })

    /** The refunds of the owner's payment, oldest first. */
    const list = Spans.fn("Refunds.list")(function* (owner: UserId, id: PaymentId) {
      const payment = yield* findOwned(owner, id, false)
      return (yield* ofPayment(payment)).refunds
    })

    /** One refund of the owner's payment. */
    const get = Spans.fn("Refunds.get")(function* (owner: UserId, id: PaymentId, refundId: R.RefundId) {
      yield* findOwned(owner, id, false)
      const found = yield* repo.findById(refundId)
      if (Option.isNone(found) || found.value.payment_id !== id) return yield* NotFound.of("refund", refundId)
      return found.value
    })

    /**
     * One page of the user's refunds, newest first, after `before` (the previous page's `next`):
     * every payment's, for the CSV export. The caller reads only its own user.
     */
    const page = Spans.fn("Refunds.page")(function* (
      owner: UserId,
      user_id: UserId,
      before: Option.Option<Page.Cursor>,
      requestedLimit?: number
    ) {
      if (user_id !== owner) return yield* NotFound.of("user", user_id)
      const limit = yield* Page.checkLimit(requestedLimit)
      const rows = yield* repo.listByUser(user_id, before, limit + 1)
      return Page.fromRows(rows, limit, (r) => ({
        creation_timestamp: r.creation_timestamp,
        id: r.refund_id
      }))
    })

    return { create, list, get, ofPayment, page } as const
  })
}) {}

/** What the payer's page says of a payment's refunds (none without a transfer received). */
export const layerPublicRefunds = Layer.effect(
  PublicRefunds,
  Effect.map(RefundRepository, (repo) => ({
    of: (payment: P.Payment) =>
      payment.transactions.length === 0
        ? Effect.succeed(null)
        : Effect.map(repo.listByPayment(payment.id), (all) => {
            const counted = all.filter((r) => r.status !== "FAILED")
            if (counted.length === 0) return null
            const amount = R.refundedTotal(counted)
            return new P.PublicRefund({
              amount,
              // Everything the payer sent (what a FULL refund returns).
              full: Money.orThrow(Money.compare(amount, payment.totalReceived)) >= 0,
              pending: counted.some((r) => r.status === "PENDING")
            })
          })
  }))
)
