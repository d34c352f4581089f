/**
 * The runs of payout schedules, for `Schedules.runDue` (and through it `Jobs.runDue`).
 *
 * A run executes exactly once and loses no money although the bank call cannot sit inside a
 * database transaction:
 * 1. one unit of work claims the due schedule under lock, advances `next_run_date`, creates a
 *    PENDING payout and moves the whole available balance to in transit;
 * 2. the transfer is sent with the payout id as reference (the bank deduplicates on it);
 * 3. a second unit of work records the outcome: SUCCESS (in transit → out of the bank) or,
 *    when the bank refused, FAILED (in transit → back to available, swept again next run).
 * When the outcome is unknown (bank unavailable, a crash between the steps) the payout stays
 * PENDING with its money in transit, and a later run resends it with the same reference once
 * `payoutRetryAfter` has passed since the last attempt.
 */
import { DateTime, Duration, Effect, Either, Metric, Option } from "effect"
import { type BankError, BankProvider } from "../bank/BankProvider.js"
import { EngineConfig } from "../EngineConfig.js"
import { PayoutId, type ScheduleId } from "../Ids.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Metrics from "../Metrics.js"
import * as S from "./Schedule.js"
import { ScheduleRepository } from "./ScheduleRepository.js"
import { Transactor } from "../Transactor.js"
import type { AccountStatus } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"
import { newId } from "../internal/ids.js"

/**
 * How long a PENDING payout's attempt is left alone before another run resends it. Longer than
 * a bank call can take, so concurrent runs do not both call the bank for one payout.
 */
export const payoutRetryAfter = Duration.minutes(1)

/** Accounts whose payouts are held: their runs advance but send nothing. */
const heldAccounts: ReadonlyArray<AccountStatus> = ["SUSPENDED", "REJECTED"]

/** What one call of `runDue` did with payout schedules. */
export interface PayoutRunReport {
  /** Due schedules this call ran (each run happens once, whoever calls). */
  readonly runs: number
  /** Payouts the bank accepted, new or resent. */
  readonly sent: number
  /** Payouts the bank refused; their money is back in available and goes with the next run. */
  readonly failed: number
  /** Payouts whose outcome is unknown (bank unavailable); resent by a later call. */
  readonly retrying: number
  /** Runs with nothing to send: zero available balance or a held account. */
  readonly skipped: number
  /** Items that failed unexpectedly; they stay due for the next call. */
  readonly errors: number
}

type SendOutcome = "sent" | "failed" | "retrying" | "stale"

/** Whether the bank's answer settles the transfer as not done; `unavailable` may hide a success. */
const isDefinitive = (e: BankError): boolean => e.reason !== "unavailable"

export const makePayoutRuns = Effect.gen(function* () {
  const repo = yield* ScheduleRepository
  const users = yield* UserRepository
  const bank = yield* BankProvider
  const ledger = yield* Ledger
  const transactor = yield* Transactor
  const config = yield* EngineConfig

  /** A run taken: `due` is when it became due (the schedule's `next_run_date` before the claim). */
  type Claim = { readonly due: DateTime.Utc } & (
    { readonly _tag: "Skipped" } | { readonly _tag: "Claimed"; readonly payout: S.Payout }
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
        yield* ledger.post({
          kind: "payout.initiated",
          reference: payout.payout_id,
          postings: [debit(available, amount), credit(Accounts.merchantInTransit(schedule.user_id), amount)]
        })
        return Option.some<Claim>({ _tag: "Claimed", payout, due: schedule.next_run_date })
      })
    )

  /** Takes a new attempt of a PENDING payout whose last attempt is older than `cutoff`. */
  const claimRetry = (id: PayoutId, cutoff: DateTime.Utc, now: DateTime.Utc) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findPayoutByIdForUpdate(id)
        if (Option.isNone(found)) return Option.none<S.Payout>()
        const payout = found.value
        if (payout.payout_status !== "PENDING" || DateTime.greaterThan(payout.attempted_at, cutoff)) {
          return Option.none<S.Payout>()
        }
        const retried = new S.Payout({
          ...payout,
          attempts: payout.attempts + 1,
          attempted_at: now,
          last_modified_timestamp: now
        })
        yield* repo.updatePayout(retried)
        return Option.some(retried)
      })
    )

  /** Records the bank's answer; `stale` when another run already recorded one. */
  const complete = (
    id: PayoutId,
    result: Either.Either<{ readonly bank_transaction_id: S.Payout["bank_transaction_id"] }, BankError>
  ) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findPayoutByIdForUpdate(id)
        if (Option.isNone(found) || found.value.payout_status !== "PENDING") return "stale" as SendOutcome
        const payout = found.value
        const now = yield* DateTime.now
        const inTransit = Accounts.merchantInTransit(payout.user_id)
        if (Either.isRight(result)) {
          yield* S.guardPayout(payout, "SUCCESS")
          yield* repo.updatePayout(
            new S.Payout({
              ...payout,
              payout_status: "SUCCESS",
              bank_transaction_id: result.right.bank_transaction_id,
              last_modified_timestamp: now
            })
          )
          yield* ledger.post({
            kind: "payout.sent",
            reference: payout.payout_id,
            postings: [debit(inTransit, payout.amount), credit(Accounts.bankClearing, payout.amount)]
          })
          return "sent" as SendOutcome
        }
        const error = result.left
        const status = isDefinitive(error) ? "FAILED" : "PENDING"
        yield* S.guardPayout(payout, status)
        yield* repo.updatePayout(
          new S.Payout({
            ...payout,
            payout_status: status,
            error: `${error.reason}: ${error.message}`,
            last_modified_timestamp: now
          })
        )
        if (status === "PENDING") return "retrying" as SendOutcome
        yield* ledger.post({
          kind: "payout.failed",
          reference: payout.payout_id,
          postings: [
            debit(inTransit, payout.amount),
            credit(Accounts.merchantAvailable(payout.user_id), payout.amount)
          ]
        })
        return "failed" as SendOutcome
      })
    )

  const send = (payout: S.Payout) =>
    Effect.gen(function* () {
      const result = yield* Effect.either(
        bank.sendTransfer({ to: payout.address, amount: payout.amount, reference: payout.reference })
      )
      if (Either.isLeft(result)) {
        yield* Effect.logWarning(
          "payout transfer failed",
          payout.payout_id,
          result.left.reason,
          result.left.message
        )
      }
      return yield* complete(payout.payout_id, result)
    })

  const runDue = Effect.fn("Schedules.runDue")(function* () {
    const now = yield* DateTime.now
    const counts = { runs: 0, sent: 0, failed: 0, retrying: 0, skipped: 0, errors: 0 }
    const tally = (outcome: SendOutcome) => {
      if (outcome !== "stale") counts[outcome]++
    }
    const onError = (what: string, id: string) => (e: unknown) =>
      Effect.zipRight(
        Effect.logWarning(`${what} failed; retried next run`, id, e),
        Effect.sync(() => counts.errors++)
      )

    // Payouts left PENDING by an earlier run (bank unavailable, crash): resend, same reference.
    const cutoff = DateTime.subtractDuration(now, payoutRetryAfter)
    const seenPayouts = new Set<string>()
    while (true) {
      const pending = (yield* repo.findPendingPayouts(cutoff, config.jobBatchSize + seenPayouts.size)).filter(
        (p) => !seenPayouts.has(p.payout_id)
      )
      if (pending.length === 0) break
      for (const p of pending) {
        seenPayouts.add(p.payout_id)
        yield* claimRetry(p.payout_id, cutoff, now).pipe(
          Effect.flatMap(
            Option.match({ onNone: () => Effect.void, onSome: (r) => Effect.map(send(r), tally) })
          ),
          Effect.catchAll(onError("resending a payout", p.payout_id))
        )
      }
    }

    // Schedules whose run has come.
    const seenSchedules = new Set<string>()
    while (true) {
      const due = (yield* repo.findDue(now, config.jobBatchSize + seenSchedules.size)).filter(
        (s) => !seenSchedules.has(s.schedule_id)
      )
      if (due.length === 0) break
      yield* Metric.incrementBy(Metrics.jobsDue.payout_schedule, due.length)
      for (const s of due) {
        seenSchedules.add(s.schedule_id)
        yield* claim(s.schedule_id, now).pipe(
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
                return Effect.zipRight(lag, Effect.map(send(c.payout), tally))
              }
            })
          ),
          Effect.catchAll(onError("running a payout schedule", s.schedule_id))
        )
      }
    }
    return counts satisfies PayoutRunReport
  })

  return { runDue } as const
})
