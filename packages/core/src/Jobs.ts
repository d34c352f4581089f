/**
 * The work that becomes due with time, run at the current `Clock` time. Hosts call `runDue`
 * on an interval (the reference server does); tests call it after moving the `TestClock`.
 * Each item is its own unit of work, re-checked under lock, so concurrent or repeated runs do
 * each piece of work exactly once.
 */
import { DateTime, Effect, Metric, Option } from "effect"
import { BankProvider } from "./bank/BankProvider.js"
import { EngineConfig } from "./EngineConfig.js"
import { emitPaymentUpdated } from "./payments/paymentEvents.js"
import * as Metrics from "./Metrics.js"
import { Outbox } from "./webhooks/Outbox.js"
import * as DueScope from "./clocks/DueScope.js"
import * as MerchantClocks from "./clocks/MerchantClocks.js"
import type { UserId } from "./Ids.js"
import { OutgoingTransfers, type SettleReport } from "./outgoing/OutgoingTransfers.js"
import * as P from "./payments/Payment.js"
import { PaymentRepository } from "./payments/PaymentRepository.js"
import { type PayoutRunReport, Schedules } from "./schedules/Schedules.js"
import { withSettled } from "./schedules/payoutRuns.js"
import { addRuns, fromSettle } from "./splits/splitExecution.js"
import { drainDue } from "./internal/drainDue.js"
import type { SplitRunReport } from "./splits/Split.js"
import { Splits } from "./splits/Splits.js"
import { Transactor } from "./Transactor.js"
import * as Spans from "./Spans.js"

export interface RunReport {
  /** PENDING payments that became EXPIRED. */
  readonly expired: number
  /** CVUs given back to the bank (expired payments and paid ones past their expiry). */
  readonly released: number
  /** Items that failed and stay due for the next run. */
  readonly failed: number
  /** Payout schedule runs (see `Schedules.runDue`). */
  readonly payouts: PayoutRunReport
  /** Split payouts instructions executed after their hold (see `Splits.runDue`). */
  readonly splits: SplitRunReport
  /** Refund transfers in flight checked with the bank (see `OutgoingTransfers.settleDue`). */
  readonly refunds: SettleReport
}

export class Jobs extends Effect.Service<Jobs>()("@cobro/core/Jobs", {
  effect: Effect.gen(function* () {
    const payments = yield* PaymentRepository
    const bank = yield* BankProvider
    const outbox = yield* Outbox
    const transactor = yield* Transactor
    const config = yield* EngineConfig
    const schedules = yield* Schedules
    const splitPayments = yield* Splits
    const outgoing = yield* OutgoingTransfers

    /** Closes one payment whose time has come; `none` when another run has it or got there first. */
    const closePayment = (id: P.Payment["id"], now: DateTime.Utc) =>
      transactor.withTransaction(
        Effect.gen(function* () {
          const claimed = yield* payments.claimDue(id, now)
          if (Option.isNone(claimed)) return Option.none()
          const payment = claimed.value
          yield* bank.releaseAccount(payment.cvu)
          const expires = payment.payment_status === "PENDING"
          const closed = new P.Payment({
            ...payment,
            cvu_released: true,
            payment_status: expires ? "EXPIRED" : payment.payment_status,
            last_modified_timestamp: expires ? now : payment.last_modified_timestamp
          })
          yield* payments.update(closed)
          if (expires) yield* emitPaymentUpdated(outbox, closed)
          return Option.some(closed)
        })
      )

    /** A payment closed: its final state, and how long after its expiry it was closed. */
    const closedMetrics = (closed: P.Payment, now: DateTime.Utc) =>
      Effect.all([
        Metric.increment(Metrics.jobsRun.payment_expiry),
        Metric.increment(Metrics.paymentsSettled[closed.payment_status]),
        Metric.update(
          Metrics.jobLag.payment_expiry,
          Math.max(0, DateTime.distance(closed.expiration_timestamp, now)) / 1000
        )
      ])

    const clocks = yield* MerchantClocks.MerchantClocks

    /** One pass over the due work of `scope`, at the time of the fiber's `Clock`. */
    const runScope = Spans.fn("Jobs.runScope")(function* (scope: DueScope.DueScope) {
      const now = yield* DateTime.now
      let expired = 0
      let released = 0
      let failed = 0
      yield* drainDue({
        batchSize: config.jobBatchSize,
        find: (limit) => payments.findDue(now, limit, scope),
        key: (p) => p.id,
        counted: Metrics.jobsDue.payment_expiry,
        each: (payment) =>
          Effect.gen(function* () {
            const result = yield* closePayment(payment.id, now).pipe(
              Effect.tapError((e) =>
                Effect.logWarning("closing a due payment failed; retried next run", payment.id, e)
              ),
              Effect.option
            )
            if (Option.isNone(result)) {
              failed++
              yield* Metric.increment(Metrics.jobsFailed.payment_expiry)
            } else if (Option.isSome(result.value)) {
              const closed = result.value.value
              released++
              if (closed.payment_status === "EXPIRED") expired++
              yield* closedMetrics(closed, now)
            }
          })
      })
      // Every transfer in flight, whatever it is for, before new ones are sent (transfers at the
      // bank run on real time, whoever's pass this is: see `OutgoingTransfers`).
      const settled = yield* outgoing.settleDue()
      const payouts = withSettled(yield* schedules.runDue(scope), settled.schedule_payout)
      const splits = addRuns(fromSettle(settled.split_payout), yield* splitPayments.runDue(scope))
      const refunds = settled.refund
      yield* Metric.incrementBy(Metrics.jobsRun.payout_schedule, payouts.runs)
      yield* Metric.incrementBy(Metrics.jobsFailed.payout_schedule, payouts.errors)
      yield* Metric.incrementBy(Metrics.jobsRun.split_payout, splits.finished)
      yield* Metric.incrementBy(Metrics.jobsFailed.split_payout, splits.failed)
      return { expired, released, failed, payouts, splits, refunds } satisfies RunReport
    })

    /**
     * Everything due now: everyone's work on the fiber's clock, except the merchants whose clock
     * runs ahead of it (`MerchantClocks`: moved sandbox test clocks), whose work is then found
     * and done each on its own clock. The counts of all passes added up.
     */
    const runDue = Spans.fn("Jobs.runDue")(function* () {
      return yield* MerchantClocks.passes(clocks, runScope)
    })

    /** The work of merchant `user` that is due by its own clock (a sandbox test clock moved). */
    const runDueOf = (user: UserId) => MerchantClocks.onClockOf(clocks, user)(runScope(DueScope.only(user)))

    return { runDue, runDueOf } as const
  })
}) {}
