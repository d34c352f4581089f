/**
 * The cryptography the engine needs for credentials: random secrets, hashes of tokens, sealed
 * client secrets and slow password hashes. A port, so a host can back it with an HSM or KMS; the
 * default adapter uses WebCrypto.
 */
import { Context, Effect, Either, Encoding, Layer, Redacted } from "effect"

export interface CryptoShape {
  /** `n` bytes from a cryptographically secure generator. */
  readonly randomBytes: (n: number) => Effect.Effect<Uint8Array>
  readonly sha256: (data: Uint8Array | string) => Effect.Effect<Uint8Array>
  readonly hmacSha256: (key: Uint8Array | string, data: Uint8Array | string) => Effect.Effect<Uint8Array>
  /**
   * Seals `plaintext` with AES-256-GCM under the server key. `context` is authenticated but not
   * stored (e.g. the client id of the secret), so a sealed value copied to another row does not
   * open. The result is text, safe to store in any column.
   */
  readonly encrypt: (plaintext: string, context?: string) => Effect.Effect<string>
  /** Opens what `encrypt` sealed; a value that does not authenticate is a defect (wrong key, tampering). */
  readonly decrypt: (sealed: string, context?: string) => Effect.Effect<string>
  /** A slow, salted hash of a password, self-describing (algorithm, cost, salt). */
  readonly hashPassword: (password: string) => Effect.Effect<string>
  /** Whether `password` matches `stored`; a malformed `stored` never matches. */
  readonly verifyPassword: (password: string, stored: string) => Effect.Effect<boolean>
  /** Equality whose time depends only on the lengths, not on where the inputs differ. */
  readonly timingSafeEqual: (a: Uint8Array, b: Uint8Array) => boolean
}

export class Crypto extends Context.Tag("@cobro/core/Crypto")<Crypto, CryptoShape>() {}

export const KEY_BYTES = 32
/** OWASP's 2023 recommendation for PBKDF2-HMAC-SHA256. */
export const DEFAULT_PASSWORD_ITERATIONS = 600_000
const MIN_PASSWORD_ITERATIONS = 210_000
const SALT_BYTES = 16
const IV_BYTES = 12
const SEALED_VERSION = "v1"

/**
 * A fixed, publicly known key for the sandbox and tests. Anything sealed with it is readable by
 * anyone who reads this file: never use it in production.
 */
export const sandboxKey: Redacted.Redacted<Uint8Array> = Redacted.make(
  Either.getOrThrow(Encoding.decodeHex("636f62726f2d73616e64626f782d6b65792d6e6f742d666f722d70726f642121"))
)

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })
const bytes = (data: Uint8Array | string): Uint8Array => (typeof data === "string" ? utf8.encode(data) : data)

export const timingSafeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  let diff = a.length ^ b.length
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return diff === 0
}

export interface WebCryptoOptions {
  /** PBKDF2 iterations of new password hashes (stored hashes keep their own count). */
  readonly passwordIterations?: number
}

/**
 * The adapter over WebCrypto. Core may not import `node:crypto` (it runs wherever Effect runs),
 * and WebCrypto is the one standard, audited implementation of AES-GCM, SHA-256, HMAC and PBKDF2
 * present as a global in Node 20+, Deno, Bun, workers and browsers. This is the only module that
 * touches `globalThis.crypto`.
 */
export const makeWebCrypto = (
  key: Redacted.Redacted<Uint8Array> | Uint8Array,
  options: WebCryptoOptions = {}
): Effect.Effect<CryptoShape> =>
  Effect.gen(function* () {
    const subtle = globalThis.crypto.subtle
    const raw = Redacted.isRedacted(key) ? Redacted.value(key) : key
    if (raw.length !== KEY_BYTES) {
      return yield* Effect.dieMessage(`the server key must be ${KEY_BYTES} bytes, got ${raw.length}`)
    }
    const iterations = options.passwordIterations ?? DEFAULT_PASSWORD_ITERATIONS
    if (!Number.isInteger(iterations) || iterations < MIN_PASSWORD_ITERATIONS) {
      return yield* Effect.dieMessage(`passwordIterations must be an integer >= ${MIN_PASSWORD_ITERATIONS}`)
    }
    const aesKey = yield* Effect.promise(() =>
      subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"])
    )

    const randomBytes = (n: number) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(n)))

    const sha256 = (data: Uint8Array | string) =>
      Effect.promise(() => subtle.digest("SHA-256", bytes(data))).pipe(Effect.map((d) => new Uint8Array(d)))

    const hmacSha256 = (k: Uint8Array | string, data: Uint8Array | string) =>
      Effect.promise(async () => {
        const hmacKey = await subtle.importKey("raw", bytes(k), { name: "HMAC", hash: "SHA-256" }, false, [
          "sign"
        ])
        return new Uint8Array(await subtle.sign("HMAC", hmacKey, bytes(data)))
      })

    const encrypt = (plaintext: string, context = "") =>
      Effect.gen(function* () {
        const iv = yield* randomBytes(IV_BYTES)
        const sealed = yield* Effect.promise(() =>
          subtle.encrypt(
            { name: "AES-GCM", iv, additionalData: utf8.encode(context) },
            aesKey,
            utf8.encode(plaintext)
          )
        )
        const out = new Uint8Array(IV_BYTES + sealed.byteLength)
        out.set(iv)
        out.set(new Uint8Array(sealed), IV_BYTES)
        return `${SEALED_VERSION}.${Encoding.encodeBase64Url(out)}`
      })

    const decrypt = (sealed: string, context = "") =>
      Effect.gen(function* () {
        const [version, body] = sealed.split(".")
        const data = body === undefined ? undefined : Either.getOrUndefined(Encoding.decodeBase64Url(body))
        if (version !== SEALED_VERSION || data === undefined || data.length <= IV_BYTES) {
          return yield* Effect.dieMessage("a sealed value is malformed")
        }
        const opened = yield* Effect.tryPromise(() =>
          subtle.decrypt(
            { name: "AES-GCM", iv: data.subarray(0, IV_BYTES), additionalData: utf8.encode(context) },
            aesKey,
            data.subarray(IV_BYTES)
          )
        ).pipe(
          Effect.catchAll(() =>
            Effect.dieMessage("a sealed value does not open: wrong server key or tampered data")
          )
        )
        return utf8Decoder.decode(opened)
      })

    const pbkdf2 = (password: string, salt: Uint8Array, rounds: number) =>
      Effect.promise(async () => {
        const base = await subtle.importKey("raw", utf8.encode(password), "PBKDF2", false, ["deriveBits"])
        return new Uint8Array(
          await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: rounds }, base, 256)
        )
      })

    const hashPassword = (password: string) =>
      Effect.gen(function* () {
        const salt = yield* randomBytes(SALT_BYTES)
        const hash = yield* pbkdf2(password, salt, iterations)
        return `pbkdf2-sha256$${iterations}$${Encoding.encodeBase64Url(salt)}$${Encoding.encodeBase64Url(hash)}`
      })

    const verifyPassword = (password: string, stored: string) =>
      Effect.gen(function* () {
        const [algorithm, rounds, saltText, hashText] = stored.split("$")
        const salt =
          saltText === undefined ? undefined : Either.getOrUndefined(Encoding.decodeBase64Url(saltText))
        const hash =
          hashText === undefined ? undefined : Either.getOrUndefined(Encoding.decodeBase64Url(hashText))
        const n = Number(rounds)
        if (algorithm !== "pbkdf2-sha256" || !Number.isInteger(n) || n < 1 || !salt || !hash) return false
        return timingSafeEqual(yield* pbkdf2(password, salt, n), hash)
      })

    return {
      randomBytes,
      sha256,
      hmacSha256,
      encrypt,
      decrypt,
      hashPassword,
      verifyPassword,
      timingSafeEqual
    }
  })

export const layerWebCrypto = (
  key: Redacted.Redacted<Uint8Array> | Uint8Array,
  options: WebCryptoOptions = {}
): Layer.Layer<Crypto> => Layer.effect(Crypto, makeWebCrypto(key, options))

/** A 32-byte key given as base64 (standard or url-safe) or 64 hex digits. */
export const decodeKey = (text: string): Either.Either<Uint8Array, string> => {
  const trimmed = text.trim()
  const decoded = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Encoding.decodeHex(trimmed)
    : Either.orElse(Encoding.decodeBase64(trimmed), () => Encoding.decodeBase64Url(trimmed))
  return Either.match(decoded, {
    onLeft: () => Either.left("the server key must be base64 or hex"),
    onRight: (k) =>
      k.length === KEY_BYTES ? Either.right(k) : Either.left(`the server key must be ${KEY_BYTES} bytes`)
  })
}

/** Lower-case hex of `data`. */
export const toHex = (data: Uint8Array): string => Encoding.encodeHex(data)
