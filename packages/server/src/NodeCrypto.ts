/**
 * The engine's `Crypto` port on Node's own `node:crypto` for what runs on every request: the
 * SHA-256 of a bearer token (looked up by its hash), HMAC-SHA256 (webhook signatures) and random
 * bytes, computed synchronously. WebCrypto, core's portable default, answers those through a
 * promise and a job of its own, about ten times the CPU of a digest here (`bench/crypto.mjs`), paid on every authenticated request. Sealing (AES-GCM) and password
 * hashing (PBKDF2, slow on purpose, best off the main thread) stay WebCrypto's, so what either
 * adapter wrote the other reads: the outputs are the same algorithms, bytes for bytes.
 */
import { Crypto } from "@cobro/core"
import { Effect, Layer, type Redacted } from "effect"
import { createHash, createHmac, randomBytes } from "node:crypto"

const toBuffer = (data: Uint8Array | string) => (typeof data === "string" ? data : Buffer.from(data))
const bytes = (buffer: Buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length)

export const make = (
  key: Redacted.Redacted<Uint8Array> | Uint8Array,
  options: Crypto.WebCryptoOptions = {}
): Effect.Effect<Crypto.CryptoShape> =>
  Effect.map(Crypto.makeWebCrypto(key, options), (web) => ({
    ...web,
    randomBytes: (n) => Effect.sync(() => bytes(randomBytes(n))),
    sha256: (data) => Effect.sync(() => bytes(createHash("sha256").update(toBuffer(data)).digest())),
    hmacSha256: (k, data) =>
      Effect.sync(() => bytes(createHmac("sha256", toBuffer(k)).update(toBuffer(data)).digest()))
  }))

export const layer = (
  key: Redacted.Redacted<Uint8Array> | Uint8Array,
  options: Crypto.WebCryptoOptions = {}
): Layer.Layer<Crypto.Crypto> => Layer.effect(Crypto.Crypto, make(key, options))
