/**
 * The work a server does besides answering requests: `Jobs.runDue` (expiries, payout schedules,
 * split payouts) on an interval, webhook deliveries, and the purges of old idempotency keys and of
 * the dashboard's ended sessions. Every
 * piece is safe to run in several instances against one database (each item is claimed under a
 * lock or a lease), so each instance simply runs all of them.
 *
 * On shutdown a run in progress is allowed to finish (up to `shutdownGrace`) before it is
 * interrupted, so a webhook attempt under way is recorded rather than left to its lease; an
 * interrupted run is safe too (its unit of work rolls back and the item stays due).
 */
import { Idempotency, Jobs, Reconciliation, WebSessions } from "@cobro/core"
import { Webhooks, WebhooksConfig } from "@cobro/webhooks"
import { DateTime, Duration, Effect, Fiber, Layer, Schedule } from "effect"
import { conciliateFound } from "./internal/bindGaps.js"

/** How long a run in progress may take to finish once the server is stopping. */
export const shutdownGrace = Duration.seconds(10)

/** How often records of idempotency keys older than their 24 hours are deleted. */
export const purgeInterval = Duration.hours(1)

/**
 * Runs `work` so that interrupting the caller first waits up to `grace` for `work` to finish,
 * then interrupts it.
 */
export const finishWithin =
  (grace: Duration.DurationInput) =>
  <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      // The work itself stays interruptible (a forked fiber inherits the mask otherwise).
      Effect.flatMap(Effect.forkDaemon(Effect.interruptible(work)), (fiber) =>
        restore(Fiber.join(fiber)).pipe(
          Effect.onInterrupt(() =>
            Fiber.await(fiber).pipe(
              // Finalizers run uninterruptibly: let the timeout stop the wait.
              Effect.interruptible,
              Effect.timeout(grace),
              Effect.ignore,
              Effect.zipRight(Fiber.interrupt(fiber))
            )
          )
        )
      )
    )

/** Repeats `run` every `interval` for as long as the scope lives; a failed run is logged. */
const every = <A, E, R>(name: string, interval: Duration.DurationInput, run: Effect.Effect<A, E, R>) =>
  run.pipe(
    finishWithin(shutdownGrace),
    Effect.catchAllCause((cause) =>
      Effect.logError(`${name} failed; it runs again in ${Duration.format(interval)}`, cause)
    ),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.forkScoped,
    Effect.asVoid
  )

/** The sum of every count in a report (nested ones too): zero when a run found nothing to do. */
export const countOf = (report: object): number =>
  Object.values(report).reduce<number>(
    (sum, v) => sum + (typeof v === "number" ? v : typeof v === "object" && v !== null ? countOf(v) : 0),
    0
  )

/** The non-zero counts of a report as `path=n` pairs (`expired=2 payouts.sent=1`); "nothing" when none. */
export const summary = (report: object): string => {
  const pairs: Array<string> = []
  const walk = (value: object, prefix: string) => {
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === "number" && v !== 0) pairs.push(`${prefix}${key}=${v}`)
      else if (typeof v === "object" && v !== null) walk(v, `${prefix}${key}.`)
    }
  }
  walk(report, "")
  return pairs.length === 0 ? "nothing" : pairs.join(" ")
}

/** `Jobs.runDue` every `interval`; logs what it did when it did something. */
export const jobs = (interval: Duration.DurationInput): Layer.Layer<never, never, Jobs.Jobs> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const jobs = yield* Jobs.Jobs
      yield* every(
        "Jobs.runDue",
        interval,
        Effect.tap(jobs.runDue(), (report) =>
          countOf(report) === 0 ? Effect.void : Effect.logInfo(`due work done: ${summary(report)}`)
        )
      )
    })
  )

/**
 * Webhook deliveries every `pollInterval` of the webhooks settings. This is the server's own loop
 * over `Webhooks.deliverDue` rather than `Webhooks.layerWorker`, so a shutdown lets the attempts
 * in flight finish and be recorded.
 */
export const webhooks: Layer.Layer<never, never, Webhooks.Webhooks | WebhooksConfig.WebhooksConfig> =
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const webhooks = yield* Webhooks.Webhooks
      const config = yield* WebhooksConfig.WebhooksConfig
      yield* every(
        "Webhooks.deliverDue",
        config.pollInterval,
        Effect.tap(webhooks.deliverDue(), (report) =>
          report.attempted === 0 ? Effect.void : Effect.logInfo(`webhook deliveries: ${summary(report)}`)
        )
      )
    })
  )

/** Deletes expired idempotency records every `purgeInterval`. */
export const idempotencyPurge: Layer.Layer<never, never, Idempotency.Idempotency> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const idempotency = yield* Idempotency.Idempotency
    yield* every("Idempotency.purge", purgeInterval, idempotency.purge())
  })
)

/**
 * Deletes the dashboard's ended sessions every `purgeInterval` (a session presented after its end
 * is deleted then; this forgets the ones never presented again).
 */
export const webSessionsPurge = (
  lifetimes: WebSessions.Lifetimes
): Layer.Layer<never, never, WebSessions.WebSessions> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const sessions = yield* WebSessions.WebSessions
      yield* every("WebSessions.purgeExpired", purgeInterval, sessions.purgeExpired(lifetimes))
    })
  )

/**
 * The bank's statement reconciled every `interval` (`Reconciliation.run`): one instance at a time
 * reads a window (a lease in storage); a run that finds transfers no notification brought logs
 * them (the reconciliation itself warns, with their ids) and, on BIND, asks BIND to conciliate
 * them (`internal/bindGaps.ts`).
 */
export const reconciliation = (
  interval: Duration.DurationInput
): Layer.Layer<never, never, Reconciliation.Reconciliation> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const reconciliation = yield* Reconciliation.Reconciliation
      yield* every(
        "Reconciliation.run",
        interval,
        Effect.tap(reconciliation.run(), (report) =>
          report._tag === "Reconciled" &&
          (report.found.length > 0 ||
            report.failed.length > 0 ||
            report.quarantined.length > 0 ||
            report.missing_at_bank.length > 0)
            ? Effect.zipRight(
                Effect.logInfo(
                  `reconciliation ${DateTime.formatIso(report.from)}..${DateTime.formatIso(report.to)}: listed=${report.listed} known=${report.known} found=${report.found.length} failed=${report.failed.length} quarantined=${report.quarantined.length} missing_at_bank=${report.missing_at_bank.length}`
                ),
                conciliateFound(report)
              )
            : Effect.void
        )
      )
    })
  )

/** All the background work of one server instance. */
export const layer = (
  jobInterval: Duration.DurationInput
): Layer.Layer<
  never,
  never,
  Jobs.Jobs | Idempotency.Idempotency | Webhooks.Webhooks | WebhooksConfig.WebhooksConfig
> => Layer.mergeAll(jobs(jobInterval), webhooks, idempotencyPurge)
