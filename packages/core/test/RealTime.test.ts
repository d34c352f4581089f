import { describe, expect, it } from "@effect/vitest"
import { Clock, DateTime, Duration, Effect, Layer, TestClock } from "effect"
import { Auth, RealTime } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createMerchant, userToken } from "./accountFixtures.js"

/** A clock this test moves by hand (its own "real time"), apart from the engine's `TestClock`. */
const handClock = (start: number) => {
  let millis = start
  const live = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.sync(() => millis),
    unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
  return {
    clock,
    pass: (by: Duration.DurationInput) => Effect.sync(() => void (millis += Duration.toMillis(by)))
  }
}

const start = Date.UTC(2026, 0, 1, 9)

describe("RealTime", () => {
  it.effect("is the fiber's own Clock unless a host provides one (TestClock drives both)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(start)
      expect(DateTime.toEpochMillis(yield* RealTime.now)).toBe(start)
      yield* TestClock.adjust("5 days")
      expect(DateTime.toEpochMillis(yield* RealTime.now)).toBe(start + Duration.toMillis("5 days"))
    })
  )

  it.effect(
    "a user token lives on RealTime: moving the engine's clock does not expire it, real time does",
    () => {
      const real = handClock(start)
      return Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const auth = yield* Auth.Auth
        const merchant = yield* createMerchant()
        const token = yield* userToken(merchant)
        // The engine's clock moves five days (a sandbox advance); real time does not.
        yield* TestClock.adjust("5 days")
        expect((yield* auth.authenticate(token)).user_id).toBe(merchant.user.user_id)
        // An hour of real time later, it has expired.
        yield* real.pass("1 hour")
        const expired = yield* Effect.flip(auth.authenticate(token))
        expect(expired.key).toBe("auth.token.expired")
      }).pipe(Effect.provide(SandboxEngine.layerMemory().pipe(Layer.provide(RealTime.layer(real.clock)))))
    }
  )
})
