/**
 * The one loop over due work (payments to close, schedules to run, splits to execute, transfers
 * to check): read a batch of what is due, hand each item to `each` once, read again, until a
 * read finds nothing this drain has not looked at. An item `each` leaves due (it failed, or
 * another run holds it) is not looked at again in the same drain, so a drain always ends; the
 * next run finds it.
 */
import { Effect, Metric } from "effect"

export interface DrainDue<A, E, R, E2, R2> {
  /** How many new items one read takes (`EngineConfig.jobBatchSize`). */
  readonly batchSize: number
  /** Reads up to `limit` due items; the ones already looked at are among them when still due. */
  readonly find: (limit: number) => Effect.Effect<ReadonlyArray<A>, E, R>
  /** An item's identity. */
  readonly key: (item: A) => string
  /** Counts the items each read found (how much was due). */
  readonly counted?: Metric.Metric.Counter<number>
  readonly each: (item: A) => Effect.Effect<unknown, E2, R2>
}

export const drainDue = <A, E, R, E2, R2>(
  drain: DrainDue<A, E, R, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.gen(function* () {
    const seen = new Set<string>()
    while (true) {
      const due = (yield* drain.find(drain.batchSize + seen.size)).filter(
        (item) => !seen.has(drain.key(item))
      )
      if (due.length === 0) return
      if (drain.counted !== undefined) yield* Metric.incrementBy(drain.counted, due.length)
      for (const item of due) {
        seen.add(drain.key(item))
        yield* drain.each(item)
      }
    }
  })
