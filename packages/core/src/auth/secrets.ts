/**
 * Random secrets and their comparison, shared by the services that mint credentials, tokens
 * and codes. Everything comes from the `Crypto` port.
 */
import { Effect, Encoding } from "effect"
import type { CryptoShape } from "./Crypto.js"
import { ClientId } from "../Ids.js"

/** 32 random bytes (256 bits) as base64url text, after `prefix`. */
export const newSecret = (crypto: CryptoShape, prefix = ""): Effect.Effect<string> =>
  Effect.map(crypto.randomBytes(32), (b) => `${prefix}${Encoding.encodeBase64Url(b)}`)

/** A public client id: `cli_` and 128 random bits in hex. */
export const newClientId = (crypto: CryptoShape): Effect.Effect<ClientId> =>
  Effect.map(crypto.randomBytes(16), (b) => ClientId.make(`cli_${Encoding.encodeHex(b)}`))

/** How tokens and codes are stored and looked up: lower-case hex SHA-256 of the text. */
export const hashOf = (crypto: CryptoShape, text: string): Effect.Effect<string> =>
  Effect.map(crypto.sha256(text), Encoding.encodeHex)

/**
 * Whether a presented client secret equals the sealed one. Both sides are hashed first so the
 * constant-time comparison runs on equal lengths and leaks nothing about the secret's length.
 */
export const secretMatches = (
  crypto: CryptoShape,
  presented: string,
  sealed: string,
  context: string
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const stored = yield* crypto.decrypt(sealed, context)
    return crypto.timingSafeEqual(yield* crypto.sha256(presented), yield* crypto.sha256(stored))
  })
