import { describe, expect, it } from "@effect/vitest"
import { Effect, Random, TestClock } from "effect"
import { newId, randomChars, randomDigits } from "../src/internal/ids.js"

/** The draws `randomDigits` is to make, made one by one on a Random of the same seed. */
const byHand = (seed: string, draws: ReadonlyArray<readonly [max: number, digits: number, radix: number]>) =>
  Effect.gen(function* () {
    let out = ""
    for (const [max, digits, radix] of draws)
      out += (yield* Random.nextIntBetween(0, max)).toString(radix).padStart(digits, "0")
    return out
  }).pipe(Effect.withRandom(Random.make(seed)))

describe("random digits and ids", () => {
  it.effect("draw as many digits at a time as stay below 2^31, in order, from the fiber's Random", () =>
    Effect.gen(function* () {
      const decimal = yield* randomDigits(10, 13).pipe(Effect.withRandom(Random.make("s1")))
      expect(decimal).toMatch(/^\d{13}$/)
      expect(decimal).toBe(
        yield* byHand("s1", [
          [1e9, 9, 10],
          [1e4, 4, 10]
        ])
      )
      const chars = yield* randomChars(13).pipe(Effect.withRandom(Random.make("s2")))
      expect(chars).toMatch(/^[0-9a-z]{13}$/)
      expect(chars).toBe(
        yield* byHand("s2", [
          [36 ** 5, 5, 36],
          [36 ** 5, 5, 36],
          [36 ** 3, 3, 36]
        ])
      )
      expect(yield* randomDigits(10, 0)).toBe("")
    })
  )

  it.effect("an id is its prefix, the clock's time in base 36 and 13 random characters", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_764_000_000_000)
      const id = yield* newId("evt").pipe(Effect.withRandom(Random.make("s3")))
      expect(id).toBe(
        `evt_${(1_764_000_000_000).toString(36).padStart(9, "0")}${yield* byHand("s3", [
          [36 ** 5, 5, 36],
          [36 ** 5, 5, 36],
          [36 ** 3, 3, 36]
        ])}`
      )
      const other = yield* newId("evt")
      expect(other).not.toBe(id)
    })
  )
})
