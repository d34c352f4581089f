/**
 * Real time, apart from the engine's `Clock`. A host may run the engine on a shifted `Clock` (the
 * reference server's sandbox test clock of a merchant, moved days ahead to watch payments expire);
 * what people, their programs and the bank experience stays on real time: credentials, tokens,
 * authorization and 2FA codes, `Idempotency-Key` retention, rate limits, web forms,
 * `webhook-timestamp` and the checks of transfers at the bank (`OutgoingTransfers`). Those read this
 * service; the payment domain (expiry, schedules, holds, the webhook retry schedule) reads `Clock`.
 *
 * By default it is the `Clock` of the fiber that asks, so a host that does not shift its clock
 * provides nothing, and a test on `TestClock` drives both kinds of time with it. Services read it
 * when they are built.
 */
import { type Clock, Context, DateTime, Effect, Layer } from "effect"

export interface RealTimeShape {
  /** The current real time. */
  readonly now: Effect.Effect<DateTime.Utc>
  /** Runs `effect` with real time as its `Clock`, for code that reads `Clock` itself (a rate limiter). */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The fiber's own `Clock`: real time wherever the engine's clock is. */
export const ambient: RealTimeShape = { now: DateTime.now, run: (effect) => effect }

/** Real time read from `clock`, whatever `Clock` the fiber that asks runs on. */
export const fromClock = (clock: Clock.Clock): RealTimeShape => ({
  now: Effect.sync(() => DateTime.unsafeMake(clock.unsafeCurrentTimeMillis())),
  run: (effect) => Effect.withClock(effect, clock)
})

export class RealTime extends Context.Reference<RealTime>()("@cobro/core/RealTime", {
  defaultValue: (): RealTimeShape => ambient
}) {}

/** Real time from `clock` for everything built on top of this layer. */
export const layer = (clock: Clock.Clock): Layer.Layer<RealTime> => Layer.succeed(RealTime, fromClock(clock))

/** The current real time, from the `RealTime` of the fiber's context. */
export const now: Effect.Effect<DateTime.Utc> = Effect.flatMap(RealTime, (realTime) => realTime.now)
