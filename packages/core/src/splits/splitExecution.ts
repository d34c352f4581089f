/**
 * Execution of split payouts instructions, for `Jobs.runDue`. One unit of work claims a due
 * split (ON_HOLD past `hold_until` → PROCESSING), fails the payouts whose account was disabled
 * during the hold (their money back to the split's balance) and records every other payout as an
 * outgoing transfer in flight (`OutgoingTransfers`, reference the payout id); each is then sent
 * outside any unit of work. The settle step records each outcome (held → bank, or held → the
 * split's balance) and the one that settles the last payout writes the result and "Split
 * payouts result". A crash anywhere loses nothing: the transfers are in the database, and the
 * settle job asks the bank about each before sending anything again.
 *
 * A split left PROCESSING with a lease by an engine before outgoing transfers existed is
 * claimed again once its lease has passed, and its PENDING payouts recorded then.
 */
import { DateTime, Effect, Metric, Option } from "effect"
import { EngineConfig } from "../EngineConfig.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import type { OutgoingTransfer } from "../outgoing/OutgoingTransfer.js"
import * as DueScope from "../clocks/DueScope.js"
import { OutgoingTransfers, type SettleReport, type StepResult } from "../outgoing/OutgoingTransfers.js"
import { drainDue } from "../internal/drainDue.js"
import { Outbox } from "../webhooks/Outbox.js"
import * as Split from "./Split.js"
import { SplitRepository } from "./SplitRepository.js"
import { Transactor } from "../Transactor.js"
import { finishIfDone, makeSplitPayoutSettlement } from "./splitPayoutSettlement.js"
import * as Spans from "../Spans.js"

const nothing: Split.SplitRunReport = { finished: 0, sent: 0, payouts_failed: 0, failed: 0 }

/** What the settle step did with split payouts, counted as a run of splits counts them. */
export const fromSettle = (settled: SettleReport): Split.SplitRunReport => ({
  finished: settled.finished,
  sent: settled.completed,
  payouts_failed: settled.failed,
  failed: settled.unknown + settled.errors
})

/** Two runs' counts added. */
export const addRuns = (a: Split.SplitRunReport, b: Split.SplitRunReport): Split.SplitRunReport => ({
  finished: a.finished + b.finished,
  sent: a.sent + b.sent,
  payouts_failed: a.payouts_failed + b.payouts_failed,
  failed: a.failed + b.failed
})

const disabledReason = "the payout account was disabled before the payout"

export const make = Effect.gen(function* () {
  const repo = yield* SplitRepository
  const ledger = yield* Ledger
  const outbox = yield* Outbox
  const outgoing = yield* OutgoingTransfers
  const transactor = yield* Transactor
  const config = yield* EngineConfig
  const settlement = makeSplitPayoutSettlement(repo, outbox)

  /**
   * Takes a due split for execution and, in the same unit of work, settles the payouts that go
   * nowhere and records the others as transfers in flight; answers the transfers to send now.
   */
  const claim = (id: Split.SplitPayment["split_payment_id"], now: DateTime.Utc) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findByIdForUpdate(id)
        if (Option.isNone(found)) return Option.none()
        const split = found.value
        const dueAt = Split.dueAt(split)
        if (dueAt === null || DateTime.greaterThan(dueAt, now)) return Option.none()
        const claimed = new Split.SplitPayment({
          ...split,
          payout_status: yield* Split.transition(
            Split.payoutMachine,
            Split.payoutStatusOf(split),
            "PROCESSING"
          ),
          // Not due again: the transfers in flight, not a lease, carry the rest of the work.
          lease_until: null,
          last_modified_timestamp: now
        })
        yield* repo.update(claimed)
        const report = { ...nothing }
        const toSend: Array<OutgoingTransfer> = []
        const pending = (yield* repo.payoutsOf(id)).filter((p) => p.status === "PENDING")
        if (pending.length === 0 && Option.isSome(yield* finishIfDone(repo, outbox, claimed, [], now))) {
          report.finished++
        }
        for (const payout of pending) {
          const account = yield* repo.findAccount(payout.account_id)
          if (!Option.exists(account, (a) => a.status === "ACTIVE")) {
            yield* ledger.post({
              kind: "split.payout.failed",
              reference: payout.payout_id,
              postings: [
                debit(Accounts.splitHeld(id), payout.amount),
                credit(Accounts.splitBalance(id), payout.amount)
              ]
            })
            // Never sent: no transfer, the same settlement step.
            const finished = yield* settlement.settled(
              { reference: payout.payout_id, owner_id: id, sends: 0 },
              { _tag: "Failed", bank_transaction_id: null, reason: disabledReason }
            )
            report.payouts_failed++
            if (finished) report.finished++
            continue
          }
          const recorded = yield* outgoing.record({
            reference: payout.payout_id,
            purpose: "split_payout",
            owner_id: id,
            destination: payout.destination,
            amount: payout.amount,
            in_transit: Accounts.splitHeld(id),
            return_to: Accounts.splitBalance(id)
          })
          if (Option.isSome(recorded)) toSend.push(recorded.value)
        }
        return Option.some({ due: dueAt, toSend, report })
      })
    )

  /** Adds one step's result to a report. */
  const tally = (report: { -readonly [K in keyof Split.SplitRunReport]: number }, result: StepResult) => {
    if (result.step === "completed") report.sent++
    else if (result.step === "failed") report.payouts_failed++
    else if (result.step === "unknown") report.failed++
    if (result.finished) report.finished++
  }

  /** Sends the transfers a claim recorded. */
  const execute = (toSend: ReadonlyArray<OutgoingTransfer>, claimed: Split.SplitRunReport) =>
    Effect.gen(function* () {
      const report = { ...claimed }
      for (const transfer of toSend) tally(report, yield* outgoing.dispatch(transfer))
      return report
    })

  /**
   * Executes every instruction of `scope` whose hold has ended. Split payouts in flight are
   * settled by `Jobs.runDue`'s settle step (`OutgoingTransfers.settleDue`), before this.
   */
  const runDue = Spans.fn("Splits.runDue")(function* (scope: DueScope.DueScope = DueScope.everyone) {
    const now = yield* DateTime.now
    let report = nothing
    yield* drainDue({
      batchSize: config.jobBatchSize,
      find: (limit) => repo.findDue(now, limit, scope),
      key: (s) => s.split_payment_id,
      counted: Metrics.jobsDue.split_payout,
      each: (candidate) =>
        claim(candidate.split_payment_id, now).pipe(
          Effect.flatMap(
            Option.match({
              onNone: () => Effect.succeed(nothing),
              // How late the instruction was taken after its hold (or the previous run's lease) ended.
              onSome: ({ due, toSend, report: claimed }) =>
                Effect.zipRight(
                  Metric.update(Metrics.jobLag.split_payout, Math.max(0, DateTime.distance(due, now)) / 1000),
                  execute(toSend, claimed)
                )
            })
          ),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(
                "executing split payouts failed; retried next run",
                candidate.split_payment_id,
                error
              ),
              { ...nothing, failed: 1 }
            )
          ),
          Effect.map((result) => {
            report = addRuns(report, result)
          })
        )
    })
    return report satisfies Split.SplitRunReport
  })

  return { runDue } as const
})
