/**
 * Storage of `Idempotency-Key`s: one record per (scope, key), holding the request's fingerprint
 * and, once the first request finished, its outcome to replay (the result, encoded). The `Idempotency` service holds
 * the rules; this port only offers row operations that stay race-free across instances: an
 * insert-if-absent, and conditional writes fenced on what the caller last saw (the record's state,
 * lock and creation time), so two requests can never both own one key.
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
   * Until when the request that owns an `in_flight` record is presumed alive; past it, a retry
   * may take the key over (the first request crashed). Also the owner's fencing token.
   */
  locked_until: Timestamp,
  /** The outcome to replay, JSON text of the encoded result; set exactly when `completed`. */
  result: Schema.NullOr(Schema.String),
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
     * Stores the result (JSON text) of the in-flight `record` and marks it completed; `false` (nothing
     * written) when the record is no longer this in-flight record (its lock lapsed and another
     * request took it over, or it was purged).
     */
    readonly complete: (record: IdempotencyRecord, result: string) => Effect.Effect<boolean>
    /** Deletes the in-flight `record` so a retry can run; `false` when it is no longer this record. */
    readonly release: (record: IdempotencyRecord) => Effect.Effect<boolean>
    /** Deletes every record created before `time`; returns how many. */
    readonly purgeBefore: (time: DateTime.Utc) => Effect.Effect<number>
  }
>() {}

/** Whether the stored record is still the one a caller read (the fence of conditional writes). */
export const sameVersion = (a: IdempotencyRecord, b: IdempotencyRecord): boolean =>
  a.state === b.state &&
  DateTime.toEpochMillis(a.locked_until) === DateTime.toEpochMillis(b.locked_until) &&
  DateTime.toEpochMillis(a.created_at) === DateTime.toEpochMillis(b.created_at)

const idOf = (record: IdempotencyRecord) => Data.tuple(record.scope, record.key)
type RecordId = ReturnType<typeof idOf>

export const makeMemory = Effect.gen(function* () {
  const table = yield* makeRef(HashMap.empty<RecordId, IdempotencyRecord>())

  /** Applies `f` to the stored record if it is still `expected`; whether it did. */
  const ifStill = (
    expected: IdempotencyRecord,
    f: (t: HashMap.HashMap<RecordId, IdempotencyRecord>) => HashMap.HashMap<RecordId, IdempotencyRecord>
  ) =>
    table.modify((t) => {
      const current = HashMap.get(t, idOf(expected))
      return Option.isSome(current) && sameVersion(current.value, expected)
        ? ([true, f(t)] as const)
        : ([false, t] as const)
    })

  return IdempotencyRepository.of({
    begin: (record) =>
      table.modify((t) => {
        const existing = HashMap.get(t, idOf(record))
        return Option.isSome(existing)
          ? ([existing, t] as const)
          : ([Option.none(), HashMap.set(t, idOf(record), record)] as const)
      }),
    find: (scope, key) => Effect.map(table.get, HashMap.get(Data.tuple(scope, key))),
    takeOver: (previous, next) => ifStill(previous, HashMap.set(idOf(previous), next)),
    complete: (record, result) =>
      record.state === "in_flight"
        ? ifStill(
            record,
            HashMap.set(idOf(record), new IdempotencyRecord({ ...record, state: "completed", result }))
          )
        : Effect.succeed(false),
    release: (record) =>
      record.state === "in_flight" ? ifStill(record, HashMap.remove(idOf(record))) : Effect.succeed(false),
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
