/**
 * Identifiers from `Clock` and `Random`: a time prefix keeps them roughly sortable, 64 random
 * bits keep them unique. Secrets (tokens, client secrets) do not come from here.
 */
import { Clock, Effect, Random } from "effect"

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

export const randomChars = (length: number): Effect.Effect<string> =>
  Effect.gen(function* () {
    let out = ""
    for (let i = 0; i < length; i++) out += alphabet[yield* Random.nextIntBetween(0, alphabet.length)]
    return out
  })

export const newId = (prefix: string): Effect.Effect<string> =>
  Effect.gen(function* () {
    const millis = yield* Clock.currentTimeMillis
    return `${prefix}_${millis.toString(36).padStart(9, "0")}${yield* randomChars(13)}`
  })
