/**
 * `SecondFactors` on test time (TestClock; its codes follow `RealTime`, here the test clock): with
 * the server's `otpauth` adapter and its SMTP mailer against a real SMTP server, over the engine's
 * memory storage. Expiry of e-mailed codes and of enrolments, TOTP's drift window, and the lock
 * after wrong codes in a row, which ends after 15 minutes.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Engine, Ids, Money, SecondFactors, User } from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { DateTime, Effect, Either, Layer, Option, Redacted, TestClock } from "effect"
import type { AddressInfo } from "node:net"
import * as OTPAuth from "otpauth"
import { SMTPServer } from "smtp-server"
import * as Authenticator from "../src/Authenticator.js"
import * as NodeCrypto from "../src/NodeCrypto.js"
import * as SmtpMailer from "../src/SmtpMailer.js"

const user = Ids.UserId.make("u1")
const email = "uno@example.com"

/** A real SMTP server on loopback; the codes of the messages it received, oldest first. */
const smtp = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly codes: Array<string>; readonly server: SMTPServer }>(
    (resume) => {
      const codes: Array<string> = []
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS"],
        logger: false,
        onData(stream, _session, callback) {
          let raw = ""
          stream.on("data", (chunk: Buffer) => (raw += chunk.toString()))
          stream.on("end", () => {
            codes.push(/verification code is (\d{6})/.exec(raw)?.[1] ?? "none")
            callback()
          })
        }
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
            codes,
            server
          })
        )
      )
    }
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

const services = (url: string) =>
  SecondFactors.SecondFactors.Default.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Authenticator.layer,
        SmtpMailer.layerSmtp({ url: Redacted.make(url), from: Option.none() }, "cobro <no-reply@cobro.test>"),
        NodeCrypto.layer(new Uint8Array(32).fill(7))
      )
    ),
    Layer.provideMerge(Engine.layerMemoryStorage)
  )

/** Runs `body` with the service over fresh storage, a merchant `u1` and the SMTP server's codes. */
const run = <A, E>(body: (codes: Array<string>) => Effect.Effect<A, E, SecondFactors.SecondFactors>) =>
  Effect.gen(function* () {
    const server = yield* smtp
    return yield* Effect.gen(function* () {
      const now = yield* DateTime.now
      yield* (yield* UserRepository.UserRepository).insert(
        new User.User({
          user_id: user,
          name: "Tienda Uno",
          email,
          cuit: BankAccount.makeCuit("30", "71234567"),
          account_status: "ACTIVE",
          alias_prefix: null,
          cancellation_period: null,
          cancellation_period_minutes: null,
          automatic_cancellation: false,
          transfer_tolerance: Money.zero("ARS"),
          payout_schedule: null,
          partner_id: null,
          creation_timestamp: now,
          last_modified_timestamp: now
        })
      )
      return yield* body(server.codes)
    }).pipe(Effect.provide(services(server.url)))
  })

/** The failure's key, or "succeeded". */
const keyOf = <A, E extends { readonly key: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), Either.match({ onLeft: (e) => e.key, onRight: () => "succeeded" }))

const now = Effect.map(DateTime.now, DateTime.toEpochMillis)

describe("SecondFactors on test time", () => {
  it.scoped("an e-mailed code expires after 10 minutes, and so does an enrolment", () =>
    run((codes) =>
      Effect.gen(function* () {
        const factors = yield* SecondFactors.SecondFactors
        yield* factors.enrolEmail(user, {})
        yield* TestClock.adjust("10 minutes")
        expect(yield* keyOf(factors.confirm(user, { code: codes.at(-1)! }))).toBe(
          "second_factor.enrolment.expired"
        )
        expect(yield* keyOf(factors.confirm(user, { code: codes.at(-1)! }))).toBe(
          "second_factor.enrolment.none"
        )
        // Enrolled with a fresh code.
        yield* factors.enrolEmail(user, {})
        yield* TestClock.adjust("9 minutes")
        expect(yield* keyOf(factors.confirm(user, { code: codes.at(-1)! }))).toBe("succeeded")
        // A code of the enrolled factor, expired: refused, and the factor stays.
        yield* factors.sendFactorCode(user)
        const code = codes.at(-1)!
        yield* TestClock.adjust("10 minutes")
        expect(yield* keyOf(factors.remove(user, { code }))).toBe("second_factor.code.invalid")
        expect((yield* factors.state(user)).enrolled?.kind).toBe("email")
        // A new one works, once.
        yield* factors.sendFactorCode(user)
        const fresh = codes.at(-1)!
        expect(yield* factors.verify(user, fresh)).toBe(true)
        expect(yield* factors.verify(user, fresh)).toBe(false)
        expect(codes.every((c) => /^\d{6}$/.test(c))).toBe(true)
        expect(new Set(codes).size).toBe(codes.length)
      })
    )
  )

  it.scoped("TOTP: one step of drift accepted, two refused; five wrong codes lock it for 15 minutes", () =>
    run(() =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_800_000_000_000)
        const factors = yield* SecondFactors.SecondFactors
        const started = yield* factors.enrolTotp(user, {})
        const totp = OTPAuth.URI.parse(started.otpauth_uri) as OTPAuth.TOTP
        const at = (steps: number) => Effect.map(now, (t) => totp.generate({ timestamp: t + steps * 30_000 }))
        // Two steps behind: refused; one behind: accepted.
        expect(yield* keyOf(factors.confirm(user, { code: yield* at(-2) }))).toBe(
          "second_factor.code.invalid"
        )
        expect(yield* keyOf(factors.confirm(user, { code: yield* at(-1) }))).toBe("succeeded")
        expect(yield* factors.verify(user, yield* at(2))).toBe(false)
        expect(yield* factors.verify(user, yield* at(1))).toBe(true)
        // Now the step after now is spent: the current and the previous steps are refused too.
        expect(yield* factors.verify(user, yield* at(0))).toBe(false)
        yield* TestClock.adjust("60 seconds")
        // Five wrong in a row (the replay above, four here): locked, even for a right code.
        for (let i = 0; i < 4; i++) expect(yield* factors.verify(user, "000000")).toBe(false)
        expect(yield* keyOf(factors.verify(user, yield* at(0)))).toBe("second_factor.locked")
        yield* TestClock.adjust("14 minutes")
        expect(yield* keyOf(factors.verify(user, yield* at(0)))).toBe("second_factor.locked")
        yield* TestClock.adjust("1 minute")
        expect(yield* factors.verify(user, yield* at(0))).toBe(true)
      })
    )
  )
})
