/**
 * Identifiers from `Clock` and `Random`: a time prefix keeps them roughly sortable, 64 random
 * bits keep them unique. Secrets (tokens, client secrets) do not come from here.
 */
import { Clock, Effect, Random } from "effect"

/**
 * `length` uniformly random digits in base `radix` (2 to 36), drawn as many at a time as stay
 * below 2³¹ (nine decimal digits, seven hex, five of base 36): one `Random` draw each.
 */
export const randomDigits = (radix: number, length: number): Effect.Effect<string> =>
  Effect.gen(function* () {
    const perDraw = Math.floor(31 / Math.log2(radix))
    let out = ""
    while (out.length < length) {
      const n = Math.min(perDraw, length - out.length)
      out += (yield* Random.nextIntBetween(0, radix ** n)).toString(radix).padStart(n, "0")
    }
    return out
  })

/** `length` characters of [0-9a-z]. */
export const randomChars = (length: number): Effect.Effect<string> => randomDigits(36, length)

export const newId = (prefix: string): Effect.Effect<string> =>
  Effect.gen(function* () {
    const millis = yield* Clock.currentTimeMillis
    return `${prefix}_${millis.toString(36).padStart(9, "0")}${yield* randomChars(13)}`
  })
