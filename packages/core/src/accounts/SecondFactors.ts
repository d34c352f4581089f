/**
 * Merchants' second factors in production: TOTP (RFC 6238, an authenticator app) or codes sent
 * by e-mail. A merchant enrols one (start, then confirm with a code of the new factor), sees which
 * is enrolled, and removes or replaces it with a code of the enrolled one. `verify` checks a code
 * of the enrolled factor for anything that asks for one (payout accounts through `port`, a
 * dashboard's sign-in).
 *
 * - TOTP: the secret is stored sealed (`Crypto.encrypt`, the user id as context); a code is
 *   accepted within one step (30 s) either side of real time, and each time step once: a code of
 *   the last accepted step or of an earlier one is refused (replay).
 * - E-mail: a code is 6 random digits from the CSPRNG (`Crypto.randomBytes`), stored only as an
 *   HMAC under a random key that is itself stored sealed (a copy of the database without the
 *   server key cannot test candidates), single use, valid 10 minutes, 5 attempts.
 * - Wrong codes: 5 in a row lock the enrolled factor for 15 minutes (each verification request
 *   also counts its own attempts), 5 end an enrolment in progress.
 *
 * Every time here is real time (`RealTime`): codes are typed by people, and a sandbox test clock
 * never moves them.
 */
import { DateTime, Effect, Either, Layer, Option, Schema } from "effect"
import { Email } from "./Accounts.js"
import { UserRepository } from "./UserRepository.js"
import {
  enrolmentLifetime,
  issuer,
  lockDuration,
  makeCodes,
  maxWrongCodes,
  sealContext
} from "./secondFactorCodes.js"

import { Conflict, InvalidInput, NotFound } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { RealTime } from "../RealTime.js"
import { Transactor } from "../Transactor.js"
import { Timestamp } from "../Wire.js"
import * as Spans from "../Spans.js"
import { Authenticator } from "../auth/Authenticator.js"
import { Crypto } from "../auth/Crypto.js"
import { SecondFactor, SecondFactorError, SecondFactorRefused } from "../auth/SecondFactor.js"
import {
  FactorKind,
  SecondFactorRepository,
  type FactorStatus,
  StoredFactor
} from "../auth/SecondFactorRepository.js"

export {
  codeLifetime,
  enrolmentLifetime,
  issuer,
  lockDuration,
  maxWrongCodes,
  totpWindow
} from "./secondFactorCodes.js"

/** A code as typed: six digits. */
export const Code = Schema.String.pipe(
  Schema.pattern(/^[0-9]{6}$/, { message: () => "must be the 6 digits of the code" })
)

/** Starting an enrolment: with a factor already enrolled, a current code of it (replacing it). */
export const EnrolRequest = Schema.Struct({ current_code: Schema.optional(Code) })
export type EnrolRequest = typeof EnrolRequest.Type

/** Confirming an enrolment, or removing the enrolled factor: a code. */
export const CodeRequest = Schema.Struct({ code: Code })
export type CodeRequest = typeof CodeRequest.Type

/** What a merchant has: its enrolled factor and an enrolment in progress, each when there is one. */
export const FactorState = Schema.Struct({
  enrolled: Schema.optional(Schema.Struct({ kind: FactorKind, enrolled_timestamp: Timestamp })),
  pending: Schema.optional(Schema.Struct({ kind: FactorKind, exp_timestamp: Timestamp }))
})
export type FactorState = typeof FactorState.Type

/** A TOTP enrolment started: what the authenticator app needs, shown this once. */
export const TotpEnrolment = Schema.Struct({
  kind: Schema.Literal("totp"),
  /** The secret in base32, for apps that take it typed. */
  secret: Schema.String,
  otpauth_uri: Schema.String,
  /** The QR code of `otpauth_uri`, an SVG document. */
  qr_svg: Schema.String,
  exp_timestamp: Timestamp
})
export type TotpEnrolment = typeof TotpEnrolment.Type

/** An e-mail enrolment started: where the code went. */
export const EmailEnrolment = Schema.Struct({
  kind: Schema.Literal("email"),
  email: Email,
  exp_timestamp: Timestamp
})
export type EmailEnrolment = typeof EmailEnrolment.Type

/** A code sent to the merchant's e-mail for its enrolled factor (to remove or replace it). */
export const CodeSent = Schema.Struct({ email: Email, exp_timestamp: Timestamp })
export type CodeSent = typeof CodeSent.Type

const enrolmentSubject = (user: UserId) => `enrol:${user}`
const factorSubject = (user: UserId) => `factor:${user}`

const notEnrolled = () =>
  new SecondFactorRefused({
    key: "second_factor.not_enrolled",
    message:
      "no second factor is enrolled: enrol TOTP or e-mail codes (POST /users/{user_id}/second-factor/totp or /email) first"
  })

const refusedAsConflict = (e: SecondFactorRefused) => new Conflict({ key: e.key, message: e.message })

const wrongCode = (field: string) =>
  InvalidInput.of(field, "wrong or already used code", "second_factor.code.invalid")

export class SecondFactors extends Effect.Service<SecondFactors>()("@cobro/core/SecondFactors", {
  effect: Effect.gen(function* () {
    const repo = yield* SecondFactorRepository
    const users = yield* UserRepository
    const authenticator = yield* Authenticator
    const crypto = yield* Crypto
    const transactor = yield* Transactor
    const realTime = yield* RealTime

    const userOf = (user: UserId) =>
      Effect.flatMap(users.findById(user), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(NotFound.of("user", user))
      )

    const { sendCode, checkCode, checkTotp } = yield* makeCodes

    // --- the enrolled factor --------------------------------------------------------------------

    /**
     * Whether `code` is a right code of the user's enrolled factor now: its authenticator's
     * current code (each time step once), or the code last e-mailed for it. Wrong codes count;
     * `maxWrongCodes` in a row lock the factor for `lockDuration`.
     */
    const verify = Spans.fn("SecondFactors.verify")(function* (
      user: UserId,
      code: string,
      emailSubject: string = factorSubject(user)
    ) {
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findFactor(user, "ACTIVE", true)
          if (Option.isNone(found)) return yield* notEnrolled()
          const factor = found.value
          const now = yield* realTime.now
          if (factor.locked_until !== null && DateTime.lessThan(now, factor.locked_until)) {
            return yield* new SecondFactorRefused({
              key: "second_factor.locked",
              message: `too many wrong codes: the second factor takes codes again at ${DateTime.formatIso(factor.locked_until)}`
            })
          }
          const checked =
            factor.kind === "totp"
              ? yield* checkTotp(factor, code, now)
              : (yield* checkCode(emailSubject, user, code)) === "right"
                ? Either.right(new StoredFactor({ ...factor, failures: 0, locked_until: null }))
                : Either.left(new StoredFactor({ ...factor, failures: factor.failures + 1 }))
          const next = Either.match(checked, {
            onRight: (f) => f,
            onLeft: (f) =>
              f.failures >= maxWrongCodes
                ? new StoredFactor({
                    ...f,
                    failures: 0,
                    locked_until: DateTime.addDuration(now, lockDuration)
                  })
                : f
          })
          yield* repo.putFactor(next)
          return Either.isRight(checked)
        })
      )
    })

    const findFactor = (user: UserId, status: FactorStatus) => repo.findFactor(user, status, false)

    /** What the user has enrolled and is enrolling (an expired enrolment is none). */
    const state = Spans.fn("SecondFactors.state")(function* (user: UserId) {
      yield* userOf(user)
      const now = yield* realTime.now
      const enrolled = yield* findFactor(user, "ACTIVE")
      const pending = Option.filter(
        yield* findFactor(user, "PENDING"),
        (p) => p.exp_timestamp !== null && DateTime.lessThan(now, p.exp_timestamp)
      )
      return {
        ...Option.match(enrolled, {
          onNone: () => ({}),
          onSome: (f) => ({
            enrolled: { kind: f.kind, enrolled_timestamp: f.confirmed_timestamp ?? f.creation_timestamp }
          })
        }),
        ...Option.match(pending, {
          onNone: () => ({}),
          onSome: (f) => ({ pending: { kind: f.kind, exp_timestamp: f.exp_timestamp ?? now } })
        })
      } satisfies FactorState as FactorState
    })

    /** With a factor enrolled, a new one replaces it only with a right code of it. */
    const mayChange = (user: UserId, current_code: string | undefined) =>
      Effect.gen(function* () {
        if (Option.isNone(yield* findFactor(user, "ACTIVE"))) return
        if (current_code === undefined) {
          return yield* InvalidInput.of(
            "current_code",
            "a second factor is enrolled: send a current code of it to replace it",
            "second_factor.code.required"
          )
        }
        const right = yield* verify(user, current_code).pipe(Effect.mapError(refusedAsConflict))
        if (!right) return yield* wrongCode("current_code")
      })

    const pendingFactor = (user: UserId, kind: FactorKind, secret_sealed: string | null, now: DateTime.Utc) =>
      new StoredFactor({
        user_id: user,
        status: "PENDING",
        kind,
        secret_sealed,
        last_step: null,
        failures: 0,
        locked_until: null,
        creation_timestamp: now,
        exp_timestamp: DateTime.addDuration(now, enrolmentLifetime),
        confirmed_timestamp: null
      })

    /** Starts a TOTP enrolment (replacing one in progress): the secret, its URI and QR code. */
    const enrolTotp = Spans.fn("SecondFactors.enrolTotp")(function* (user: UserId, request: EnrolRequest) {
      const merchant = yield* userOf(user)
      yield* mayChange(user, request.current_code)
      const secret = yield* authenticator.newSecret
      const pending = pendingFactor(
        user,
        "totp",
        yield* crypto.encrypt(secret, sealContext(user)),
        yield* realTime.now
      )
      yield* repo.putFactor(pending)
      const otpauth_uri = authenticator.uri({ secret, issuer, account: merchant.email })
      return {
        kind: "totp",
        secret,
        otpauth_uri,
        qr_svg: yield* authenticator.qrSvg(otpauth_uri),
        exp_timestamp: pending.exp_timestamp!
      } satisfies TotpEnrolment as TotpEnrolment
    })

    /** Starts an e-mail enrolment (replacing one in progress): a code to the account's e-mail. */
    const enrolEmail = Spans.fn("SecondFactors.enrolEmail")(function* (user: UserId, request: EnrolRequest) {
      const merchant = yield* userOf(user)
      yield* mayChange(user, request.current_code)
      const pending = pendingFactor(user, "email", null, yield* realTime.now)
      yield* repo.putFactor(pending)
      const exp_timestamp = yield* sendCode(
        enrolmentSubject(user),
        user,
        merchant.email,
        "confirms e-mail codes as the second factor of your account"
      )
      return {
        kind: "email",
        email: merchant.email,
        exp_timestamp
      } satisfies EmailEnrolment as EmailEnrolment
    })

    /** Confirms the enrolment in progress with a code of the new factor: it becomes the enrolled one. */
    const confirm = Spans.fn("SecondFactors.confirm")(function* (user: UserId, request: CodeRequest) {
      yield* userOf(user)
      const outcome = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findFactor(user, "PENDING", true)
          const now = yield* realTime.now
          if (Option.isNone(found)) return "none" as const
          const pending = found.value
          if (pending.exp_timestamp === null || !DateTime.lessThan(now, pending.exp_timestamp)) {
            yield* repo.removeFactor(user, "PENDING")
            return "expired" as const
          }
          const checked =
            pending.kind === "totp"
              ? yield* checkTotp(pending, request.code, now)
              : Either.fromNullable(
                  (yield* checkCode(enrolmentSubject(user), user, request.code)) === "right" ? pending : null,
                  () => new StoredFactor({ ...pending, failures: pending.failures + 1 })
                )
          if (Either.isLeft(checked)) {
            if (checked.left.failures >= maxWrongCodes) {
              yield* repo.removeFactor(user, "PENDING")
              return "ended" as const
            }
            yield* repo.putFactor(checked.left)
            return "wrong" as const
          }
          yield* repo.removeFactor(user, "PENDING")
          yield* repo.putFactor(
            new StoredFactor({
              ...checked.right,
              status: "ACTIVE",
              failures: 0,
              exp_timestamp: null,
              confirmed_timestamp: now
            })
          )
          return "confirmed" as const
        })
      )
      switch (outcome) {
        case "none":
          return yield* new Conflict({
            key: "second_factor.enrolment.none",
            message:
              "no enrolment in progress: start one (POST /users/{user_id}/second-factor/totp or /email)"
          })
        case "expired":
          return yield* InvalidInput.of(
            "code",
            "the enrolment has expired: start it again",
            "second_factor.enrolment.expired"
          )
        case "ended":
          return yield* new Conflict({
            key: "second_factor.enrolment.ended",
            message: "too many wrong codes: the enrolment has ended; start it again"
          })
        case "wrong":
          return yield* wrongCode("code")
        case "confirmed":
          return yield* state(user)
      }
    })

    /** Sends a code for the enrolled e-mail factor (to remove or replace it); its expiry. */
    const sendFactorCode = Spans.fn("SecondFactors.sendFactorCode")(function* (user: UserId) {
      const merchant = yield* userOf(user)
      const found = yield* findFactor(user, "ACTIVE")
      if (Option.isNone(found)) return yield* refusedAsConflict(notEnrolled())
      if (found.value.kind !== "email") {
        return yield* new Conflict({
          key: "second_factor.code.not_sent",
          message: "the enrolled second factor is TOTP: read the current code from the authenticator app"
        })
      }
      const exp_timestamp = yield* sendCode(
        factorSubject(user),
        user,
        merchant.email,
        "authorizes a change of your account's second factor"
      )
      return { email: merchant.email, exp_timestamp } satisfies CodeSent as CodeSent
    })

    /** Removes the enrolled factor, with a right code of it. */
    const remove = Spans.fn("SecondFactors.remove")(function* (user: UserId, request: CodeRequest) {
      yield* userOf(user)
      const right = yield* verify(user, request.code).pipe(Effect.mapError(refusedAsConflict))
      if (!right) return yield* wrongCode("code")
      yield* repo.removeFactor(user, "ACTIVE")
      return yield* state(user)
    })

    /**
     * The `SecondFactor` port on the merchants' enrolled factors (production): no factor, no code
     * (`second_factor.not_enrolled`); TOTP delivers nothing (the app shows the code) and checks the
     * current code; e-mail sends a code for the request and checks that code.
     */
    const port = SecondFactor.of({
      deliver: ({ request_id, user_id }) =>
        Effect.gen(function* () {
          const found = yield* findFactor(user_id, "ACTIVE")
          if (Option.isNone(found)) return yield* notEnrolled()
          if (found.value.kind === "totp") return
          const merchant = yield* Effect.orDie(userOf(user_id))
          yield* sendCode(
            request_id,
            user_id,
            merchant.email,
            `verifies the payout accounts of request ${request_id}`
          ).pipe(Effect.mapError((e) => new SecondFactorError({ message: e.message })))
        }),
      check: ({ code, request_id, user_id }) => verify(user_id, code, request_id)
    })

    return { state, enrolTotp, enrolEmail, confirm, sendFactorCode, remove, verify, port } as const
  })
}) {}

/** `SecondFactor` on the merchants' enrolled factors (`SecondFactors.port`): production's. */
export const layerPort: Layer.Layer<SecondFactor, never, SecondFactors> = Layer.effect(
  SecondFactor,
  Effect.map(SecondFactors, (s) => s.port)
)
