/**
 * The sandbox's test clocks, one per merchant. The engine reads domain time from Effect's
 * `Clock`; in sandbox mode a merchant whose clock was moved runs on real time plus its own offset
 * (kept in storage by `TestClockRepository`, so every instance on the same database agrees), and
 * every other merchant on real time. Core's `MerchantClocks` is how the engine asks: the HTTP
 * handlers run a request on its merchant's clock, an incoming transfer runs on its receiver's,
 * and the due work passes over the moved merchants' work each on its own clock.
 *
 * Each instance keeps the moved clocks' offsets in memory, re-read every second and raised right
 * after its own advances; offsets only grow, so a lagging instance is at most a second behind,
 * never ahead.
 *
 * Moving a clock does not replay the instants in between: work that became due runs once, at
 * the new time (as after a server that was down for that long).
 *
 * Credentials, tokens, codes, `Idempotency-Key` retention, rate limits, web forms,
 * `webhook-timestamp` and transfers at the bank stay on real time: the layer also provides
 * core's `RealTime`.
 */
import {
  Jobs,
  MerchantClocks,
  RealTime,
  TestClockRepository,
  TestClocks,
  type Errors,
  type Ids
} from "@cobro/core"
import { Webhooks } from "@cobro/webhooks"
import { Clock, Context, DateTime, Duration, Effect, Either, Layer, Schedule } from "effect"

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

/** The offsets this instance knows, and the clocks over them. */
export interface ClockCache {
  /** Milliseconds `user`'s clock runs ahead of real time (zero if never moved). */
  readonly offsetOf: (user: Ids.UserId) => number
  /** Sets `user`'s offset to `millis` if that is ahead of the known one. */
  readonly raise: (user: Ids.UserId, millis: number) => void
  /** The real time this cache adds offsets to. */
  readonly real: Clock.Clock
}

export class SandboxClocks extends Context.Tag("@cobro/server/SandboxClocks")<SandboxClocks, ClockCache>() {}

/** A cache over `real`, and the `MerchantClocks` it answers. */
export const makeCache = (real: Clock.Clock): { cache: ClockCache; clocks: MerchantClocks.MerchantClocksShape } => {
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
 * The merchants' clocks over the stored offsets, as core's `MerchantClocks` for everything built
 * on top of this layer (the engine, the HTTP handlers, the workers), loaded before anything reads
 * the time and refreshed every second while the layer lives. Real time is the `Clock` this layer
 * is built on (the system's, or a test's); everything on top gets it as `RealTime`.
 */
export const layer: Layer.Layer<
  SandboxClocks | MerchantClocks.MerchantClocks | RealTime.RealTime,
  never,
  TestClockRepository.TestClockRepository
> = Layer.scopedContext(
  Effect.gen(function* () {
    const repo = yield* TestClockRepository.TestClockRepository
    const real = yield* Effect.clock
    const { cache, clocks } = makeCache(real)
    const refresh = Effect.map(repo.moved, (moved) => {
      for (const { user_id, offset } of moved) cache.raise(user_id, Duration.toMillis(offset))
    })
    yield* refresh
    yield* refresh.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("could not re-read the sandbox test clocks", cause)),
      Effect.repeat(Schedule.spaced(refreshInterval)),
      Effect.forkScoped
    )
    return Context.make(SandboxClocks, cache).pipe(
      Context.add(MerchantClocks.MerchantClocks, clocks),
      Context.add(RealTime.RealTime, RealTime.fromClock(real))
    )
  })
)

const readingOf = (cache: ClockCache, user: Ids.UserId): TestClocks.ClockReading => {
  const offset = cache.offsetOf(user)
  return {
    now: DateTime.unsafeMake(cache.real.unsafeCurrentTimeMillis() + offset),
    offset: Duration.millis(offset)
  }
}

/**
 * The merchants' `TestClocks`: reading a clock, and advancing it then running its merchant's work
 * that became due (`Jobs.runDueOf`, then `Webhooks.deliverDueOf`) before answering. Concurrent
 * advances of one clock are safe: the stored offset changes in one atomic step, and each piece of
 * due work is claimed under a lock or a lease, so it runs once whichever advance finds it.
 */
export const testClocks: Layer.Layer<
  TestClocks.TestClocks,
  never,
  SandboxClocks | TestClockRepository.TestClockRepository | Jobs.Jobs | Webhooks.Webhooks
> = Layer.effect(
  TestClocks.TestClocks,
  Effect.gen(function* () {
    const cache = yield* SandboxClocks
    const repo = yield* TestClockRepository.TestClockRepository
    const jobs = yield* Jobs.Jobs
    const webhooks = yield* Webhooks.Webhooks

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
        const webhooksReport = yield* webhooks.deliverDueOf(user)
        return { ...readingOf(cache, user), jobs: jobsReport, webhooks: webhooksReport }
      }).pipe(Effect.withSpan("TestClocks.advance", { attributes: { user_id: user } }))

    return TestClocks.TestClocks.of({ read, advance })
  })
)
