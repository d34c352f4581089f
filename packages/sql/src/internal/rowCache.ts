/**
 * A short cache of rows read on most requests, for reads outside a unit of work: merchants (every
 * creation of a payment and every detailed read of one reads its merchant) and access tokens
 * (every authenticated request reads its token). On Postgres each such statement is a round trip,
 * a noticeable share of such a request's CPU. Entries live `TTL_MILLIS` of real
 * time (a cache's age is not the engine's clock, which a sandbox test clock may move).
 *
 * - A write through this instance forgets the entry and, for `TTL_MILLIS` after it, nothing read
 *   of that key is stored: a read under way when the write began, or one that ran before the
 *   write's unit of work committed, is not kept. This instance sees its own changes once they
 *   are committed (for units of work shorter than `TTL_MILLIS`).
 * - A change made by another instance (another server, the CLI) reaches this one's cached reads
 *   within `TTL_MILLIS` (docs/decisions/0045-spans-and-unit-of-work-connection.md). Reads inside a unit of work never use the cache.
 * - At most `MAX_ENTRIES`: the oldest entry goes first.
 * - Callers that miss the same key while its read is under way share that read: when an entry
 *   expires under load, one statement reads it again, not one for every request in flight. A
 *   write also ends the sharing: a caller after it reads the row itself. The shared read runs in
 *   a fiber of its own, so a caller interrupted while it waits does not stop it for the others.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"

export const TTL_MILLIS = 1_000
export const MAX_ENTRIES = 10_000

export interface RowCache<A> {
  /** The fresh entry of `id`, or `load`'s answer (kept unless undefined or `id` was just written). */
  readonly get: <E, R>(
    id: string,
    load: Effect.Effect<A | undefined, E, R>
  ) => Effect.Effect<A | undefined, E, R>
  /** Forgets `id`'s entry and keeps none for `TTL_MILLIS`. */
  readonly forget: (id: string) => Effect.Effect<void>
}

type Entry<A> =
  { readonly value: A; readonly until: number } | { readonly written: true; readonly until: number }

export const make = <A>(now: () => number = () => performance.now()): RowCache<A> => {
  const entries = new Map<string, Entry<A>>()
  /** The reads under way, by key; each caller that misses the key meanwhile waits for it. */
  const reading = new Map<string, Deferred.Deferred<A | undefined, unknown>>()
  const put = (id: string, entry: Entry<A>) => {
    entries.delete(id)
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!)
    entries.set(id, entry)
  }
  const store = (id: string, value: A | undefined) => {
    const current = entries.get(id)
    const written = current !== undefined && "written" in current && current.until > now()
    if (value !== undefined && !written) put(id, { value, until: now() + TTL_MILLIS })
  }
  return {
    get: <E, R>(id: string, load: Effect.Effect<A | undefined, E, R>) =>
      Effect.suspend(() => {
        const hit = entries.get(id)
        if (hit !== undefined && "value" in hit && hit.until > now()) return Effect.succeed(hit.value)
        const under = reading.get(id) as Deferred.Deferred<A | undefined, E> | undefined
        if (under !== undefined) return Deferred.await(under)
        const read = Deferred.unsafeMake<A | undefined, E>(FiberId.none)
        reading.set(id, read as Deferred.Deferred<A | undefined, unknown>)
        const settle = (exit: Exit.Exit<A | undefined, E>) =>
          Effect.sync(() => {
            // A write since the read began has already taken it off.
            if (reading.get(id) === read) reading.delete(id)
            if (Exit.isSuccess(exit)) store(id, exit.value)
            Deferred.unsafeDone(read, exit)
          })
        // Its outcome reaches the callers through `read`; the fiber itself never fails.
        return Effect.zipRight(
          Effect.forkDaemon(Effect.exit(Effect.onExit(load, settle))),
          Deferred.await(read)
        )
      }),
    forget: (id) =>
      Effect.sync(() => {
        reading.delete(id)
        put(id, { written: true, until: now() + TTL_MILLIS })
      })
  }
}
