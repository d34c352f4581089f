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

export class TestClockRepository extends Context.Tag("@cobro/core/TestClockRepository")<
  TestClockRepository,
  {
    /** The offset of `user`'s clock; zero when it was never moved. */
    readonly get: (user: UserId) => Effect.Effect<Duration.Duration>
    /**
     * Adds `by` (positive, finite) to `user`'s offset in one atomic step, so two advances at once
     * both count; the new offset.
     */
    readonly advance: (user: UserId, by: Duration.Duration) => Effect.Effect<Duration.Duration>
    /**
     * Raises `user`'s offset to `offset` if that is ahead of the stored one, in one atomic step
     * (never lowers it); the offset stored after it.
     */
    readonly raiseTo: (user: UserId, offset: Duration.Duration) => Effect.Effect<Duration.Duration>
    /** Every clock with a positive offset (the few merchants that moved theirs). */
    readonly moved: Effect.Effect<ReadonlyArray<MovedClock>>
  }
>() {}

/** Whole milliseconds of a positive finite duration, or a defect (a caller's bug). */
export const positiveMillis = (by: Duration.Duration): Effect.Effect<number> => {
  const ms = Duration.toMillis(by)
  return Number.isFinite(ms) && ms > 0
    ? Effect.succeed(Math.round(ms))
    : Effect.dieMessage(`a test clock moves forward by a positive finite duration, got ${Duration.format(by)}`)
}

export const makeMemory = Effect.map(Ref.make(HashMap.empty<UserId, number>()), (offsets) => {
  const current = (user: UserId) => Effect.map(Ref.get(offsets), (m) => Option.getOrElse(HashMap.get(m, user), () => 0))
  const update = (user: UserId, f: (current: number) => number) =>
    Effect.map(
      Ref.modify(offsets, (m) => {
        const next = f(Option.getOrElse(HashMap.get(m, user), () => 0))
        return [next, HashMap.set(m, user, next)] as const
      }),
      Duration.millis
    )
  return TestClockRepository.of({
    get: (user) => Effect.map(current(user), Duration.millis),
    advance: (user, by) => Effect.flatMap(positiveMillis(by), (ms) => update(user, (c) => c + ms)),
    raiseTo: (user, offset) =>
      Effect.flatMap(positiveMillis(offset), (ms) => update(user, (c) => Math.max(c, ms))),
    moved: Effect.map(Ref.get(offsets), (m) =>
      Array.from(m)
        .filter(([, ms]) => ms > 0)
        .map(([user_id, ms]) => ({ user_id, offset: Duration.millis(ms) }))
    )
  })
})

/** The clocks in memory (one process). */
export const layerMemory: Layer.Layer<TestClockRepository> = Layer.effect(TestClockRepository, makeMemory)
