/**
 * Identifiers from `Clock` and `Random`: a time prefix keeps them roughly sortable, 64 random
 * bits keep them unique. Secrets (tokens, client secrets) do not come from here.
 */
import { Clock, Effect } from "effect"

/**
 * `length` uniformly random digits in base `radix` (2 to 36), drawn as many at a time as stay
 * below 2³¹ (nine decimal digits, seven hex, five of base 36): one `Random` draw each. The draws
 * are chained on the service itself rather than through `Random.nextIntBetween` in a generator:
 * the same draws in the same order, in a fraction of the runtime's steps (every id of every
 * transfer comes from here).
 */
export const randomDigits = (radix: number, length: number): Effect.Effect<string> =>
  Effect.randomWith((random) => {
    const perDraw = Math.floor(31 / Math.log2(radix))
    const from = (out: string): Effect.Effect<string> => {
      if (out.length >= length) return Effect.succeed(out)
      const n = Math.min(perDraw, length - out.length)
      return Effect.flatMap(random.nextIntBetween(0, radix ** n), (k) =>
        from(out + k.toString(radix).padStart(n, "0"))
      )
    }
    return from("")
  })

/** `length` characters of [0-9a-z]. */
export const randomChars = (length: number): Effect.Effect<string> => randomDigits(36, length)

export const newId = (prefix: string): Effect.Effect<string> =>
  Effect.flatMap(Clock.currentTimeMillis, (millis) =>
    Effect.map(randomChars(13), (chars) => `${prefix}_${millis.toString(36).padStart(9, "0")}${chars}`)
  )
