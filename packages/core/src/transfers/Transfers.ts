/**
 * Incoming transfers: the bank tells us money reached one of our CVUs, and we credit whatever
 * that CVU belongs to. Each notification is one unit of work, owned here: the CVU directory says
 * whose CVU it is (one locked lookup), the receiver is read under its lock, the fees computed,
 * the receiver's pure `apply` (`receivers/`) makes the credit, and its parts are written
 * together — the transfer log (idempotency on the bank's transaction id), the receiver's new
 * state, a balanced ledger entry and the outbox event. Money a receiver refuses, or reaching an
 * unknown CVU, is recorded and returned. Notifications that arrive together (`ingestAll`, or
 * concurrent `ingest` calls) answer the same, and share one unit of work per batch.
 */
import { Cause, Data, DateTime, Effect, Either, Exit, Metric, Option } from "effect"
import * as MerchantClocks from "../clocks/MerchantClocks.js"
import { BankProvider, type IncomingTransfer } from "../bank/BankProvider.js"
import { type Conflict, InvalidInput, NotFound, ProviderFailure } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as LedgerAccount from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import * as Money from "../Money.js"
import { Transactor } from "../Transactor.js"
import { makeEvent, Outbox } from "../webhooks/Outbox.js"
import { CvuDirectory } from "../bank/CvuDirectory.js"
import * as FeePolicy from "./FeePolicy.js"
import * as GroupCommit from "../internal/groupCommit.js"
import type { Credit } from "./receivers/receiver.js"
import * as Slots from "./receivers/slots.js"
import { TransferRecord, TransferRepository, type TransferTarget } from "./TransferRepository.js"
import * as Spans from "../Spans.js"

export { creditPostings } from "./receivers/receiver.js"

/** What became of a notification. */
export type IngestOutcome =
  | { readonly _tag: "Credited"; readonly target: TransferTarget; readonly target_id: string }
  | { readonly _tag: "Bounced"; readonly reason: string }
  /** Seen before: nothing was credited again. `previous` is what the first notification did. */
  | { readonly _tag: "Duplicate"; readonly previous: TransferRecord }

/** Most transfers a batch of `ingestAll` credits in one unit of work. */
export const batchSize = 100

/**
 * What `ingest` fails with: a notification it refuses (`InvalidInput`: an amount not positive,
 * or above the maximum with key `transfer.amount.above_maximum`), the bank failing a return
 * (`ProviderFailure`), or the ledger refusing a movement (`Conflict`).
 */
export type IngestError = InvalidInput | ProviderFailure | Conflict

/**
 * Why a notification's amount is refused before anything is written, if it is: not positive, or
 * above the maximum cobro takes in (`Money.maxMinor`, checked as a client's amounts are; the
 * key `transfer.amount.above_maximum` lets a bank's ingress answer it and reconciliation
 * quarantine it). Such an amount never reaches storage, whose columns it could overflow.
 */
export const amountRefusal = (amount: Money.Money): Option.Option<InvalidInput> =>
  !Money.isPositive(amount)
    ? Option.some(InvalidInput.of("amount", "must be positive"))
    : Either.isLeft(Money.withinMaximum(amount))
      ? Option.some(
          InvalidInput.of(
            "amount",
            `${Money.format(amount)} ${amount.currency} is above the maximum a transfer may carry (${Money.format(Money.maximum(amount.currency))})`,
            "transfer.amount.above_maximum"
          )
        )
      : Option.none()

/** Another notification of the same bank transaction committed first (a race). */
class AlreadyRecorded extends Data.TaggedError("AlreadyRecorded")<{}> {}

/** Counts an ingested transfer by its outcome (`Metrics.transfersIngested`). */
const count = (outcome: IngestOutcome) =>
  Metric.increment(
    Metrics.transfersIngested[
      outcome._tag === "Credited" ? "credited" : outcome._tag === "Duplicate" ? "duplicate" : "returned"
    ]
  )

const credited = (made: Credit<unknown>): IngestOutcome => ({
  _tag: "Credited",
  target: made.record.target,
  target_id: made.record.target_id!
})

/**
 * A notification to ingest; with `owner`, only if its CVU is that merchant's (`ingestFor`),
 * decided on the directory's entry as the unit of work locks it.
 */
interface Arrival {
  readonly transfer: IncomingTransfer
  readonly owner?: UserId | undefined
}

/** What `ingestFor` fails with besides `IngestError`: the CVU is not the owner's. */
type ArrivalError = IngestError | NotFound

/** A transfer of a batch, as its receiver credits it. */
interface Planned {
  readonly index: number
  readonly transfer: IncomingTransfer
  readonly slot: Slots.Slot
  readonly fees: FeePolicy.Fees
  readonly made: Credit<unknown>
}

export class Transfers extends Effect.Service<Transfers>()("@cobro/core/Transfers", {
  effect: Effect.gen(function* () {
    const log = yield* TransferRepository
    const directory = yield* CvuDirectory
    const receivers = yield* Slots.make
    const bank = yield* BankProvider
    const fees = yield* FeePolicy.FeePolicy
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const transactor = yield* Transactor
    const clocks = yield* MerchantClocks.MerchantClocks

    /**
     * Writes the transfer to the log, first in its unit of work. Fails with `AlreadyRecorded`
     * when a notification of the same transaction was recorded first; `ingest` then rolls back
     * and answers `Duplicate`.
     */
    const record = (row: TransferRecord) =>
      Effect.flatMap(log.insert(row), (inserted) => (inserted ? Effect.void : new AlreadyRecorded()))

    /** Records the transfer as bounced, books it in and out of suspense, and returns it. */
    const bounce = (transfer: IncomingTransfer, target_id: string | null, reason: string) =>
      Effect.gen(function* () {
        yield* record(
          new TransferRecord({
            bank_transaction_id: transfer.bank_transaction_id,
            cvu: transfer.cvu,
            amount: transfer.amount,
            target: "bounced",
            target_id,
            received_at: yield* DateTime.now
          })
        )
        /** Moves the transfer's amount from `from` to `to`. */
        const move = (kind: string, from: LedgerAccount.LedgerAccount, to: LedgerAccount.LedgerAccount) =>
          ledger.post({
            kind,
            reference: transfer.bank_transaction_id,
            postings: [debit(from, transfer.amount), credit(to, transfer.amount)]
          })
        yield* move("transfer.bounced.received", LedgerAccount.bankClearing, LedgerAccount.bouncedTransfers)
        yield* bank.returnTransfer(transfer).pipe(
          Effect.mapError(
            (e) =>
              new ProviderFailure({
                key: "bank.unavailable",
                message: `returning the transfer failed: ${e.message}`
              })
          )
        )
        yield* move("transfer.bounced.returned", LedgerAccount.bouncedTransfers, LedgerAccount.bankClearing)
        return { _tag: "Bounced", reason } as IngestOutcome
      })

    /** Writes what credits made: each receiver's last state, then entries and events in order. */
    const store = (slots: Iterable<Slots.Slot>, made: ReadonlyArray<Credit<unknown>>) =>
      Effect.gen(function* () {
        yield* receivers.storeAll(slots)
        yield* ledger.postAll(made.map((m) => m.entry))
        yield* outbox.appendAll(
          yield* Effect.forEach(
            made.flatMap((m) => m.events),
            makeEvent
          )
        )
      })

    /** The unit of work of one notification: lookup → record → fees → apply → store → ledger → outbox. */
    const credit1 = ({ owner, transfer }: Arrival) =>
      Effect.gen(function* () {
        const entry = yield* directory.findForUpdate(transfer.cvu)
        if (owner !== undefined && !(Option.isSome(entry) && entry.value.user_id === owner))
          return yield* NotFound.of("cvu", transfer.cvu)
        const opened = Option.isSome(entry) ? yield* receivers.open([entry.value]) : []
        const slot = opened[0]?.[1]
        if (slot === undefined || !slot.holds(transfer.cvu))
          return yield* bounce(transfer, null, "unknown CVU")
        // The rest runs on the receiving merchant's clock (its sandbox test clock, if moved).
        return yield* MerchantClocks.onClockOf(
          clocks,
          slot.user_id
        )(
          Effect.gen(function* () {
            const now = yield* DateTime.now
            const refused = slot.refusal(transfer, now)
            if (Option.isSome(refused)) return yield* bounce(transfer, slot.target_id, refused.value.reason)
            const applied = yield* fees.feesFor({
              user_id: slot.user_id,
              amount: transfer.amount,
              kind: slot.kind
            })
            const result = yield* slot.credit(transfer, applied, now)
            if (Either.isLeft(result)) return yield* bounce(transfer, slot.target_id, result.left.reason)
            yield* record(result.right.record)
            yield* store([slot], [result.right])
            return credited(result.right)
          })
        )
      })

    /**
     * A repeated notification is recognised by the transfer log's key: the log row is written
     * before anything else, the insert finds the first notification's row (`AlreadyRecorded`),
     * the unit of work rolls back and the first outcome is answered. No read ahead of it:
     * repeats are rare, and the common case saves a statement.
     */
    const ingestOne = (arrival: Arrival): Effect.Effect<IngestOutcome, ArrivalError> =>
      Option.match(amountRefusal(arrival.transfer.amount), {
        onSome: (refused) => Effect.fail(refused),
        onNone: () =>
          transactor
            .withTransaction(credit1(arrival))
            .pipe(
              Effect.catchTag("AlreadyRecorded", () =>
                Effect.flatMap(log.findById(arrival.transfer.bank_transaction_id), (previous) =>
                  Option.isSome(previous)
                    ? Effect.succeed<IngestOutcome>({ _tag: "Duplicate", previous: previous.value })
                    : Effect.dieMessage("transfer log lost a record")
                )
              )
            )
      })

    /**
     * A batch in one unit of work: the directory entries of its CVUs read and locked in one
     * statement, each kind of receiver read together, each transfer credited in turn through
     * its receiver's `apply` (a receiver credited twice goes on from the state the first credit
     * left), then log rows, receivers, ledger entries and events written once each. What is
     * decided up front and left to `ingestOne` after the batch commits: an amount not
     * positive or above the maximum (refused, `amountRefusal`), a CVU that is not the arrival's
     * `owner` (`NotFound`), a repeat within the batch or of a transfer recorded before
     * (`Duplicate`), an unknown CVU and money a receiver refuses (bounced: the bank is called
     * for each), and fees
     * above the amount (the ledger checks that balance entry by entry; every entry of the batch
     * then only adds to balances owed to someone, so checking them once all are added
     * (`postAll`) answers what checking each in turn would). Answers, by index in `batch`, the
     * outcome of each transfer it credited.
     */
    const creditTogether = (batch: ReadonlyArray<Arrival>) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const firsts = new Set<string>()
        const candidates = batch.flatMap(({ owner, transfer }, index) => {
          if (Option.isSome(amountRefusal(transfer.amount)) || firsts.has(transfer.bank_transaction_id))
            return []
          firsts.add(transfer.bank_transaction_id)
          return [{ transfer, owner, index }]
        })
        const entries = yield* directory.findAllForUpdate(candidates.map((c) => c.transfer.cvu))
        const slots = new Map(
          (yield* receivers.open(entries)).map((opened) => [opened[0].cvu as string, opened] as const)
        )
        const planned: Array<Planned> = []
        for (const { index, owner, transfer } of candidates) {
          const opened = slots.get(transfer.cvu)
          if (opened === undefined) continue
          const [entry, slot] = opened
          if (
            (owner !== undefined && entry.user_id !== owner) ||
            !slot.holds(transfer.cvu) ||
            Option.isSome(slot.refusal(transfer, now))
          )
            continue
          // A merchant on a clock of its own (a moved sandbox test clock) is credited alone, on it.
          if (clocks.clockOf(slot.user_id) !== undefined) continue
          const applied = yield* fees.feesFor({
            user_id: slot.user_id,
            amount: transfer.amount,
            kind: slot.kind
          })
          if (Money.isNegative(FeePolicy.credited(transfer.amount, applied))) continue
          const result = yield* slot.credit(transfer, applied, now)
          if (Either.isRight(result))
            planned.push({ index, transfer, slot, fees: applied, made: result.right })
        }
        const outcomes = new Map<number, IngestOutcome>()
        if (planned.length === 0) return outcomes
        const recorded = new Set<string>(yield* log.insertAll(planned.map((p) => p.made.record)))
        let credits = planned
        if (recorded.size < planned.length) {
          // Some were recorded before (they answer `Duplicate` alone): the others are credited
          // again from the receivers as read, without them.
          for (const p of planned) p.slot.reset()
          credits = []
          for (const p of planned.filter((p) => recorded.has(p.transfer.bank_transaction_id))) {
            const again = yield* p.slot.credit(p.transfer, p.fees, now)
            if (Either.isLeft(again))
              return yield* Effect.dieMessage(`a receiver refused a transfer it took: ${again.left.reason}`)
            credits.push({ ...p, made: again.right })
          }
        }
        yield* store(
          new Set(credits.map((p) => p.slot)),
          credits.map((p) => p.made)
        )
        for (const p of credits) outcomes.set(p.index, credited(p.made))
        return outcomes
      })

    /**
     * What ingesting each transfer of `batch` (at most `batchSize`) in turn ends in: those the
     * common unit of work credits (`creditTogether`), then each other one through `ingestOne`.
     * The common unit of work refused (a typed failure: the ledger refusing a movement, whose
     * transfer the batch cannot name) leaves nothing, and every transfer then goes through
     * `ingestOne`, which answers that refusal for its own transfer only: logged, see
     * docs/decisions/0029-one-crediting-pipeline.md. A defect (a storage fault) is no refusal: every transfer of the batch
     * fails with it, and the batch left nothing.
     */
    const ingestBatch = (batch: ReadonlyArray<Arrival>) =>
      Effect.gen(function* () {
        const together = yield* Effect.exit(transactor.withTransaction(creditTogether(batch)))
        if (Exit.isFailure(together) && (Cause.isDie(together.cause) || Cause.isInterrupted(together.cause)))
          return batch.map(() => Exit.failCause(together.cause) as Exit.Exit<IngestOutcome, ArrivalError>)
        if (Exit.isFailure(together))
          yield* Effect.logWarning(
            "a batch of transfers was refused as a whole; each is ingested alone",
            Cause.squash(together.cause)
          )
        const done = Exit.isSuccess(together) ? together.value : new Map<number, IngestOutcome>()
        const exits: Array<Exit.Exit<IngestOutcome, ArrivalError>> = []
        for (let index = 0; index < batch.length; index++) {
          const outcome = done.get(index)
          exits.push(
            outcome !== undefined ? Exit.succeed(outcome) : yield* Effect.exit(ingestOne(batch[index]!))
          )
        }
        return exits
      })

    /**
     * Ingests notifications that arrived together (a bank's batch, a statement read): the
     * outcome of each, in order, is what `ingest` of each in that order answers, and each is as
     * durable. They go by batches of at most `batchSize` (`ingestBatch`). A defect (a storage
     * fault) fails `ingestAll` once the batch it happened in is done: what earlier batches
     * ingested stays, and the same list can be handed over again.
     */
    const ingestAll = Spans.fn("Transfers.ingestAll")(function* (transfers: ReadonlyArray<IncomingTransfer>) {
      const outcomes: Array<Either.Either<IngestOutcome, IngestError>> = []
      for (let from = 0; from < transfers.length; from += batchSize) {
        const batch = transfers.slice(from, from + batchSize).map((transfer) => ({ transfer }))
        for (const exit of yield* ingestBatch(batch)) {
          // Arrivals without an owner: never `NotFound`.
          const outcome = (yield* Effect.either(exit)) as Either.Either<IngestOutcome, IngestError>
          if (Either.isRight(outcome)) yield* count(outcome.right)
          outcomes.push(outcome)
        }
      }
      return outcomes
    })

    /** Concurrent notifications share units of work: one alone, several through `ingestBatch`. */
    const grouped = GroupCommit.make({
      batchSize,
      run: (batch: ReadonlyArray<Arrival>) =>
        batch.length === 1
          ? Effect.map(Effect.exit(ingestOne(batch[0]!)), (exit) => [exit])
          : ingestBatch(batch)
    })

    /** One arrival in the caller's unit of work, or with concurrent ones (`grouped`); counted. */
    const arrive = (arrival: Arrival): Effect.Effect<IngestOutcome, ArrivalError> =>
      Effect.flatMap(transactor.inTransaction, (inside) =>
        Effect.tap(inside ? ingestOne(arrival) : grouped(arrival), (outcome) => count(outcome))
      )

    /**
     * Ingests one bank notification: whatever its CVU belongs to is credited, or the money is
     * recorded and returned. Concurrent calls outside a unit of work share units of work (group
     * commit, `internal/groupCommit.ts`); each answers what it would alone. Inside the caller's unit of
     * work it runs in it, alone: batched with others, it would commit or roll back with them.
     */
    const ingest = Spans.fn("Transfers.ingest")(function* (transfer: IncomingTransfer) {
      // Without an owner: never `NotFound`.
      return yield* arrive({ transfer }) as Effect.Effect<IngestOutcome, IngestError>
    })

    /**
     * `ingest`, if the transfer's CVU is one of `owner`'s (a payment's, a fixed customer's or a
     * split's): otherwise it fails with `NotFound` on `cvu` and nothing is written. The check is
     * made on the directory's entry as the unit of work that credits reads and locks it, so the
     * CVU cannot change hands between the check and the credit; and it costs no statement of
     * its own (the sandbox faucet, which sends only to the caller's own CVUs).
     */
    const ingestFor = Spans.fn("Transfers.ingestFor")(function* (owner: UserId, transfer: IncomingTransfer) {
      return yield* arrive({ transfer, owner })
    })

    return { ingest, ingestFor, ingestAll } as const
  })
}) {}
