/**
 * The sandbox's test clocks, one per merchant: how far each merchant's clock runs ahead of real
 * time. A merchant without a row has a clock at real time (offset zero). Offsets only grow (time
 * moves forward, never back), and every change is one atomic step, so that instances sharing the
 * storage agree. The engine reads none of it directly: the reference server's sandbox turns it
 * into `MerchantClocks`.
 */
import { Context, Duration, Effect, HashMap, Layer, Option, Ref } from "effect"
import type { UserId } from "../Ids.js"

/** A merchant's clock that runs ahead of real time. */
export interface MovedClock {
  readonly user_id: UserId
  readonly offset: Duration.Duration
}

/** A merchant's stored clock. */
export interface StoredClock {
  /** How far it runs ahead of real time (zero if never moved). */
  readonly offset: Duration.Duration
  /** Real time of its last move, in epoch milliseconds (none if never moved). */
  readonly movedAt: number | undefined
}

export class TestClockRepository extends Context.Tag("@cobro/core/TestClockRepository")<
  TestClockRepository,
  {
    /** The clock of `user`; offset zero when it was never moved. */
    readonly get: (user: UserId) => Effect.Effect<StoredClock>
    /**
     * Adds `by` (positive, finite) to `user`'s offset in one atomic step, so two advances at once
     * both count, noting `at` (real time, epoch milliseconds) as its last move; the new offset.
     */
    readonly advance: (user: UserId, by: Duration.Duration, at: number) => Effect.Effect<Duration.Duration>
    /**
     * Raises `user`'s offset to `offset` if that is ahead of the stored one, in one atomic step
     * (never lowers it; `at` is noted as its last move only when it rises); the offset stored
     * after it.
     */
    readonly raiseTo: (
      user: UserId,
      offset: Duration.Duration,
      at: number
    ) => Effect.Effect<Duration.Duration>
    /** Every clock with a positive offset (the few merchants that moved theirs). */
    readonly moved: Effect.Effect<ReadonlyArray<MovedClock>>
  }
>() {}

/** Whole milliseconds of a positive finite duration, or a defect (a caller's bug). */
export const positiveMillis = (by: Duration.Duration): Effect.Effect<number> => {
  const ms = Duration.toMillis(by)
  return Number.isFinite(ms) && ms > 0
    ? Effect.succeed(Math.round(ms))
    : Effect.dieMessage(
        `a test clock moves forward by a positive finite duration, got ${Duration.format(by)}`
      )
}

export const makeMemory = Effect.map(
  Ref.make(HashMap.empty<UserId, { readonly offset: number; readonly at: number }>()),
  (clocks) => {
    const update = (user: UserId, next: (current: number) => number, at: number) =>
      Effect.map(
        Ref.modify(clocks, (m) => {
          const current = Option.getOrUndefined(HashMap.get(m, user))
          const offset = next(current?.offset ?? 0)
          if (current !== undefined && offset === current.offset) return [offset, m] as const
          return [offset, HashMap.set(m, user, { offset, at })] as const
        }),
        Duration.millis
      )
    return TestClockRepository.of({
      get: (user) =>
        Effect.map(Ref.get(clocks), (m) => {
          const found = Option.getOrUndefined(HashMap.get(m, user))
          return { offset: Duration.millis(found?.offset ?? 0), movedAt: found?.at }
        }),
      advance: (user, by, at) => Effect.flatMap(positiveMillis(by), (ms) => update(user, (c) => c + ms, at)),
      raiseTo: (user, offset, at) =>
        Effect.flatMap(positiveMillis(offset), (ms) => update(user, (c) => Math.max(c, ms), at)),
      moved: Effect.map(Ref.get(clocks), (m) =>
        Array.from(m)
          .filter(([, c]) => c.offset > 0)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([user_id, c]) => ({ user_id, offset: Duration.millis(c.offset) }))
      )
    })
  }
)

/** The clocks in memory (one process). */
export const layerMemory: Layer.Layer<TestClockRepository> = Layer.effect(TestClockRepository, makeMemory)
