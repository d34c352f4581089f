/**
 * The sandbox's test clock. The engine reads time only from Effect's `Clock`; in sandbox mode the
 * server installs one whose time is real time plus an offset kept in storage
 * (`ClockOffsetRepository`), so every instance on the same database runs on the same clock. Each
 * instance re-reads the offset every second and right after its own advance; the offset only
 * grows, so a lagging instance is at most a second behind, never ahead.
 *
 * Moving the clock does not replay the instants in between: work that became due runs once, at
 * the new time (as after a server that was down for that long).
 *
 * It moves the payment domain only. Credentials, tokens, codes, `Idempotency-Key` retention, rate
 * limits, web forms and `webhook-timestamp` stay on real time: the layer also provides core's
 * `RealTime` as the clock the offset is added to.
 */
import { ClockOffsetRepository, Jobs, RealTime } from "@cobro/core"
import { Webhooks } from "@cobro/webhooks"
import { Clock, Context, DateTime, Duration, Effect, Layer, Schedule } from "effect"

/** A `Clock` at real time plus an offset this process holds; `raise` moves it forward only. */
export interface OffsetClock extends Clock.Clock {
  readonly offsetMillis: () => number
  /** Sets the offset to `millis` if that is ahead of the current one. */
  readonly raise: (millis: number) => void
}

export const makeClock = (base: Clock.Clock = Clock.make()): OffsetClock => {
  let offset = 0
  const millis = () => base.unsafeCurrentTimeMillis() + offset
  const nanos = () => base.unsafeCurrentTimeNanos() + BigInt(offset) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    // Sleeping is real time: intervals and timeouts do not shrink when the clock jumps.
    sleep: (duration) => base.sleep(duration),
    offsetMillis: () => offset,
    raise: (next) => {
      if (Number.isFinite(next) && next > offset) offset = next
    }
  }
}

/** How far one advance may move the clock. */
export const maxAdvance = Duration.days(400)

/** How often an instance re-reads the shared offset. */
export const refreshInterval = Duration.seconds(1)

export interface ClockReading {
  readonly now: DateTime.Utc
  readonly offset: Duration.Duration
}

export class SandboxClock extends Context.Tag("@cobro/server/SandboxClock")<
  SandboxClock,
  {
    /** The engine's time and how far it is ahead of real time. */
    readonly read: Effect.Effect<ClockReading>
    /** Moves the shared clock forward by `by` (positive, at most `maxAdvance`); the new reading. */
    readonly advance: (by: Duration.Duration) => Effect.Effect<ClockReading>
    /** Re-reads the shared offset now. */
    readonly refresh: Effect.Effect<void>
  }
>() {}

/**
 * The test clock over the stored offset: installed as the `Clock` of everything built on top of
 * this layer (the engine, the HTTP handlers, the workers), loaded before anything reads the time,
 * and refreshed every second while the layer lives. Real time is the `Clock` this layer is built
 * on (the system's, or a test's); everything on top gets it as `RealTime`.
 */
export const layer: Layer.Layer<
  SandboxClock | RealTime.RealTime,
  never,
  ClockOffsetRepository.ClockOffsetRepository
> = Layer.scopedContext(
  Effect.gen(function* () {
    const offsets = yield* ClockOffsetRepository.ClockOffsetRepository
    const real = yield* Effect.clock
    const clock = makeClock(real)
    const refresh = Effect.map(offsets.get, (offset) => clock.raise(Duration.toMillis(offset)))
    yield* refresh
    yield* Effect.withClockScoped(clock)
    yield* refresh.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("could not re-read the sandbox clock", cause)),
      Effect.repeat(Schedule.spaced(refreshInterval)),
      Effect.forkScoped
    )
    const read = Effect.sync((): ClockReading => ({
      now: DateTime.unsafeMake(clock.unsafeCurrentTimeMillis()),
      offset: Duration.millis(clock.offsetMillis())
    }))
    const advance = (by: Duration.Duration) =>
      Effect.gen(function* () {
        if (Duration.greaterThan(by, maxAdvance)) {
          return yield* Effect.dieMessage(
            `the sandbox clock moves at most ${Duration.format(maxAdvance)} at once`
          )
        }
        const offset = yield* offsets.advance(by)
        clock.raise(Duration.toMillis(offset))
        yield* Effect.logInfo("sandbox clock advanced").pipe(
          Effect.annotateLogs({ by: Duration.format(by), offset: Duration.format(offset) })
        )
        return yield* read
      }).pipe(Effect.withSpan("SandboxClock.advance"))
    return Context.make(SandboxClock, SandboxClock.of({ read, advance, refresh })).pipe(
      Context.add(RealTime.RealTime, RealTime.fromClock(real))
    )
  })
)

export interface AdvanceReport extends ClockReading {
  readonly jobs: Jobs.RunReport
  readonly webhooks: Webhooks.DeliveryReport
}

/**
 * Advances the shared clock, then runs everything that became due (expiries, payout schedules,
 * split payouts, then the webhook deliveries they and earlier work made due) before returning.
 */
export const advanceAndRunDue = (by: Duration.Duration) =>
  Effect.gen(function* () {
    const sandbox = yield* SandboxClock
    const jobs = yield* Jobs.Jobs
    const webhooks = yield* Webhooks.Webhooks
    yield* sandbox.advance(by)
    const jobsReport = yield* jobs.runDue()
    const webhooksReport = yield* webhooks.deliverDue()
    const reading = yield* sandbox.read
    return { ...reading, jobs: jobsReport, webhooks: webhooksReport } satisfies AdvanceReport
  }).pipe(Effect.withSpan("SandboxClock.advanceAndRunDue"))
