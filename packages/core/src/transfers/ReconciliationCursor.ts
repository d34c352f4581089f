/**
 * Where the reconciliation of each collecting account stands: the end of the last window it read
 * of the bank's statement (its cursor), and a lease, so that of several instances sharing the
 * storage one reads a window at a time. Claiming is one atomic step (a conditional upsert in SQL);
 * a lease that runs out (its holder died) can be taken over. It also keeps the statement entries
 * reconciliation quarantined (`quarantine`), so that an operator sees those of earlier runs too.
 */
import { Context, DateTime, Effect, HashMap, Layer, Option, Ref } from "effect"

/** What `claim` answers. */
export type Claim =
  /** The lease is ours; `cursor` is the end of the last window read (none: never run). */
  | { readonly _tag: "Claimed"; readonly cursor: Option.Option<DateTime.Utc> }
  /** Another run holds the lease. */
  | { readonly _tag: "Busy" }

/** A statement entry reconciliation set aside, as stored. */
export interface StoredQuarantine {
  readonly bank_transaction_id: string
  readonly reason: string
  /** The entry as the bank described it (JSON). */
  readonly body: string
  /** When it was first quarantined. */
  readonly quarantined_at: DateTime.Utc
}

/** An entry's key in the quarantine: its id, or its body when the bank gave none. */
export const quarantineKey = (q: Pick<StoredQuarantine, "bank_transaction_id" | "body">): string =>
  q.bank_transaction_id !== "" ? `id:${q.bank_transaction_id}` : `body:${q.body.slice(0, 200)}`

export class ReconciliationCursor extends Context.Tag("@cobro/core/ReconciliationCursor")<
  ReconciliationCursor,
  {
    /**
     * Takes the lease of `account` for `owner` until `until`, when no one holds it or its
     * holder's lease ran out by `now`.
     */
    readonly claim: (
      account: string,
      owner: string,
      now: DateTime.Utc,
      until: DateTime.Utc
    ) => Effect.Effect<Claim>
    /**
     * Frees the lease `owner` holds, moving the cursor to `to` (never back; none leaves it).
     * `false` when `owner` no longer held it (its lease ran out and another run took it).
     */
    readonly release: (
      account: string,
      owner: string,
      to: Option.Option<DateTime.Utc>
    ) => Effect.Effect<boolean>
    /** Keeps quarantined entries of `account`, each once (`quarantineKey`; the first kept). */
    readonly quarantine: (account: string, entries: ReadonlyArray<StoredQuarantine>) => Effect.Effect<void>
    /** The quarantined entries of `account`, oldest first (then by key), at most `limit`. */
    readonly quarantined: (account: string, limit: number) => Effect.Effect<ReadonlyArray<StoredQuarantine>>
  }
>() {}

interface Row {
  readonly cursor: Option.Option<DateTime.Utc>
  readonly lease: Option.Option<{ readonly owner: string; readonly until: DateTime.Utc }>
}

export const makeMemory = Effect.map(
  Effect.all([Ref.make(HashMap.empty<string, Row>()), Ref.make(HashMap.empty<string, StoredQuarantine>())]),
  ([table, quarantine]) =>
    ReconciliationCursor.of({
      quarantine: (account, entries) =>
        Ref.update(quarantine, (rows) =>
          entries.reduce((acc, q) => {
            const key = `${account}\u0000${quarantineKey(q)}`
            return HashMap.has(acc, key) ? acc : HashMap.set(acc, key, q)
          }, rows)
        ),
      quarantined: (account, limit) =>
        Effect.map(Ref.get(quarantine), (rows) =>
          Array.from(rows)
            .filter(([key]) => key.startsWith(`${account}\u0000`))
            .sort(
              ([ka, a], [kb, b]) =>
                DateTime.toEpochMillis(a.quarantined_at) - DateTime.toEpochMillis(b.quarantined_at) ||
                (ka < kb ? -1 : 1)
            )
            .slice(0, limit)
            .map(([, q]) => q)
        ),
      claim: (account, owner, now, until) =>
        Ref.modify(table, (rows): readonly [Claim, HashMap.HashMap<string, Row>] => {
          const row = Option.getOrElse(HashMap.get(rows, account), () => ({
            cursor: Option.none(),
            lease: Option.none()
          }))
          const held = Option.exists(
            row.lease,
            (l) => l.owner !== owner && DateTime.greaterThan(l.until, now)
          )
          if (held) return [{ _tag: "Busy" }, rows]
          return [
            { _tag: "Claimed", cursor: row.cursor },
            HashMap.set(rows, account, { ...row, lease: Option.some({ owner, until }) })
          ]
        }),
      release: (account, owner, to) =>
        Ref.modify(table, (rows): readonly [boolean, HashMap.HashMap<string, Row>] => {
          const row = HashMap.get(rows, account)
          if (Option.isNone(row) || !Option.exists(row.value.lease, (l) => l.owner === owner))
            return [false, rows]
          const cursor = Option.match(to, {
            onNone: () => row.value.cursor,
            onSome: (t) =>
              Option.some(
                Option.match(row.value.cursor, { onNone: () => t, onSome: (c) => DateTime.max(c, t) })
              )
          })
          return [true, HashMap.set(rows, account, { cursor, lease: Option.none() })]
        })
    })
)

/** The cursors in memory (one process). */
export const layerMemory: Layer.Layer<ReconciliationCursor> = Layer.effect(ReconciliationCursor, makeMemory)
