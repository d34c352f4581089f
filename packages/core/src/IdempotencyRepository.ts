/**
 * Storage of `Idempotency-Key`s: one record per (scope, key), holding the request's fingerprint
 * and, once the first request finished, its outcome to replay (the result, encoded). The `Idempotency` service holds
 * the rules; this port only offers row operations that stay race-free across instances: an
 * insert-if-absent, and conditional writes fenced on what the caller last saw, so two requests can
 * never both own one key. A takeover is fenced on the whole version it judged lapsed (state,
 * lease, creation time); the owner's own writes (renew, complete, release) on its claim, which the
 * creation time names (a takeover is always later than the lease it ends, so no two claims of a
 * key share one).
 */
import { Context, Data, DateTime, Effect, HashMap, Layer, Option, Schema } from "effect"
import { makeRef, type MemoryDb } from "./internal/memoryDb.js"
import { Timestamp } from "./Wire.js"
import { Class } from "./internal/schemaClass.js"

export const IdempotencyState = Schema.Literal("in_flight", "completed")
export type IdempotencyState = typeof IdempotencyState.Type

export class IdempotencyRecord extends Class<IdempotencyRecord>("IdempotencyRecord")({
  /** Who used the key (a user id, `public:<user_id>`…): keys of different callers never meet. */
  scope: Schema.String,
  key: Schema.String,
  /** What the request was (method, path, body hash), computed by the caller. */
  fingerprint: Schema.String,
  state: IdempotencyState,
  /**
   * Until when the request that owns an `in_flight` record is presumed alive (its lease, renewed
   * while it runs); past it, a retry may take the key over (the first request's process died).
   */
  locked_until: Timestamp,
  /** The outcome to replay, JSON text of the encoded result; set exactly when `completed`. */
  result: Schema.NullOr(Schema.String),
  /** When the request that owns the record claimed it: also the claim's identity. */
  created_at: Timestamp
}) {}

export class IdempotencyRepository extends Context.Tag("@cobro/core/IdempotencyRepository")<
  IdempotencyRepository,
  {
    /**
     * Inserts `record` unless (scope, key) is taken: none when it was inserted, else the record
     * already stored (which `record` did not replace).
     */
    readonly begin: (record: IdempotencyRecord) => Effect.Effect<Option.Option<IdempotencyRecord>>
    readonly find: (scope: string, key: string) => Effect.Effect<Option.Option<IdempotencyRecord>>
    /**
     * Replaces `previous` with `next` (same scope and key) if the stored record is still
     * `previous` (same state, lock and creation time); `false` when another request changed or
     * removed it first. Used to take over a lapsed lock or an expired record.
     */
    readonly takeOver: (previous: IdempotencyRecord, next: IdempotencyRecord) => Effect.Effect<boolean>
    /**
     * Moves the lease of the in-flight claim `record` to `lockedUntil`; `false` (nothing written)
     * when the key is no longer this claim in flight (completed, taken over or purged).
     */
    readonly renew: (record: IdempotencyRecord, lockedUntil: DateTime.Utc) => Effect.Effect<boolean>
    /**
     * Stores the result (JSON text) of the claim `record` and marks it completed: in flight, or
     * already completed by this same claim (its result is replaced). `false` (nothing written)
     * when the key is no longer this claim's (its lease lapsed and another request took it over,
     * or it was purged). Runs in the caller's unit of work when there is one.
     */
    readonly complete: (record: IdempotencyRecord, result: string) => Effect.Effect<boolean>
    /**
     * Deletes the in-flight claim `record` so a retry can run; `false` when the key is no longer
     * this claim in flight (a completed record is kept).
     */
    readonly release: (record: IdempotencyRecord) => Effect.Effect<boolean>
    /** Deletes every record created before `time`; returns how many. */
    readonly purgeBefore: (time: DateTime.Utc) => Effect.Effect<number>
  }
>() {}

/** Whether the stored record is still the one a caller read (the fence of a takeover). */
export const sameVersion = (a: IdempotencyRecord, b: IdempotencyRecord): boolean =>
  a.state === b.state &&
  DateTime.toEpochMillis(a.locked_until) === DateTime.toEpochMillis(b.locked_until) &&
  sameClaim(a, b)

/** Whether two records are of one claim (the fence of the owner's writes). */
export const sameClaim = (a: IdempotencyRecord, b: IdempotencyRecord): boolean =>
  DateTime.toEpochMillis(a.created_at) === DateTime.toEpochMillis(b.created_at)

const idOf = (record: IdempotencyRecord) => Data.tuple(record.scope, record.key)
type RecordId = ReturnType<typeof idOf>

export const makeMemory = Effect.gen(function* () {
  const table = yield* makeRef(HashMap.empty<RecordId, IdempotencyRecord>())

  /** Applies `f` to the stored record of `expected`'s key if `still` holds of it; whether it did. */
  const ifStill = (
    expected: IdempotencyRecord,
    still: (current: IdempotencyRecord) => boolean,
    f: (
      t: HashMap.HashMap<RecordId, IdempotencyRecord>,
      current: IdempotencyRecord
    ) => HashMap.HashMap<RecordId, IdempotencyRecord>
  ) =>
    table.modify((t) => {
      const current = HashMap.get(t, idOf(expected))
      return Option.isSome(current) && still(current.value)
        ? ([true, f(t, current.value)] as const)
        : ([false, t] as const)
    })
  const inFlightClaim = (record: IdempotencyRecord) => (current: IdempotencyRecord) =>
    current.state === "in_flight" && sameClaim(current, record)

  return IdempotencyRepository.of({
    begin: (record) =>
      table.modify((t) => {
        const existing = HashMap.get(t, idOf(record))
        return Option.isSome(existing)
          ? ([existing, t] as const)
          : ([Option.none(), HashMap.set(t, idOf(record), record)] as const)
      }),
    find: (scope, key) => Effect.map(table.get, HashMap.get(Data.tuple(scope, key))),
    takeOver: (previous, next) =>
      ifStill(
        previous,
        (current) => sameVersion(current, previous),
        (t) => HashMap.set(t, idOf(previous), next)
      ),
    renew: (record, locked_until) =>
      ifStill(record, inFlightClaim(record), (t, current) =>
        HashMap.set(t, idOf(record), new IdempotencyRecord({ ...current, locked_until }))
      ),
    complete: (record, result) =>
      ifStill(
        record,
        (current) => sameClaim(current, record),
        (t, current) =>
          HashMap.set(t, idOf(record), new IdempotencyRecord({ ...current, state: "completed", result }))
      ),
    release: (record) => ifStill(record, inFlightClaim(record), (t) => HashMap.remove(t, idOf(record))),
    purgeBefore: (time) =>
      table.modify((t) => {
        const kept = HashMap.filter(t, (r) => !DateTime.lessThan(r.created_at, time))
        return [HashMap.size(t) - HashMap.size(kept), kept] as const
      })
  })
})

export const layerMemory: Layer.Layer<IdempotencyRepository, never, MemoryDb> = Layer.effect(
  IdempotencyRepository,
  makeMemory
)
