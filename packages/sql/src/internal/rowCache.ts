/**
 * A short cache of rows read on most requests, for reads outside a unit of work: merchants (every
 * creation of a payment and every detailed read of one reads its merchant) and access tokens
 * (every authenticated request reads its token). On Postgres each such statement is a round trip,
 * about a tenth of such a request's CPU (bench/results.md). Entries live `TTL_MILLIS` of real
 * time (a cache's age is not the engine's clock, which a sandbox test clock may move).
 *
 * - A write through this instance forgets the entry and, for `TTL_MILLIS` after it, nothing read
 *   of that key is stored: a read under way when the write began, or one that ran before the
 *   write's unit of work committed, is not kept. This instance sees its own changes once they
 *   are committed (for units of work shorter than `TTL_MILLIS`).
 * - A change made by another instance (another server, the CLI) reaches this one's cached reads
 *   within `TTL_MILLIS` (decisions.md). Reads inside a unit of work never use the cache.
 * - At most `MAX_ENTRIES`: the oldest entry goes first.
 */
import { Effect } from "effect"

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
  const put = (id: string, entry: Entry<A>) => {
    entries.delete(id)
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!)
    entries.set(id, entry)
  }
  return {
    get: (id, load) =>
      Effect.suspend(() => {
        const hit = entries.get(id)
        if (hit !== undefined && "value" in hit && hit.until > now()) return Effect.succeed(hit.value)
        return Effect.tap(load, (value) => {
          const current = entries.get(id)
          const written = current !== undefined && "written" in current && current.until > now()
          if (value !== undefined && !written) put(id, { value, until: now() + TTL_MILLIS })
        })
      }),
    forget: (id) => Effect.sync(() => put(id, { written: true, until: now() + TTL_MILLIS }))
  }
}
