/**
 * The engine's metrics, counted where the event happens (`Payments`, `Transfers`, `Jobs`) with
 * Effect's `Metric`: they live in the process's metric registry, which a host exports as it likes
 * (the reference server serves them to Prometheus at `/metrics`). A counter counts in this process
 * only; states of the database (backlogs, work in flight) are read by the host, not counted here.
 *
 * Labelled metrics are made once, below, with their labels in their key (`labelled`).
 */
import { Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"
import type { MetricKeyType } from "effect"

/**
 * The metric of `key` with `labels` (in this order) in its key. `Metric.tagged` keeps the labels
 * outside the key, so each update of its metric builds the labelled key again and looks it up in
 * the registry on every update; this one builds the key once. Both count into the same registry
 * entry.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Effect's own bound for a key's type
export const labelled = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  key: MetricKey.MetricKey<Type>,
  labels: Readonly<Record<string, string>>
): Metric.Metric<Type, MetricKeyType.MetricKeyType.InType<Type>, MetricKeyType.MetricKeyType.OutType<Type>> =>
  Metric.fromMetricKey(
    MetricKey.taggedWithLabels(
      key,
      Object.entries(labels).map(([name, value]) => MetricLabel.make(name, value))
    )
  )

const counterKey = (name: string, description: string) =>
  MetricKey.counter(name, { description, incremental: true })

const counter = (name: string, description: string) => Metric.fromMetricKey(counterKey(name, description))

/** Payments created (a repeated create answered with the existing payment is not counted). */
export const paymentsCreated = counter("cobro_payments_created", "Payments created")

const settled = counterKey(
  "cobro_payments_settled",
  "Payments closed at their expiry, by the state they ended in (EXPIRED when nothing was paid)"
)

/** A payment's state: every `Payment.PaymentStatus` is one (`Jobs` indexes the record below with it). */
type PaymentState = "PENDING" | "SUCCESS" | "OVERPAID" | "UNDERPAID" | "EXPIRED"

/** Payments closed at their expiry (their CVU released), by their final state. */
export const paymentsSettled: Record<PaymentState, Metric.Metric.Counter<number>> = {
  PENDING: labelled(settled, { state: "PENDING" }),
  SUCCESS: labelled(settled, { state: "SUCCESS" }),
  OVERPAID: labelled(settled, { state: "OVERPAID" }),
  UNDERPAID: labelled(settled, { state: "UNDERPAID" }),
  EXPIRED: labelled(settled, { state: "EXPIRED" })
}

const transfers = counterKey("cobro_transfers_ingested", "Incoming transfers ingested, by outcome")

/** What became of an incoming transfer: credited, seen before, or returned to the sender. */
export type TransferOutcome = "credited" | "duplicate" | "returned"

export const transfersIngested: Record<TransferOutcome, Metric.Metric.Counter<number>> = {
  credited: labelled(transfers, { outcome: "credited" }),
  duplicate: labelled(transfers, { outcome: "duplicate" }),
  returned: labelled(transfers, { outcome: "returned" })
}

/** The kinds of work `Jobs.runDue` does. */
export type Job = "payment_expiry" | "payout_schedule" | "split_payout"

const jobs = ["payment_expiry", "payout_schedule", "split_payout"] as const satisfies ReadonlyArray<Job>

const byJob = <M>(make: (job: Job) => M): Record<Job, M> =>
  Object.fromEntries(jobs.map((job) => [job, make(job)])) as Record<Job, M>

const due = counterKey("cobro_jobs_due", "Items of background work found due, by job")
const run = counterKey("cobro_jobs_run", "Items of background work done, by job")
const failed = counterKey("cobro_jobs_failed", "Items of background work that failed and stay due, by job")

/** Items found due (an item another instance got to first is counted by both). */
export const jobsDue: Record<Job, Metric.Metric.Counter<number>> = byJob((job) => labelled(due, { job }))
/** Items done by this process. */
export const jobsRun: Record<Job, Metric.Metric.Counter<number>> = byJob((job) => labelled(run, { job }))
/** Items that failed and stay due for the next run. */
export const jobsFailed: Record<Job, Metric.Metric.Counter<number>> = byJob((job) =>
  labelled(failed, { job })
)

const lag = MetricKey.histogram(
  "cobro_job_lag_seconds",
  MetricBoundaries.fromIterable([0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600]),
  "How late an item of background work ran after it became due, in seconds (engine time)"
)

/** Seconds between an item becoming due and running. */
export const jobLag: Record<Job, Metric.Metric.Histogram<number>> = byJob((job) => labelled(lag, { job }))

const outgoingSettled = counterKey(
  "cobro_outgoing_transfers_settled",
  "Outgoing transfers (payouts, refunds) settled, by outcome: completed at the bank, or failed and their money returned"
)

/** Outgoing transfers settled by this process, by outcome. */
export const outgoingTransfersSettled: Record<"completed" | "failed", Metric.Metric.Counter<number>> = {
  completed: labelled(outgoingSettled, { outcome: "completed" }),
  failed: labelled(outgoingSettled, { outcome: "failed" })
}

/** Outgoing transfers sent again (same reference) because the bank had no record of them. */
export const outgoingTransfersResent = counter(
  "cobro_outgoing_transfers_resent",
  "Outgoing transfers sent again with the same reference because the bank reported no record of them"
)

/** Status queries of outgoing transfers whose answer left the outcome unknown (bank unavailable). */
export const outgoingTransfersUnknown = counter(
  "cobro_outgoing_transfers_unknown",
  "Sends and status queries of outgoing transfers that left the outcome unknown (timeout, bank unavailable)"
)
