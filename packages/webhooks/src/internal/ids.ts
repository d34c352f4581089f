/** Identifiers of workers and attempts, from `Clock` and `Random` (as core's ids). */
import { Clock, Effect, Random } from "effect"

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

const randomChars = (length: number): Effect.Effect<string> =>
  Effect.gen(function* () {
    let out = ""
    for (let i = 0; i < length; i++) out += alphabet[yield* Random.nextIntBetween(0, alphabet.length)]
    return out
  })

/** `prefix_` + base-36 clock millis + 13 random characters. */
export const newId = (prefix: string): Effect.Effect<string> =>
  Effect.gen(function* () {
    const millis = yield* Clock.currentTimeMillis
    return `${prefix}_${millis.toString(36).padStart(9, "0")}${yield* randomChars(13)}`
  })
