/**
 * The server's `Crypto` (node:crypto for hashes, HMAC and random bytes) against core's WebCrypto
 * adapter: the same digests and signatures bytes for bytes, and each opens what the other
 * sealed and verifies the other's password hashes, so a database written under one reads under
 * the other.
 */
import { describe, expect, it } from "@effect/vitest"
import { Crypto } from "@cobro/core"
import { Effect } from "effect"
import * as NodeCrypto from "../src/NodeCrypto.js"

const key = Crypto.sandboxKey
const options = { passwordIterations: 210_000 }

describe("NodeCrypto", () => {
  it.effect("hashes, signs and seals as WebCrypto does", () =>
    Effect.gen(function* () {
      const node = yield* NodeCrypto.make(key, options)
      const web = yield* Crypto.makeWebCrypto(key, options)
      for (const data of ["", "USR-token-0123456789", "ñandú €", new Uint8Array([0, 1, 2, 255])]) {
        expect(Crypto.toHex(yield* node.sha256(data))).toBe(Crypto.toHex(yield* web.sha256(data)))
        expect(Crypto.toHex(yield* node.hmacSha256("whsec", data))).toBe(
          Crypto.toHex(yield* web.hmacSha256("whsec", data))
        )
        expect(Crypto.toHex(yield* node.hmacSha256(new Uint8Array([9, 8, 7]), data))).toBe(
          Crypto.toHex(yield* web.hmacSha256(new Uint8Array([9, 8, 7]), data))
        )
      }
      // A known answer: SHA-256 of "abc" (FIPS 180-2).
      expect(Crypto.toHex(yield* node.sha256("abc"))).toBe(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
      const random = yield* node.randomBytes(32)
      expect(random).toHaveLength(32)
      expect(Crypto.toHex(random)).not.toBe(Crypto.toHex(yield* node.randomBytes(32)))

      expect(yield* web.decrypt(yield* node.encrypt("secreto", "client-1"), "client-1")).toBe("secreto")
      expect(yield* node.decrypt(yield* web.encrypt("secreto", "client-1"), "client-1")).toBe("secreto")
      expect(yield* node.verifyPassword("clave larga", yield* web.hashPassword("clave larga"))).toBe(true)
      expect(yield* web.verifyPassword("clave larga", yield* node.hashPassword("clave larga"))).toBe(true)
      expect(yield* web.verifyPassword("otra", yield* node.hashPassword("clave larga"))).toBe(false)
    })
  )
})
