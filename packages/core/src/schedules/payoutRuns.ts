/**
 * The runs of payout schedules, for `Schedules.runDue` (and through it `Jobs.runDue`).
 *
 * A run executes exactly once and loses no money although the bank call cannot sit inside a
 * database transaction:
 * 1. one unit of work claims the due schedule under lock, advances `next_run_date`, creates a
 *    PENDING payout, moves the whole available balance to in transit and records the transfer
 *    in flight (`OutgoingTransfers`, reference the payout id);
 * 2. the transfer is sent (the bank deduplicates on the reference) and its answer recorded;
 * 3. the settle step (at once, or `Jobs.runDue`'s), records the outcome once: SUCCESS (in transit →
 *    out of the bank) or, when the bank refused or failed it, FAILED (in transit → back to
 *    available, swept again next run, and a "payout.failed" event).
 * While the outcome is unknown (a timeout, the bank unavailable, a crash between the steps) the
 * payout stays PENDING with its money in transit; the settle job asks the bank for the
 * transfer's status after `payoutRetryAfter` and sends it again (same reference) only when the
 * bank has no record of it.
 */
import { DateTime, Duration, Effect, Metric, Option } from "effect"
import { EngineConfig } from "../EngineConfig.js"
import { PayoutId, type ScheduleId } from "../Ids.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import * as DueScope from "../clocks/DueScope.js"
import { OutgoingTransfers, type SettleReport, type StepResult } from "../outgoing/OutgoingTransfers.js"
import { drainDue } from "../internal/drainDue.js"
import * as S from "./Schedule.js"
import { ScheduleRepository } from "./ScheduleRepository.js"
import { Transactor } from "../Transactor.js"
import type { AccountStatus } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"
import type { OutgoingTransfer } from "../outgoing/OutgoingTransfer.js"
import { newId } from "../internal/ids.js"
import * as Spans from "../Spans.js"

/**
 * How long a PENDING payout's transfer is left alone before the settle job asks the bank about
 * it: `EngineConfig.transferCheckInterval`'s default.
 */
export const payoutRetryAfter = Duration.minutes(1)

/** Accounts whose payouts are held: their runs advance but send nothing. */
const heldAccounts: ReadonlyArray<AccountStatus> = ["SUSPENDED", "REJECTED"]

/** What one call of `runDue` did with payout schedules. */
export interface PayoutRunReport {
  /** Due schedules this call ran (each run happens once, whoever calls). */
  readonly runs: number
  /** Payouts the bank confirmed (SUCCESS), new or in flight from earlier calls. */
  readonly sent: number
  /** Payouts the bank refused or failed; their money is back in available for the next run. */
  readonly failed: number
  /** Payouts still in flight: accepted and pending at the bank, or outcome unknown. */
  readonly retrying: number
  /** Runs with nothing to send: zero available balance or a held account. */
  readonly skipped: number
  /** Items that failed unexpectedly; they stay due for the next call. */
  readonly errors: number
}

/** What the settle step did with schedule payouts, added to a run's counts. */
export const withSettled = (run: PayoutRunReport, settled: SettleReport): PayoutRunReport => ({
  ...run,
  sent: run.sent + settled.completed,
  failed: run.failed + settled.failed,
  retrying: run.retrying + settled.pending + settled.unknown,
  errors: run.errors + settled.errors
})

export const makePayoutRuns = Effect.gen(function* () {
  const repo = yield* ScheduleRepository
  const users = yield* UserRepository
  const outgoing = yield* OutgoingTransfers
  const ledger = yield* Ledger
  const transactor = yield* Transactor
  const config = yield* EngineConfig

  /** A run taken: `due` is when it became due (the schedule's `next_run_date` before the claim). */
  type Claim = { readonly due: DateTime.Utc } & (
    | { readonly _tag: "Skipped" }
    | { readonly _tag: "Claimed"; readonly transfer: Option.Option<OutgoingTransfer> }
  )

  /** Takes a due run of one schedule; `none` when it is not due (any more) or inactive. */
  const claim = (id: ScheduleId, now: DateTime.Utc) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findByIdForUpdate(id)
        if (Option.isNone(found)) return Option.none<Claim>()
        const schedule = found.value
        if (schedule.schedule_status !== "active" || DateTime.greaterThan(schedule.next_run_date, now)) {
          return Option.none<Claim>()
        }
        yield* repo.update(
          new S.PayoutSchedule({ ...schedule, next_run_date: S.nextRunDate(schedule.frequency, now) })
        )
        const user = yield* users.findById(schedule.user_id)
        if (Option.exists(user, (u) => heldAccounts.includes(u.account_status))) {
          return Option.some<Claim>({ _tag: "Skipped", due: schedule.next_run_date })
        }
        const available = Accounts.merchantAvailable(schedule.user_id)
        const amount = yield* ledger.balance(available, "ARS")
        if (amount.minor <= 0n) return Option.some<Claim>({ _tag: "Skipped", due: schedule.next_run_date })
        const payout = new S.Payout({
          payout_id: PayoutId.make(yield* newId("po")),
          schedule_id: schedule.schedule_id,
          user_id: schedule.user_id,
          address: schedule.payload.address,
          amount,
          payout_status: "PENDING",
          bank_transaction_id: null,
          error: null,
          attempts: 1,
          attempted_at: now,
          creation_timestamp: now,
          last_modified_timestamp: now
        })
        yield* repo.insertPayout(payout)
        const inTransit = Accounts.merchantInTransit(schedule.user_id)
        yield* ledger.post({
          kind: "payout.initiated",
          reference: payout.payout_id,
          postings: [debit(available, amount), credit(inTransit, amount)]
        })
        const transfer = yield* outgoing.record({
          reference: payout.reference,
          purpose: "schedule_payout",
          owner_id: payout.payout_id,
          destination: payout.address,
          amount,
          in_transit: inTransit,
          return_to: available
        })
        return Option.some<Claim>({ _tag: "Claimed", transfer, due: schedule.next_run_date })
      })
    )

  const tallyInto = (counts: { sent: number; failed: number; retrying: number }) => (r: StepResult) => {
    if (r.step === "completed") counts.sent++
    else if (r.step === "failed") counts.failed++
    else if (r.step !== "stale") counts.retrying++
  }

  /**
   * Runs every schedule of `scope` whose run has come. Payouts in flight from earlier runs are
   * settled by `Jobs.runDue`'s settle step (`OutgoingTransfers.settleDue`), before this.
   */
  const runDue = Spans.fn("Schedules.runDue")(function* (scope: DueScope.DueScope = DueScope.everyone) {
    const now = yield* DateTime.now
    const counts = { runs: 0, sent: 0, failed: 0, retrying: 0, skipped: 0, errors: 0 }
    const tally = tallyInto(counts)
    yield* drainDue({
      batchSize: config.jobBatchSize,
      find: (limit) => repo.findDue(now, limit, scope),
      key: (s) => s.schedule_id,
      counted: Metrics.jobsDue.payout_schedule,
      each: (s) =>
        claim(s.schedule_id, now).pipe(
          Effect.flatMap(
            Option.match({
              onNone: () => Effect.void,
              onSome: (c) => {
                counts.runs++
                const lag = Metric.update(
                  Metrics.jobLag.payout_schedule,
                  Math.max(0, DateTime.distance(c.due, now)) / 1000
                )
                if (c._tag === "Skipped") {
                  counts.skipped++
                  return lag
                }
                return Effect.zipRight(
                  lag,
                  Option.match(c.transfer, {
                    onNone: () => Effect.void,
                    onSome: (t) => Effect.map(outgoing.dispatch(t), tally)
                  })
                )
              }
            })
          ),
          Effect.catchAll((e) =>
            Effect.zipRight(
              Effect.logWarning("running a payout schedule failed; retried next run", s.schedule_id, e),
              Effect.sync(() => counts.errors++)
            )
          )
        )
    })
    return counts satisfies PayoutRunReport
  })

  return { runDue } as const
})
