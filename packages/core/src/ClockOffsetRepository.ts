/**
 * How far a sandbox's test clock runs ahead of real time: one number kept in storage so that every
 * instance sharing the storage shares the clock. Nothing in the engine reads it: the engine's time
 * is whatever `Clock` the host installs, and the reference server's sandbox installs one that adds
 * this offset to real time. It only grows (the sandbox moves time forward, never back).
 */
import { Context, Duration, Effect, Layer, Ref } from "effect"

export class ClockOffsetRepository extends Context.Tag("@cobro/core/ClockOffsetRepository")<
  ClockOffsetRepository,
  {
    /** The stored offset; zero when time was never advanced. */
    readonly get: Effect.Effect<Duration.Duration>
    /**
     * Adds `by` (a positive, finite duration) to the stored offset in one atomic step, so two
     * instances advancing at once both count; returns the new offset.
     */
    readonly advance: (by: Duration.Duration) => Effect.Effect<Duration.Duration>
  }
>() {}

/** Whole milliseconds of a positive finite duration, or a defect (a caller's bug). */
export const advanceMillis = (by: Duration.Duration): Effect.Effect<number> => {
  const ms = Duration.toMillis(by)
  return Number.isFinite(ms) && ms > 0
    ? Effect.succeed(Math.round(ms))
    : Effect.dieMessage(
        `the sandbox clock moves forward by a positive finite duration, got ${Duration.format(by)}`
      )
}

export const makeMemory = Effect.map(Ref.make(0), (millis) =>
  ClockOffsetRepository.of({
    get: Effect.map(Ref.get(millis), Duration.millis),
    advance: (by) =>
      Effect.flatMap(advanceMillis(by), (ms) =>
        Effect.map(
          Ref.updateAndGet(millis, (current) => current + ms),
          Duration.millis
        )
      )
  })
)

/** The offset in memory (one process). */
export const layerMemory: Layer.Layer<ClockOffsetRepository> = Layer.effect(ClockOffsetRepository, makeMemory)
