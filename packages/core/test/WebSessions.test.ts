/**
 * The dashboard's sessions (`WebSessions`) over the in-memory engine, on the TestClock (real time
 * is the fiber's clock here): the token is stored only as a hash; idle and absolute expiry; sign-out;
 * a sign-in that needs a second factor refuses a missing, wrong or unenrolled one and accepts the
 * enrolled TOTP's code (each once); partners with their client id, password and (second proof)
 * client secret.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Encoding, Exit, Layer, Option, TestClock } from "effect"
import { Authenticator, Credential, Crypto, Mailer, SecondFactors, WebSessions } from "../src/index.js"
import { CredentialRepository, WebSessionRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createMerchant, createPartner } from "./accountFixtures.js"

const PASSWORD = "correct horse battery"
const lifetimes = { idle: Duration.minutes(30), absolute: Duration.hours(12) }

/** An authenticator whose only right code is "123456", of the current step. */
const authenticator = Layer.succeed(Authenticator.Authenticator, {
  newSecret: Effect.succeed("JBSWY3DPEHPK3PXP"),
  uri: ({ secret }) => `otpauth://totp/test?secret=${secret}`,
  qrSvg: () => Effect.succeed("<svg/>"),
  stepOf: ({ at, code }) => (code === "123456" ? Option.some(Authenticator.stepAt(at)) : Option.none())
})

const mailer = Layer.succeed(Mailer.Mailer, { send: () => Effect.void })

const engine = WebSessions.WebSessions.Default.pipe(
  Layer.provideMerge(
    SecondFactors.SecondFactors.Default.pipe(Layer.provide(Layer.merge(authenticator, mailer)))
  ),
  Layer.provideMerge(SandboxEngine.layerMemory())
)

/** Without `SecondFactors` in the engine. */
const plainEngine = WebSessions.WebSessions.Default.pipe(Layer.provideMerge(SandboxEngine.layerMemory()))

const merchantWithPassword = Effect.gen(function* () {
  const created = yield* createMerchant({ email: "uno@example.com" })
  const crypto = yield* Crypto.Crypto
  const credentials = yield* CredentialRepository.CredentialRepository
  const credential = Option.getOrThrow(yield* credentials.findCredential(created.user.user_id))
  yield* credentials.updateCredential(
    new Credential.UserCredential({ ...credential, password_hash: yield* crypto.hashPassword(PASSWORD) })
  )
  return created.user.user_id
})

const keyOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail"
    ? (exit.cause.error as { key?: string }).key
    : "succeeded"

describe("WebSessions", () => {
  it.effect("stores only the token's hash, and ends a session idle too long or too old, or signed out", () =>
    Effect.gen(function* () {
      const user = yield* merchantWithPassword
      const sessions = yield* WebSessions.WebSessions
      const opened = yield* sessions.signInUser(
        { email: "UNO@example.com ", password: PASSWORD },
        { secondFactor: false }
      )
      expect(opened.principal).toMatchObject({ kind: "user", user_id: user })
      expect(opened.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const repo = yield* WebSessionRepository.WebSessionRepository
      expect(yield* repo.findSession(opened.token)).toEqual(Option.none())

      // Used every 29 minutes it lives; 30 minutes idle ends it.
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust(Duration.minutes(29))
        expect(Option.isSome(yield* sessions.resolve(opened.token, lifetimes))).toBe(true)
      }
      yield* TestClock.adjust(Duration.minutes(30))
      expect(yield* sessions.resolve(opened.token, lifetimes)).toEqual(Option.none())

      // However often it is used, 12 hours after sign-in it ends.
      const second = yield* sessions.signInUser(
        { email: "uno@example.com", password: PASSWORD },
        { secondFactor: false }
      )
      for (let i = 0; i < 24; i++) {
        yield* TestClock.adjust(Duration.minutes(29))
        expect(Option.isSome(yield* sessions.resolve(second.token, lifetimes))).toBe(true)
      }
      yield* TestClock.adjust(Duration.minutes(25))
      expect(yield* sessions.resolve(second.token, lifetimes)).toEqual(Option.none())

      const third = yield* sessions.signInUser(
        { email: "uno@example.com", password: PASSWORD },
        { secondFactor: false }
      )
      yield* sessions.signOut(third.token)
      expect(yield* sessions.resolve(third.token, lifetimes)).toEqual(Option.none())
      expect(yield* sessions.resolve("not a token", lifetimes)).toEqual(Option.none())
    }).pipe(Effect.provide(plainEngine))
  )

  it.effect("purges the sessions that ended and were never presented again, and keeps the live ones", () =>
    Effect.gen(function* () {
      yield* merchantWithPassword
      const sessions = yield* WebSessions.WebSessions
      const signIn = sessions.signInUser(
        { email: "uno@example.com", password: PASSWORD },
        { secondFactor: false }
      )
      const left = yield* signIn
      yield* TestClock.adjust(Duration.minutes(20))
      const kept = yield* signIn
      expect(yield* sessions.purgeExpired(lifetimes)).toBe(0)
      // `left` is idle for 30 minutes, `kept` for 10.
      yield* TestClock.adjust(Duration.minutes(10))
      expect(yield* sessions.purgeExpired(lifetimes)).toBe(1)
      const repo = yield* WebSessionRepository.WebSessionRepository
      const crypto = yield* Crypto.Crypto
      const hashOf = (token: string) => Effect.map(crypto.sha256(token), Encoding.encodeHex)
      expect(yield* repo.findSession(yield* hashOf(left.token))).toEqual(Option.none())
      expect(Option.isSome(yield* sessions.resolve(kept.token, lifetimes))).toBe(true)
    }).pipe(Effect.provide(plainEngine))
  )

  it.effect("refuses wrong passwords and unknown accounts alike", () =>
    Effect.gen(function* () {
      yield* merchantWithPassword
      const sessions = yield* WebSessions.WebSessions
      const wrong = yield* Effect.exit(
        sessions.signInUser({ email: "uno@example.com", password: "nope nope" }, { secondFactor: false })
      )
      const unknown = yield* Effect.exit(
        sessions.signInUser({ email: "dos@example.com", password: PASSWORD }, { secondFactor: false })
      )
      expect([keyOf(wrong), keyOf(unknown)]).toEqual(["auth.login.invalid", "auth.login.invalid"])
    }).pipe(Effect.provide(plainEngine))
  )

  it.effect(
    "with a second factor: refuses a missing, unenrolled or wrong code; accepts the enrolled TOTP's",
    () =>
      Effect.gen(function* () {
        const user = yield* merchantWithPassword
        const sessions = yield* WebSessions.WebSessions
        const factors = yield* SecondFactors.SecondFactors
        const signIn = (code?: string) =>
          Effect.exit(
            sessions.signInUser(
              { email: "uno@example.com", password: PASSWORD, code },
              { secondFactor: true }
            )
          )
        expect(keyOf(yield* signIn())).toBe("auth.login.second_factor_required")
        expect(keyOf(yield* signIn("123456"))).toBe("second_factor.not_enrolled")
        // A wrong password with a right code is still a wrong password.
        yield* factors.enrolTotp(user, {})
        yield* TestClock.adjust(Duration.seconds(30))
        yield* factors.confirm(user, { code: "123456" })
        expect(keyOf(yield* signIn("000000"))).toBe("auth.login.invalid")
        yield* TestClock.adjust(Duration.seconds(30))
        const wrongPassword = yield* Effect.exit(
          sessions.signInUser(
            { email: "uno@example.com", password: "nope nope", code: "123456" },
            { secondFactor: true }
          )
        )
        expect(keyOf(wrongPassword)).toBe("auth.login.invalid")
        expect(Exit.isSuccess(yield* signIn("123456"))).toBe(true)
        // The same time step's code again: a replay.
        expect(keyOf(yield* signIn("123456"))).toBe("auth.login.invalid")
      }).pipe(Effect.provide(engine))
  )

  it.effect("partners: client id and dashboard password, and the client secret as the second proof", () =>
    Effect.gen(function* () {
      const partner = yield* createPartner()
      const sessions = yield* WebSessions.WebSessions
      const signIn = (password: string, client_secret?: string, secondFactor = false) =>
        Effect.exit(
          sessions.signInPartner({ client_id: partner.client_id, password, client_secret }, { secondFactor })
        )
      // No password yet: refused like a wrong one.
      expect(keyOf(yield* signIn(PASSWORD))).toBe("auth.login.invalid")
      expect(
        keyOf(yield* Effect.exit(sessions.setPartnerPassword(partner.partner.partner_id, "short")))
      ).toBe("request.invalid")
      yield* sessions.setPartnerPassword(partner.partner.partner_id, PASSWORD)
      const opened = yield* signIn(PASSWORD)
      expect(Exit.isSuccess(opened)).toBe(true)
      expect(keyOf(yield* signIn(PASSWORD, undefined, true))).toBe("auth.login.second_factor_required")
      expect(keyOf(yield* signIn(PASSWORD, "cs_wrong", true))).toBe("auth.login.invalid")
      expect(Exit.isSuccess(yield* signIn(PASSWORD, partner.client_secret, true))).toBe(true)
      // A new password ends the partner's sessions.
      if (Exit.isSuccess(opened)) {
        expect(Option.isSome(yield* sessions.resolve(opened.value.token, lifetimes))).toBe(true)
        yield* sessions.setPartnerPassword(partner.partner.partner_id, "another long password")
        expect(yield* sessions.resolve(opened.value.token, lifetimes)).toEqual(Option.none())
      }
    }).pipe(Effect.provide(plainEngine))
  )
})
