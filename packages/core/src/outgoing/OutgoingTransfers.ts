/**
 * Outgoing transfers in flight, for every owner (schedule payouts, split payouts, refunds): one way to record a transfer, send it, ask the bank about it and settle it.
 *
 * 1. `record`, inside the owner's unit of work that moved the money to in transit: the transfer
 *    is SENDING, owned by the caller until `next_check_at` (now + `transferCheckInterval`).
 * 2. `dispatch`, after that unit of work: sends it with our reference (the bank deduplicates on
 *    it) and records the answer: accepted → PENDING, completed → settled, refused → settled as
 *    failed, unknown (timeout, 5xx) → left SENDING for the job.
 * 3. `settleDue`, the job (`Jobs.runDue`), over every purpose: for each transfer whose `next_check_at` has passed it first takes it
 *    (moving `next_check_at` on, so concurrent runs do not both ask), then asks the bank for its
 *    status: completed or failed → settled; pending → asked again later; not found (the send
 *    never arrived) → sent again with the same reference; unknown → asked again later.
 * 4. `settleReported`, when the bank reports a transfer final (an event, a claim): the same status
 *    query and settlement at once, for one transfer, without waiting for `next_check_at`.
 *
 * Settling is one unit of work: the transfer becomes COMPLETED or FAILED, its money moves out of
 * in transit (to the bank, or back where it came from) and the owner records the outcome and its
 * events (the owner's `Settlement`, found by the transfer's purpose in the `Settlements` the
 * engine assembled); a transfer no longer in flight is left alone, so each is settled exactly once. An
 * unknown outcome never fails a transfer: only the bank's refusal or its status does.
 *
 * Its times (`next_check_at`, creation and change) are real time (`RealTime`), the bank's: a
 * sandbox merchant's test clock moved ahead does not make its checks due sooner.
 */
import { Cause, DateTime, Effect, Either, Metric, Option } from "effect"
import { type BankError, BankProvider, type TransferAcceptance } from "../bank/BankProvider.js"
import { EngineConfig } from "../EngineConfig.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import type { LedgerAccount } from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import type { Money } from "../Money.js"
import { RealTime } from "../RealTime.js"
import { Transactor } from "../Transactor.js"
import { drainDue } from "../internal/drainDue.js"
import { firstSend, isInFlight, OutgoingTransfer, type TransferPurpose } from "./OutgoingTransfer.js"
import { OutgoingTransferRepository } from "./OutgoingTransferRepository.js"
import { type Outcome, Settlements } from "./Settlement.js"
import * as Spans from "../Spans.js"

/** What the caller asks to send, in the unit of work that moved `amount` into `in_transit`. */
export interface NewTransfer {
  readonly reference: string
  readonly purpose: TransferPurpose
  readonly owner_id: string
  readonly destination: string
  readonly amount: Money
  readonly in_transit: LedgerAccount
  readonly return_to: LedgerAccount
}

/** Where one send or check left a transfer. */
export type Step = "completed" | "failed" | "pending" | "unknown" | "stale"

/** A step, and whether settling the transfer finished its owner's work (a split's last payout). */
export interface StepResult {
  readonly step: Step
  readonly finished: boolean
}

const only = (step: Step): StepResult => ({ step, finished: false })

/** What one `settleDue` call did with the transfers of one purpose. */
export interface SettleReport {
  /** Transfers the bank confirmed (their money left in transit for the bank). */
  readonly completed: number
  /** Transfers the bank failed (their money went back where it came from). */
  readonly failed: number
  /** Transfers the bank still has pending; asked again later. */
  readonly pending: number
  /** Transfers the bank had no record of, sent again with the same reference. */
  readonly resent: number
  /** Checks whose answer was unknown (bank unavailable); asked again later. */
  readonly unknown: number
  /** Items that failed unexpectedly; they stay due. */
  readonly errors: number
  /** Owners whose work a settlement finished (a split's last payout). */
  readonly finished: number
}

/** What one `settleDue` call did, by purpose. */
export type SettleReports = { readonly [P in TransferPurpose]: SettleReport }

const describe = (e: BankError) => `${e.reason}: ${e.message}`

export class OutgoingTransfers extends Effect.Service<OutgoingTransfers>()("@cobro/core/OutgoingTransfers", {
  effect: Effect.gen(function* () {
    const repo = yield* OutgoingTransferRepository
    const bank = yield* BankProvider
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const config = yield* EngineConfig
    const settlements = yield* Settlements
    const interval = config.transferCheckInterval
    // Transfers at the bank run on real time (also for a merchant whose sandbox test clock was
    // moved ahead: the bank's time is real), so `settleDue` finds the same ones in any pass.
    const realTime = yield* RealTime

    /**
     * Records a transfer in the caller's unit of work, for `dispatch` after it commits; `none`
     * when one with that reference exists already (the settle job owns it).
     */
    const record = Spans.fn("OutgoingTransfers.record")(function* (input: NewTransfer) {
      const existing = yield* repo.findByReferenceForUpdate(input.reference)
      if (Option.isSome(existing)) return Option.none<OutgoingTransfer>()
      const now = yield* realTime.now
      const transfer = new OutgoingTransfer({
        ...input,
        ...firstSend(),
        next_check_at: DateTime.addDuration(now, interval),
        creation_timestamp: now,
        last_modified_timestamp: now
      })
      yield* Effect.orDie(repo.insert(transfer))
      return Option.some(transfer)
    })

    /** Runs `f` on the transfer locked, if still in flight; `stale` otherwise. */
    const withInFlight = <A>(
      reference: string,
      f: (t: OutgoingTransfer, now: DateTime.Utc) => Effect.Effect<A>
    ) =>
      transactor.withTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findByReferenceForUpdate(reference)
          if (Option.isNone(found) || !isInFlight(found.value)) return Option.none<A>()
          return Option.some(yield* f(found.value, yield* realTime.now))
        })
      )

    /** Settles a transfer in flight exactly once: state, ledger move and the owner's record. */
    const settle = (reference: string, outcome: Outcome) =>
      withInFlight(reference, (transfer, now) =>
        Effect.gen(function* () {
          const completed = outcome._tag === "Completed"
          const settled = new OutgoingTransfer({
            ...transfer,
            status: completed ? "COMPLETED" : "FAILED",
            bank_transaction_id: outcome.bank_transaction_id ?? transfer.bank_transaction_id,
            failure_reason: completed ? null : outcome.reason,
            last_modified_timestamp: now
          })
          yield* repo.update(settled)
          const owner = settlements.of(transfer.purpose)
          // A balanced two-line entry of a positive amount: refused only by a broken invariant.
          yield* Effect.orDie(
            ledger.post({
              kind: completed ? owner.completedKind : owner.failedKind,
              reference: transfer.reference,
              postings: [
                debit(transfer.in_transit, transfer.amount),
                credit(completed ? Accounts.bankClearing : transfer.return_to, transfer.amount)
              ]
            })
          )
          const finished = yield* owner.settled(settled, outcome)
          yield* Metric.increment(Metrics.outgoingTransfersSettled[completed ? "completed" : "failed"])
          return { step: completed ? "completed" : "failed", finished } satisfies StepResult
        })
      ).pipe(Effect.map(Option.getOrElse(() => only("stale"))))

    /** Notes the bank's acceptance: PENDING, with the bank's id. */
    const accepted = (reference: string, acceptance: TransferAcceptance) =>
      withInFlight(reference, (transfer, now) =>
        Effect.as(
          repo.update(
            new OutgoingTransfer({
              ...transfer,
              status: "PENDING",
              bank_transaction_id: acceptance.bank_transaction_id,
              last_modified_timestamp: now
            })
          ),
          only("pending")
        )
      ).pipe(Effect.map(Option.getOrElse(() => only("stale"))))

    /** Notes an answer that left the outcome unknown; the job asks again after `next_check_at`. */
    const unknown = (reference: string, error: BankError) =>
      Effect.zipRight(
        Effect.logWarning(
          "outgoing transfer outcome unknown; the bank is asked again later",
          reference,
          describe(error)
        ),
        withInFlight(reference, (transfer, now) =>
          repo.update(
            new OutgoingTransfer({ ...transfer, last_error: describe(error), last_modified_timestamp: now })
          )
        )
      ).pipe(Effect.zipRight(Metric.increment(Metrics.outgoingTransfersUnknown)), Effect.as(only("unknown")))

    /** Records the answer to a send. */
    const afterSend = (reference: string, result: Either.Either<TransferAcceptance, BankError>) =>
      Either.match(result, {
        onRight: (acceptance) =>
          acceptance.status === "completed"
            ? settle(reference, { _tag: "Completed", bank_transaction_id: acceptance.bank_transaction_id })
            : accepted(reference, acceptance),
        onLeft: (error) =>
          error.reason === "unavailable"
            ? unknown(reference, error)
            : settle(reference, { _tag: "Failed", bank_transaction_id: null, reason: describe(error) })
      })

    const send = (transfer: OutgoingTransfer) =>
      Effect.either(
        bank.sendTransfer({
          to: transfer.destination,
          amount: transfer.amount,
          reference: transfer.reference
        })
      ).pipe(Effect.flatMap((result) => afterSend(transfer.reference, result)))

    /** Sends a transfer just recorded (outside any unit of work) and records the answer. */
    const dispatch = Spans.fn("OutgoingTransfers.dispatch")(function* (transfer: OutgoingTransfer) {
      if (transfer.status !== "SENDING") return only("stale")
      return yield* send(transfer)
    })

    /** Takes a due transfer for one check: `next_check_at` moves on, so no other run asks now. */
    const claim = (reference: string, now: DateTime.Utc) =>
      withInFlight(reference, (transfer) =>
        Effect.gen(function* () {
          if (DateTime.greaterThan(transfer.next_check_at, now)) return Option.none<OutgoingTransfer>()
          const claimed = new OutgoingTransfer({
            ...transfer,
            checks: transfer.checks + 1,
            next_check_at: DateTime.addDuration(now, interval),
            last_modified_timestamp: now
          })
          yield* repo.update(claimed)
          return Option.some(claimed)
        })
      ).pipe(Effect.map(Option.flatten))

    /** The bank has no record of it: counts a new send, then sends it again, same reference. */
    const resend = (reference: string) =>
      Effect.gen(function* () {
        const counted = yield* withInFlight(reference, (transfer, now) => {
          const next = new OutgoingTransfer({
            ...transfer,
            sends: transfer.sends + 1,
            last_modified_timestamp: now
          })
          return Effect.as(repo.update(next), next)
        })
        if (Option.isNone(counted)) return only("stale")
        yield* Metric.increment(Metrics.outgoingTransfersResent)
        return yield* send(counted.value)
      })

    /**
     * One check of a claimed transfer: the bank's status decides. `resendUnknown`: whether a
     * transfer the bank has no record of is sent again (the job's check) or left to the job.
     */
    const check = (transfer: OutgoingTransfer, resendUnknown = true) =>
      Effect.gen(function* () {
        const status = yield* Effect.either(bank.transferStatus(transfer.reference))
        if (Either.isLeft(status))
          return { ...(yield* unknown(transfer.reference, status.left)), resent: false }
        const s = status.right
        switch (s._tag) {
          case "NotFound":
            return resendUnknown
              ? { ...(yield* resend(transfer.reference)), resent: true }
              : { ...only("pending"), resent: false }
          case "Pending":
            return { ...(yield* accepted(transfer.reference, { status: "pending", ...s })), resent: false }
          case "Completed":
          case "Failed":
            return { ...(yield* settle(transfer.reference, s)), resent: false }
        }
      })

    /** Checks every due transfer of `purpose` once. */
    const settleDueOf = (purpose: TransferPurpose, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const report = { completed: 0, failed: 0, pending: 0, resent: 0, unknown: 0, errors: 0, finished: 0 }
        yield* drainDue({
          batchSize: config.jobBatchSize,
          find: (limit) => repo.findDue(purpose, now, limit),
          key: (t) => t.reference,
          each: (candidate) =>
            claim(candidate.reference, now).pipe(
              Effect.flatMap(
                Option.match({
                  onNone: () => Effect.void,
                  onSome: (claimed) =>
                    Effect.map(check(claimed), ({ step, resent, finished }) => {
                      if (resent) report.resent++
                      if (step !== "stale") report[step]++
                      if (finished) report.finished++
                    })
                })
              ),
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause)
                  ? Effect.failCause(cause)
                  : Effect.zipRight(
                      Effect.logWarning(
                        "checking an outgoing transfer failed; checked again later",
                        candidate.reference,
                        cause
                      ),
                      Effect.sync(() => report.errors++)
                    )
              )
            )
        })
        return report satisfies SettleReport
      })

    /** Checks every due transfer once, whatever its purpose: the settle step of `Jobs.runDue`. */
    const settleDue = Spans.fn("OutgoingTransfers.settleDue")(function* () {
      const now = yield* realTime.now
      const reports: Partial<Record<TransferPurpose, SettleReport>> = {}
      for (const purpose of settlements.purposes) reports[purpose] = yield* settleDueOf(purpose, now)
      return reports as SettleReports
    })

    /**
     * The bank reports a transfer of ours final (its event: a claim). Finds the transfer in flight
     * `matches` picks, asks the bank for its status (the job's status query: the truth) and
     * settles it as the job does, exactly once (a transfer no longer in flight is left alone). A
     * transfer the bank has no record of is left to the job (which sends it again). None when no
     * transfer in flight matches (settled already, or not ours).
     */
    const settleReported = Spans.fn("OutgoingTransfers.settleReported")(function* (
      matches: (transfer: OutgoingTransfer) => boolean
    ) {
      let after = Option.none<string>()
      while (true) {
        const page = yield* repo.list({ states: ["SENDING", "PENDING"], after, limit: config.jobBatchSize })
        const found = page.find(matches)
        if (found !== undefined) {
          const { finished, step } = yield* check(found, false)
          return Option.some({ reference: found.reference, purpose: found.purpose, step, finished })
        }
        if (page.length < config.jobBatchSize) return Option.none()
        after = Option.some(page[page.length - 1]!.reference)
      }
    })

    return { record, dispatch, settleDue, settleReported } as const
  })
}) {}
