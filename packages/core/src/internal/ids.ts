/**
 * Identifiers from `Clock` and `Random`: a time prefix keeps them roughly sortable, 64 random
 * bits keep them unique. Secrets (tokens, client secrets) do not come from here.
 */
import { Clock, Effect, Random } from "effect"

/** `length` characters of [0-9a-z], drawn five at a time (36⁵ is far below `Random`'s range). */
export const randomChars = (length: number): Effect.Effect<string> =>
  Effect.gen(function* () {
    let out = ""
    while (out.length < length) {
      const n = Math.min(5, length - out.length)
      out += (yield* Random.nextIntBetween(0, 36 ** n)).toString(36).padStart(n, "0")
    }
    return out
  })

export const newId = (prefix: string): Effect.Effect<string> =>
  Effect.gen(function* () {
    const millis = yield* Clock.currentTimeMillis
    return `${prefix}_${millis.toString(36).padStart(9, "0")}${yield* randomChars(13)}`
  })
