import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Either, Encoding, Exit, Option, Redacted, TestClock } from "effect"
import { Auth, Crypto, Ids, Principal } from "../src/index.js"
import { CredentialRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createMerchant, cuitFor, userToken } from "./accountFixtures.js"
import { expectLedgerOk } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>, settings = {}) =>
  Effect.provide(effect, SandboxEngine.layerMemory(settings))

const sha256Hex = (text: string) =>
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    return Encoding.encodeHex(yield* crypto.sha256(text))
  })

describe("Auth.issueUserToken", () => {
  it.effect("issues an opaque Bearer token for 1 hour, stored only as its SHA-256", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 0, 1, 9, 0, 0))
        const auth = yield* Auth.Auth
        const created = yield* createMerchant()
        const issued = yield* auth.issueUserToken(
          created.user.user_id,
          new Auth.TokenRequest({ client_id: created.client_id, client_secret: created.client_secret })
        )
        expect(issued.token_type).toBe("Bearer")
        expect(issued.expires_in).toBe(3600)
        expect(DateTime.formatIso(issued.expiration_timestamp)).toBe("2026-01-01T10:00:00.000Z")
        // "USR-" + base64url of 32 random bytes.
        expect(issued.token).toMatch(/^USR-[A-Za-z0-9_-]{43}$/)

        const repo = yield* CredentialRepository.CredentialRepository
        expect(Option.isNone(yield* repo.findToken(issued.token))).toBe(true)
        const stored = yield* repo.findToken(yield* sha256Hex(issued.token))
        expect(Option.map(stored, (t) => [t.kind, t.user_id])).toEqual(
          Option.some(["user", created.user.user_id])
        )

        expect(yield* auth.authenticate(issued.token)).toEqual(
          Principal.Principal.User({ user_id: created.user.user_id })
        )
        // Each call gives a new token.
        expect(yield* userToken(created)).not.toBe(issued.token)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects a wrong secret, a wrong client id and an unknown user alike", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const one = yield* createMerchant()
        const two = yield* createMerchant({ email: "dos@example.com", cuit: cuitFor("23456789") })
        const attempts = [
          [one.user.user_id, one.client_id, one.client_secret + "x"],
          [one.user.user_id, one.client_id, ""],
          [one.user.user_id, two.client_id, two.client_secret],
          [two.user.user_id, one.client_id, one.client_secret],
          [Ids.UserId.make("nobody"), one.client_id, one.client_secret]
        ] as const
        for (const [user, client_id, client_secret] of attempts) {
          const error = yield* Effect.flip(
            auth.issueUserToken(user, new Auth.TokenRequest({ client_id, client_secret }))
          )
          expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.credentials.invalid" })
        }
      })
    )
  )
})

describe("Auth.authenticate", () => {
  it.effect("a user token expires at exactly one hour", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const token = yield* userToken(yield* createMerchant())
        yield* TestClock.adjust(Duration.millis(3_600_000 - 1))
        expect((yield* auth.authenticate(token))._tag).toBe("User")
        yield* TestClock.adjust(Duration.millis(1))
        const error = yield* Effect.flip(auth.authenticate(token))
        expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.token.expired" })
      })
    )
  )

  it.effect("the user token lifetime is configurable", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const created = yield* createMerchant()
        const issued = yield* auth.issueUserToken(
          created.user.user_id,
          new Auth.TokenRequest({ client_id: created.client_id, client_secret: created.client_secret })
        )
        expect(issued.expires_in).toBe(600)
        yield* TestClock.adjust("10 minutes")
        expect((yield* Effect.flip(auth.authenticate(issued.token))).key).toBe("auth.token.expired")
      }),
      { userTokenLifetime: Duration.minutes(10) }
    )
  )

  it.effect("an unknown, empty or tampered token is Unauthenticated", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const token = yield* userToken(yield* createMerchant())
        for (const bad of [
          "",
          "USR-unknown",
          token.slice(0, -1),
          `${token}x`,
          `Bearer ${token}`,
          "PAR-abc"
        ]) {
          const error = yield* Effect.flip(auth.authenticate(bad))
          expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.token.invalid" })
        }
      })
    )
  )
})

describe("Auth.rotateSecret", () => {
  it.effect("the old secret stops working, the new one works, and old tokens are revoked", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const created = yield* createMerchant()
        const oldToken = yield* userToken(created)
        const rotated = yield* auth.rotateSecret(created.user.user_id)
        expect(rotated.client_id).toBe(created.client_id)
        expect(rotated.client_secret).not.toBe(created.client_secret)

        const withOld = yield* Effect.flip(userToken(created))
        expect(withOld).toMatchObject({ _tag: "Unauthenticated", key: "auth.credentials.invalid" })
        expect((yield* Effect.flip(auth.authenticate(oldToken))).key).toBe("auth.token.invalid")

        const fresh = yield* userToken({ ...created, client_secret: rotated.client_secret })
        expect((yield* auth.authenticate(fresh))._tag).toBe("User")

        const repo = yield* CredentialRepository.CredentialRepository
        const row = Option.getOrThrow(yield* repo.findCredential(created.user.user_id))
        expect(JSON.stringify(row)).not.toContain(rotated.client_secret)
        expect((yield* Effect.flip(auth.rotateSecret(Ids.UserId.make("nobody"))))._tag).toBe("NotFound")
      })
    )
  )
})

describe("Crypto (WebCrypto adapter)", () => {
  const layer = Crypto.layerWebCrypto(Crypto.sandboxKey)

  it.effect("hashes and MACs match published test vectors", () =>
    Effect.gen(function* () {
      const crypto = yield* Crypto.Crypto
      expect(Encoding.encodeHex(yield* crypto.sha256("abc"))).toBe(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
      // RFC 4231, test case 2.
      expect(Encoding.encodeHex(yield* crypto.hmacSha256("Jefe", "what do ya want for nothing?"))).toBe(
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      )
      expect((yield* crypto.randomBytes(32)).length).toBe(32)
    }).pipe(Effect.provide(layer))
  )

  it.effect("seals with AES-256-GCM: fresh IV each time, opens only with the same key and context", () =>
    Effect.gen(function* () {
      const crypto = yield* Crypto.Crypto
      const a = yield* crypto.encrypt("s3cret", "ctx")
      const b = yield* crypto.encrypt("s3cret", "ctx")
      expect(a).not.toBe(b)
      expect(a).not.toContain("s3cret")
      expect(yield* crypto.decrypt(a, "ctx")).toBe("s3cret")
      expect(Exit.isFailure(yield* Effect.exit(crypto.decrypt(a, "other")))).toBe(true)
      // One bit flipped in the ciphertext (not in the text's last characters, whose low bits a
      // base64 decoder may ignore), and one in the authentication tag.
      const [version, body] = a.split(".") as [string, string]
      const sealed = Either.getOrThrow(Encoding.decodeBase64Url(body))
      for (const at of [12, sealed.length - 1]) {
        const flipped = Uint8Array.from(sealed)
        flipped[at] = flipped[at]! ^ 1
        const tampered = `${version}.${Encoding.encodeBase64Url(flipped)}`
        expect(Exit.isFailure(yield* Effect.exit(crypto.decrypt(tampered, "ctx")))).toBe(true)
      }

      const otherKey = yield* Crypto.makeWebCrypto(Redacted.make(new Uint8Array(32).fill(7)))
      expect(Exit.isFailure(yield* Effect.exit(otherKey.decrypt(a, "ctx")))).toBe(true)
    }).pipe(Effect.provide(layer))
  )

  it.effect("hashes passwords slowly with a random salt", () =>
    Effect.gen(function* () {
      const crypto = yield* Crypto.Crypto
      const one = yield* crypto.hashPassword("correct horse")
      const two = yield* crypto.hashPassword("correct horse")
      expect(one).toMatch(/^pbkdf2-sha256\$600000\$/)
      expect(one).not.toBe(two)
      expect(yield* crypto.verifyPassword("correct horse", one)).toBe(true)
      expect(yield* crypto.verifyPassword("correct horsf", one)).toBe(false)
      expect(yield* crypto.verifyPassword("correct horse", "garbage")).toBe(false)
    }).pipe(Effect.provide(layer))
  )

  it("compares in constant time and decodes server keys", () => {
    expect(Crypto.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true)
    expect(Crypto.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false)
    expect(Crypto.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false)
    expect(Either.isRight(Crypto.decodeKey("00".repeat(32)))).toBe(true)
    expect(Either.isRight(Crypto.decodeKey(Encoding.encodeBase64(new Uint8Array(32))))).toBe(true)
    expect(Either.isLeft(Crypto.decodeKey(Encoding.encodeBase64(new Uint8Array(16))))).toBe(true)
  })

  it.effect("refuses a key that is not 32 bytes", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Crypto.makeWebCrypto(new Uint8Array(16)))
      expect(Exit.isFailure(exit)).toBe(true)
    })
  )
})
