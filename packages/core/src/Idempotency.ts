/**
 * Idempotency keys, with Stripe's semantics: the first operation with a key runs and its outcome
 * is recorded; a retry with the same key and the same operation gets that outcome again
 * (`replayed: true`) without running anything; the same key with another operation is refused
 * (`RequestMismatch`), and a retry while the first is still running is refused (`Conflict`). A key
 * lives 24 hours of real time (`RealTime`).
 *
 * The outcome recorded is the operation's result, encoded by the result's schema (JSON text):
 * a domain outcome, with no transport in it. `@cobro/http` gives the route's reply schema and
 * turns the outcome into an HTTP answer (`internal/idempotent.ts`). When the operation fails or
 * dies before it committed anything, nothing is recorded and a retry runs again.
 *
 * Crashes (docs/decisions/0056-idempotency-across-crash.md):
 * - A request holds its key by a short lease (`EngineConfig.idempotencyLease`), renewed by a
 *   heartbeat while it runs: a live request keeps its key however long it takes, one whose
 *   process died frees it within the lease.
 * - The outcome is recorded in the operation's own unit of work: an operation run through
 *   `answering` calls `committing(value)` inside the unit of work that commits it, and the key is
 *   completed there, with the answer `value` gives. A key whose operation committed therefore
 *   always has an answer, after any crash. What the operation does after that commit (a bank
 *   call) may change the answer: `run` records the final one once the operation returns.
 *
 * Call `run` outside any unit of work, so the key is visible to concurrent operations while the
 * effect runs.
 */
import { DateTime, Duration, Effect, Exit, Fiber, FiberRef, Option, Schema } from "effect"
import { globalValue } from "effect/GlobalValue"
import { Crypto, toHex } from "./auth/Crypto.js"
import { EngineConfig } from "./EngineConfig.js"
import { Conflict, InvalidInput, RequestMismatch } from "./Errors.js"
import { IdempotencyRecord, IdempotencyRepository } from "./IdempotencyRepository.js"
import { RealTime } from "./RealTime.js"
import * as Spans from "./Spans.js"
import type { Transactor } from "./Transactor.js"

/** What `run` answers: the operation's outcome, this time's or the recorded one. */
export interface Outcome {
  /** JSON text of the operation's result encoded by its schema, byte for byte as recorded. */
  readonly result: string
  /** `true` when this is the recorded outcome of an earlier operation with the same key. */
  readonly replayed: boolean
}

/** How long a key is remembered; an older record is ignored (and purged by `purge`). */
export const retention: Duration.Duration = Duration.hours(24)

const KEY = /^[\x20-\x7e]{1,255}$/

/** Keys are 1 to 255 printable ASCII characters (space included). */
export const isValidKey = (key: string): boolean => KEY.test(key)

/**
 * JSON with object keys sorted at every level, so that two bodies that differ only in key order
 * (or in whitespace) have one fingerprint.
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    const fields = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
    return `{${fields.join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const reused = () =>
  new RequestMismatch({
    key: "idempotency.key.reused",
    message: "this Idempotency-Key was already used with a different request"
  })

const inProgress = () =>
  new Conflict({
    key: "idempotency.request.in_progress",
    message: "a request with this Idempotency-Key is still in progress; retry later"
  })

/** How many times a claim re-reads a key that another request changed under it. */
const MAX_CLAIM_ATTEMPTS = 3

/** How many renewals the heartbeat makes within one lease. */
const RENEWALS_PER_LEASE = 4

type Claim =
  | { readonly _tag: "Owned"; readonly record: IdempotencyRecord }
  | { readonly _tag: "Replay"; readonly outcome: Outcome }

// ---------------------------------------------------------------------------------------------
// The answer recorded at commit: what `run` and `answering` leave in the fiber for `committing`

/** Inside `run`: completes the key with an answer (its value, encoded), in the caller's unit of work. */
type RecordAnswer = (answer: unknown) => Effect.Effect<void, Conflict>

const currentClaim = globalValue(Symbol.for("@cobro/core/Idempotency/claim"), () =>
  FiberRef.unsafeMake<Option.Option<RecordAnswer>>(Option.none())
)

/** Inside `answering`: the answer the caller makes of the operation's value. */
const currentAnswer = globalValue(Symbol.for("@cobro/core/Idempotency/answer"), () =>
  FiberRef.unsafeMake<Option.Option<(value: unknown) => unknown>>(Option.none())
)

/**
 * Runs the operation `effect` and answers `answer` of its value, telling the operation (through
 * `committing`) how its value is answered: inside `run`, the unit of work that commits the
 * operation then records that answer with it. Outside `run` it is `Effect.map`.
 */
export const answering = <D, A, E, R>(effect: Effect.Effect<D, E, R>, answer: (value: D) => A) =>
  Effect.map(
    Effect.locally(effect, currentAnswer, Option.some(answer as (value: unknown) => unknown)),
    answer
  )

/**
 * Whether a call to `committing` records an answer: the fiber runs an operation under a key
 * (`run`) through `answering`. An operation whose commit would otherwise be shared with other
 * requests (group commit) commits alone in its own unit of work then.
 */
export const answersAtCommit: Effect.Effect<boolean> = Effect.zipWith(
  FiberRef.get(currentClaim),
  FiberRef.get(currentAnswer),
  (claim, answer) => Option.isSome(claim) && Option.isSome(answer)
)

/**
 * Called by an operation inside the unit of work that commits it, with the value the operation
 * answers (the same type it returns): when it runs under a key (`run`, through `answering`),
 * completes the key with that answer in this unit of work, so both commit together or neither
 * does. Otherwise nothing. Fails with `Conflict` `idempotency.request.in_progress` when the key
 * is no longer this request's (its lease lapsed and a retry took it over): the unit of work then
 * rolls back and the operation happens once, in the request that holds the key.
 */
export const committing = (value: unknown): Effect.Effect<void, Conflict> =>
  Effect.flatMap(FiberRef.get(currentClaim), (claim) =>
    Option.isNone(claim)
      ? Effect.void
      : Effect.flatMap(FiberRef.get(currentAnswer), (answer) =>
          Option.isNone(answer) ? Effect.void : claim.value(answer.value(value))
        )
  )

/**
 * `write`, the write that commits an operation, and `committing` of its value in one unit of work
 * when the fiber answers at commit (`answersAtCommit`); `write` as it is otherwise.
 */
export const commitsAnswer = <A, E, R>(
  transactor: Transactor["Type"],
  write: Effect.Effect<A, E, R>
): Effect.Effect<A, E | Conflict, R> =>
  Effect.flatMap(answersAtCommit, (atCommit) =>
    atCommit ? transactor.withTransaction(Effect.tap(write, committing)) : write
  )

export class Idempotency extends Effect.Service<Idempotency>()("@cobro/core/Idempotency", {
  effect: Effect.gen(function* () {
    const repo = yield* IdempotencyRepository
    const config = yield* EngineConfig
    const crypto = yield* Crypto
    // Clients retry on real time: a key's retention and lease do not follow a shifted engine clock.
    const realTime = yield* RealTime
    const lease = config.idempotencyLease
    const renewEvery = Duration.divide(lease, RENEWALS_PER_LEASE).pipe(Option.getOrElse(() => lease))

    const isExpired = (record: IdempotencyRecord, now: DateTime.Utc) =>
      DateTime.lessThan(record.created_at, DateTime.subtractDuration(now, retention))

    /** Makes this request the owner of (scope, key), or says why it may not run. */
    const claim = (
      scope: string,
      key: string,
      fingerprint: string,
      attempt: number
    ): Effect.Effect<Claim, Conflict | RequestMismatch> =>
      Effect.gen(function* () {
        const now = yield* realTime.now
        const fresh = new IdempotencyRecord({
          scope,
          key,
          fingerprint,
          state: "in_flight",
          locked_until: DateTime.addDuration(now, lease),
          result: null,
          created_at: now
        })
        const found = yield* repo.begin(fresh)
        if (Option.isNone(found)) return { _tag: "Owned", record: fresh } as const
        const existing = found.value
        const takeOver = Effect.flatMap(
          repo.takeOver(existing, fresh),
          (taken): Effect.Effect<Claim, Conflict | RequestMismatch> =>
            taken
              ? Effect.succeed({ _tag: "Owned", record: fresh })
              : attempt + 1 < MAX_CLAIM_ATTEMPTS
                ? claim(scope, key, fingerprint, attempt + 1)
                : Effect.fail(inProgress())
        )
        // A record past its retention is as good as absent, whatever request it was.
        if (isExpired(existing, now)) return yield* takeOver
        if (existing.fingerprint !== fingerprint) return yield* Effect.fail(reused())
        if (existing.state === "completed") {
          if (existing.result === null) {
            return yield* Effect.dieMessage(
              `idempotency record ${scope}/${key} is completed without a result`
            )
          }
          return { _tag: "Replay", outcome: { result: existing.result, replayed: true } } as const
        }
        if (DateTime.greaterThan(existing.locked_until, now)) return yield* Effect.fail(inProgress())
        // The request that held the key stopped renewing its lease (its process died): this
        // retry takes its place.
        return yield* takeOver
      })

    /**
     * Renews the lease of `mine` every quarter lease while the request runs, on real time; stops
     * once the key is no longer in flight as this request's (completed, or taken over).
     */
    const heartbeat = (mine: IdempotencyRecord) =>
      realTime.run(
        Effect.sleep(renewEvery).pipe(
          Effect.zipRight(realTime.now),
          Effect.flatMap((now) => repo.renew(mine, DateTime.addDuration(now, lease))),
          Effect.repeat({ while: (renewed) => renewed })
        )
      )

    /**
     * Runs `effect` at most once per (scope, key) within 24 hours and returns its result encoded
     * by `schema` (JSON text), or replays the result recorded by the first request. `scope` is
     * the caller's identity (a user id, `public:<user_id>`), `fingerprint` identifies the
     * request (see `fingerprint`). A result its schema cannot encode is a defect. An effect made
     * with `answering` records its answer in the unit of work that commits it (`committing`).
     * Fails with `InvalidInput` (field `Idempotency-Key`) for a malformed key, `RequestMismatch`
     * `idempotency.key.reused` when the key was used with another fingerprint, and `Conflict`
     * `idempotency.request.in_progress` while the first request still holds the key.
     */
    const run = <A, I, E, R>(
      scope: string,
      key: string,
      fingerprint: string,
      schema: Schema.Schema<A, I>,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Outcome, E | InvalidInput | Conflict | RequestMismatch, R> =>
      Effect.gen(function* () {
        if (!isValidKey(key)) {
          return yield* InvalidInput.of("Idempotency-Key", "must be 1 to 255 printable ASCII characters")
        }
        const claimed = yield* claim(scope, key, fingerprint, 0)
        if (claimed._tag === "Replay") return claimed.outcome
        const mine = claimed.record
        const encode = (value: A) =>
          Effect.map(Effect.orDie(Schema.encode(schema)(value)), (json) => JSON.stringify(json))
        const recordAnswer: RecordAnswer = (answer) =>
          encode(answer as A).pipe(
            Effect.flatMap((result) => repo.complete(mine, result)),
            Effect.flatMap((stored) => (stored ? Effect.void : Effect.fail(inProgress())))
          )
        // Once the key is ours, it is completed or released whatever happens to the effect,
        // interruption included (a crash leaves it to lapse after its lease).
        return yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            const renewing = yield* Effect.fork(Effect.interruptible(heartbeat(mine)))
            const exit = yield* Effect.exit(
              restore(Effect.locally(Effect.flatMap(effect, encode), currentClaim, Option.some(recordAnswer)))
            )
            yield* Fiber.interrupt(renewing)
            if (Exit.isFailure(exit)) {
              // Kept when the effect committed its answer before it failed (`committing`).
              yield* repo.release(mine)
              return yield* Effect.failCause(exit.cause)
            }
            const result = exit.value
            // The answer recorded at commit, if any, is replaced by the final one.
            const stored = yield* repo.complete(mine, result)
            if (!stored) {
              yield* Effect.logWarning(
                "idempotency: the lease lapsed while the request ran; its result is not stored"
              ).pipe(Effect.annotateLogs({ scope, key }))
            }
            return { result, replayed: false }
          })
        )
      }).pipe(Spans.span("Idempotency.run", { attributes: { scope } }))

    /**
     * The fingerprint of a request: a SHA-256 over the method, the path and the canonical JSON
     * of the body, so a retry matches whatever the key order or whitespace of its body.
     */
    const fingerprint = Spans.fn("Idempotency.fingerprint")(function* (
      method: string,
      path: string,
      body: unknown
    ) {
      const digest = yield* crypto.sha256(`${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`)
      return toHex(digest)
    })

    /** Deletes every key older than the retention; returns how many. The server schedules it. */
    const purge = Spans.fn("Idempotency.purge")(function* () {
      const now = yield* realTime.now
      return yield* repo.purgeBefore(DateTime.subtractDuration(now, retention))
    })

    return { run, fingerprint, purge }
  })
}) {}
