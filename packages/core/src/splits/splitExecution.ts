/**
 * Execution of split payouts instructions, for `Jobs.runDue`. Claim → call the bank → record the outcome:
 * one unit of work claims a due split (ON_HOLD past `hold_until` → PROCESSING, with a lease);
 * each payout is sent outside any unit of work (the bank deduplicates on the payout id); each
 * result is recorded in its own unit of work, and the one that records the last payout writes the
 * outcome and "Split payouts result". A split left PROCESSING (a crash, the bank unavailable) is
 * claimed again once its lease has passed: nothing is lost, and nothing is sent or released twice.
 */
import { DateTime, Effect, Metric, Option } from "effect"
import { BankProvider } from "../bank/BankProvider.js"
import { EngineConfig } from "../EngineConfig.js"
import type { BankTransactionId } from "../Ids.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import { Outbox } from "../webhooks/Outbox.js"
import * as Split from "./Split.js"
import { SplitRepository } from "./SplitRepository.js"
import { Transactor } from "../Transactor.js"
import { emitSplitEvent } from "./splitShared.js"

/** What the bank (or the account's state) said about one payout. */
type PayoutOutcome =
  | { readonly _tag: "Sent"; readonly bank_transaction_id: BankTransactionId }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Retry"; readonly reason: string }

const nothing: Split.SplitRunReport = { finished: 0, sent: 0, payouts_failed: 0, failed: 0 }

export const make = Effect.gen(function* () {
  const repo = yield* SplitRepository
  const bank = yield* BankProvider
  const ledger = yield* Ledger
  const outbox = yield* Outbox
  const transactor = yield* Transactor
  const config = yield* EngineConfig

  /** Takes a due split for this run (ON_HOLD past its hold, or PROCESSING past its lease). */
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
          lease_until: DateTime.addDuration(now, Split.executionLease),
          last_modified_timestamp: now
        })
        yield* repo.update(claimed)
        return Option.some({ claimed, due: dueAt })
      })
    )

  /** With no payout left PENDING: the result, the lease dropped, "Split payouts result". */
  const finishIfDone = (
    split: Split.SplitPayment,
    payouts: ReadonlyArray<Split.SplitPayout>,
    now: DateTime.Utc
  ) =>
    Effect.gen(function* () {
      if (payouts.some((p) => p.status === "PENDING")) return Option.none<Split.PayoutResult>()
      const result = Split.resultOf(payouts)
      yield* Split.transition(Split.payoutMachine, Split.payoutStatusOf(split), result)
      const done = new Split.SplitPayment({
        ...split,
        payout_status: result,
        lease_until: null,
        last_modified_timestamp: now
      })
      yield* repo.update(done)
      yield* emitSplitEvent(outbox, done, "split.payouts_result", {
        message: "split.payouts_result",
        split_payment_id: done.split_payment_id,
        external_id: done.external_id,
        payout_status: result
      })
      return Option.some(result)
    })

  /**
   * Records one payout's outcome and moves its held amount exactly once: to the bank on
   * success, back to the balance on failure. The last payout also finishes the split.
   */
  const recordOutcome = (
    id: Split.SplitPayment["split_payment_id"],
    payoutId: Split.SplitPayout["payout_id"],
    outcome: Exclude<PayoutOutcome, { _tag: "Retry" }>
  ) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findByIdForUpdate(id)
        if (Option.isNone(found) || found.value.payout_status !== "PROCESSING") return Option.none()
        const payouts = yield* repo.payoutsOf(id)
        const payout = payouts.find((p) => p.payout_id === payoutId)
        if (payout === undefined || payout.status !== "PENDING") return Option.none()
        const now = yield* DateTime.now
        const status = yield* Split.transition(
          Split.payoutStateMachine,
          payout.status,
          outcome._tag === "Sent" ? "SUCCESS" : "FAILED"
        )
        const settled = new Split.SplitPayout({
          ...payout,
          status,
          bank_transaction_id: outcome._tag === "Sent" ? outcome.bank_transaction_id : null,
          failure_reason: outcome._tag === "Failed" ? outcome.reason : null,
          executed_timestamp: now
        })
        yield* repo.updatePayout(settled)
        yield* ledger.post({
          kind: status === "SUCCESS" ? "split.payout.sent" : "split.payout.failed",
          reference: payout.payout_id,
          postings: [
            debit(Accounts.splitHeld(id), payout.amount),
            credit(status === "SUCCESS" ? Accounts.bankClearing : Accounts.splitBalance(id), payout.amount)
          ]
        })
        const finished = yield* finishIfDone(
          found.value,
          payouts.map((p) => (p.payout_id === payoutId ? settled : p)),
          now
        )
        return Option.some({ status, finished: Option.isSome(finished) })
      })
    )

  /** Calls the bank for one payout; an account disabled during the hold is not paid. */
  const send = (payout: Split.SplitPayout) =>
    Effect.gen(function* () {
      const account = yield* repo.findAccount(payout.account_id)
      if (!Option.exists(account, (a) => a.status === "ACTIVE")) {
        return {
          _tag: "Failed",
          reason: "the payout account was disabled before the payout"
        } as PayoutOutcome
      }
      return yield* bank
        .sendTransfer({ to: payout.destination, amount: payout.amount, reference: payout.payout_id })
        .pipe(
          Effect.map((r): PayoutOutcome => ({ _tag: "Sent", bank_transaction_id: r.bank_transaction_id })),
          Effect.catchTag("BankError", (e) =>
            Effect.succeed<PayoutOutcome>(
              e.reason === "unavailable"
                ? { _tag: "Retry", reason: e.message }
                : { _tag: "Failed", reason: e.message }
            )
          )
        )
    })

  /** Finishes a claimed split whose payouts were all settled already (nothing to send). */
  const finishSettled = (id: Split.SplitPayment["split_payment_id"]) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findByIdForUpdate(id)
        if (Option.isNone(found) || found.value.payout_status !== "PROCESSING") return false
        return Option.isSome(yield* finishIfDone(found.value, yield* repo.payoutsOf(id), yield* DateTime.now))
      })
    )

  /** Executes every payout still PENDING of a claimed split. */
  const execute = (split: Split.SplitPayment) =>
    Effect.gen(function* () {
      const id = split.split_payment_id
      const report = { ...nothing }
      const pending = (yield* repo.payoutsOf(id)).filter((p) => p.status === "PENDING")
      if (pending.length === 0) return { ...nothing, finished: (yield* finishSettled(id)) ? 1 : 0 }
      for (const payout of pending) {
        const outcome = yield* send(payout)
        if (outcome._tag === "Retry") {
          report.failed++
          yield* Effect.logWarning(
            "split payout not sent; retried after the lease",
            payout.payout_id,
            outcome.reason
          )
          continue
        }
        const settled = yield* recordOutcome(id, payout.payout_id, outcome)
        if (Option.isSome(settled)) {
          if (settled.value.status === "SUCCESS") report.sent++
          else report.payouts_failed++
          if (settled.value.finished) report.finished++
        }
      }
      return report
    })

  /** Executes every instruction whose hold has ended (and resumes interrupted ones). */
  const runDue = Effect.fn("Splits.runDue")(function* () {
    const now = yield* DateTime.now
    const report = { ...nothing }
    // Each split is looked at once per run, whatever happens to it.
    const seen = new Set<string>()
    while (true) {
      const due = (yield* repo.findDue(now, config.jobBatchSize + seen.size)).filter(
        (s) => !seen.has(s.split_payment_id)
      )
      if (due.length === 0) break
      yield* Metric.incrementBy(Metrics.jobsDue.split_payout, due.length)
      for (const candidate of due) {
        seen.add(candidate.split_payment_id)
        const result = yield* claim(candidate.split_payment_id, now).pipe(
          Effect.flatMap(
            Option.match({
              onNone: () => Effect.succeed(nothing),
              // How late the instruction was taken after its hold (or the previous run's lease) ended.
              onSome: ({ claimed, due }) =>
                Effect.zipRight(
                  Metric.update(Metrics.jobLag.split_payout, Math.max(0, DateTime.distance(due, now)) / 1000),
                  execute(claimed)
                )
            })
          ),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(
                "executing split payouts failed; retried after the lease",
                candidate.split_payment_id,
                error
              ),
              { ...nothing, failed: 1 }
            )
          )
        )
        report.finished += result.finished
        report.sent += result.sent
        report.payouts_failed += result.payouts_failed
        report.failed += result.failed
      }
    }
    return report satisfies Split.SplitRunReport
  })

  return { runDue } as const
})
