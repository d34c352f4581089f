/**
 * The sandbox's test clocks over `TestClockRepository`: a merchant whose clock was moved runs on
 * real time plus its own offset, every other merchant on real time. It provides core's
 * `MerchantClocks` (what the engine asks), and `TestClocks` (what the routes call) on top of
 * `Jobs`. A host whose real time is not the fiber's own provides `RealTime` beside it (the
 * reference server does: `RealTime.layer` of the clock the offsets are added to).
 *
 * Each instance keeps the moved clocks' offsets in memory, re-read every second and raised right
 * after its own advances; offsets only grow, so a lagging instance is at most a second behind,
 * never ahead. Moving a clock does not replay the instants in between: work that became due runs
 * once, at the new time (as after a host that was down for that long).
 */
import { Clock, Context, DateTime, Duration, Effect, Either, Layer, Schedule } from "effect"
import { type Errors, type Ids, Jobs, MerchantClocks, Spans } from "@cobro/core"
import { TestClockRepository } from "@cobro/core/ports"
import * as TestClocks from "./TestClocks.js"

/** How often an instance re-reads the stored offsets. */
export const refreshInterval = Duration.seconds(1)

/** A `Clock` at `base` time plus `offset()`, read at each call (it only grows). */
export const offsetClock = (base: Clock.Clock, offset: () => number): Clock.Clock => {
  const millis = () => base.unsafeCurrentTimeMillis() + offset()
  const nanos = () => base.unsafeCurrentTimeNanos() + BigInt(offset()) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    // Sleeping is real time: intervals and timeouts do not shrink when a clock jumps.
    sleep: (duration) => base.sleep(duration)
  }
}

/** The offsets this instance knows, and the real time they are added to. */
export interface ClockCache {
  /** Milliseconds `user`'s clock runs ahead of real time (zero if never moved). */
  readonly offsetOf: (user: Ids.UserId) => number
  /** Sets `user`'s offset to `millis` if that is ahead of the known one. */
  readonly raise: (user: Ids.UserId, millis: number) => void
  readonly real: Clock.Clock
}

export class SandboxClocks extends Context.Tag("@cobro/bank-sandbox/SandboxClocks")<
  SandboxClocks,
  ClockCache
>() {}

/** A cache over `real`, and the `MerchantClocks` it answers. */
export const makeCache = (
  real: Clock.Clock
): { cache: ClockCache; clocks: MerchantClocks.MerchantClocksShape } => {
  const offsets = new Map<Ids.UserId, number>()
  const clocks = new Map<Ids.UserId, Clock.Clock>()
  const offsetOf = (user: Ids.UserId) => offsets.get(user) ?? 0
  const cache: ClockCache = {
    offsetOf,
    raise: (user, millis) => {
      if (Number.isFinite(millis) && millis > offsetOf(user)) offsets.set(user, millis)
    },
    real
  }
  const clockOf = (user: Ids.UserId) => {
    if (offsetOf(user) <= 0) return undefined
    let clock = clocks.get(user)
    if (clock === undefined) {
      clock = offsetClock(real, () => offsetOf(user))
      clocks.set(user, clock)
    }
    return clock
  }
  return {
    cache,
    clocks: {
      clockOf,
      moved: Effect.sync(() => [...offsets.keys()].filter((user) => offsetOf(user) > 0).sort())
    }
  }
}

/**
 * The merchants' clocks over the stored offsets, as `MerchantClocks` for everything built on top
 * of this layer (the engine, the HTTP handlers, the workers), loaded before anything reads the
 * time. With `refreshEvery`, the offsets other instances stored are re-read at that interval
 * while the layer lives (`layer`: every `refreshInterval`); without it, this instance knows only
 * the moves it makes, which suits one instance alone (and a test on `TestClock`, where a loop on
 * the clock would run once per interval of every `TestClock.adjust`). Real time is the `Clock`
 * this layer is built on (the system's, or a test's).
 */
export const layerWith = (options: {
  readonly refreshEvery: Duration.DurationInput | undefined
}): Layer.Layer<
  SandboxClocks | MerchantClocks.MerchantClocks,
  never,
  TestClockRepository.TestClockRepository
> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const repo = yield* TestClockRepository.TestClockRepository
      const real = yield* Effect.clock
      const { cache, clocks } = makeCache(real)
      const refresh = Effect.map(repo.moved, (moved) => {
        for (const { user_id, offset } of moved) cache.raise(user_id, Duration.toMillis(offset))
      })
      yield* refresh
      if (options.refreshEvery !== undefined) {
        yield* refresh.pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("could not re-read the sandbox test clocks", cause)
          ),
          Effect.repeat(Schedule.spaced(options.refreshEvery)),
          Effect.forkScoped
        )
      }
      return Context.make(SandboxClocks, cache).pipe(Context.add(MerchantClocks.MerchantClocks, clocks))
    })
  )

/** The merchants' clocks, re-read every `refreshInterval` (several instances on one database). */
export const layer: Layer.Layer<
  SandboxClocks | MerchantClocks.MerchantClocks,
  never,
  TestClockRepository.TestClockRepository
> = layerWith({
  refreshEvery: refreshInterval
})

/**
 * How an advance delivers the webhooks its merchant's due work made: the host's webhook service
 * (`Webhooks.deliverDueOf` in the reference server). Core delivers no webhooks; without a host's
 * say an advance attempts none (they go out with the host's own deliveries) and reports zero.
 */
export class DueDeliveries extends Context.Reference<DueDeliveries>()("@cobro/bank-sandbox/DueDeliveries", {
  defaultValue: (): {
    readonly deliverDueOf: (user: Ids.UserId) => Effect.Effect<TestClocks.DeliveryCounts>
  } => ({
    deliverDueOf: () => Effect.succeed({ attempted: 0, delivered: 0, retrying: 0, dead: 0, errors: 0 })
  })
}) {}

const readingOf = (cache: ClockCache, user: Ids.UserId): TestClocks.ClockReading => {
  const offset = cache.offsetOf(user)
  return {
    now: DateTime.unsafeMake(cache.real.unsafeCurrentTimeMillis() + offset),
    offset: Duration.millis(offset)
  }
}

/**
 * The merchants' `TestClocks`: reading a clock, and advancing it then running its merchant's work
 * that became due (`Jobs.runDueOf`, then `DueDeliveries`) before answering. Concurrent advances of
 * one clock are safe: the stored offset changes in one atomic step, and each piece of due work is
 * claimed under a lock or a lease, so it runs once whichever advance finds it.
 */
export const testClocks: Layer.Layer<
  TestClocks.TestClocks,
  never,
  SandboxClocks | TestClockRepository.TestClockRepository | Jobs.Jobs
> = Layer.effect(
  TestClocks.TestClocks,
  Effect.gen(function* () {
    const cache = yield* SandboxClocks
    const repo = yield* TestClockRepository.TestClockRepository
    const jobs = yield* Jobs.Jobs
    const deliveries = yield* DueDeliveries

    /** The stored clock of `user`, its offset known to this instance from now on. */
    const load = (user: Ids.UserId) =>
      Effect.tap(repo.get(user), (stored) => cache.raise(user, Duration.toMillis(stored.offset)))

    const read = (user: Ids.UserId) => Effect.map(load(user), () => readingOf(cache, user))

    const advance = (
      user: Ids.UserId,
      request: TestClocks.AdvanceRequest
    ): Effect.Effect<TestClocks.AdvanceReport, Errors.InvalidInput> =>
      Effect.gen(function* () {
        const stored = yield* load(user)
        const realMillis = cache.real.unsafeCurrentTimeMillis()
        const move = TestClocks.plan(request, {
          realMillis,
          offsetMillis: cache.offsetOf(user),
          setMillis:
            stored.movedAt === undefined ? realMillis : stored.movedAt + Duration.toMillis(stored.offset)
        })
        if (Either.isLeft(move)) return yield* move.left
        const offset =
          move.right._tag === "Add"
            ? yield* repo.advance(user, Duration.millis(move.right.millis), realMillis)
            : move.right._tag === "RaiseTo"
              ? yield* repo.raiseTo(user, Duration.millis(move.right.millis), realMillis)
              : Duration.millis(cache.offsetOf(user))
        cache.raise(user, Duration.toMillis(offset))
        yield* Effect.logInfo("sandbox test clock advanced").pipe(
          Effect.annotateLogs({ user_id: user, offset: Duration.format(offset) })
        )
        const jobsReport = yield* jobs.runDueOf(user)
        const webhooksReport = yield* deliveries.deliverDueOf(user)
        return { ...readingOf(cache, user), jobs: jobsReport, webhooks: webhooksReport }
      }).pipe(Spans.span("TestClocks.advance", { attributes: { user_id: user } }))

    return TestClocks.TestClocks.of({ read, advance })
  })
)
