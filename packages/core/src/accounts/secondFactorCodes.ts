/**
 * The codes of merchants' second factors, for `SecondFactors`: the limits, the codes sent by
 * e-mail (random, stored only as a keyed HMAC, single use) and the check of a TOTP code. Every
 * time here is real time (`RealTime`).
 */
import { DateTime, Duration, Effect, Either, Encoding, Option } from "effect"
import { ProviderFailure } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { RealTime } from "../RealTime.js"
import { Transactor } from "../Transactor.js"
import { Authenticator } from "../auth/Authenticator.js"
import { Crypto } from "../auth/Crypto.js"
import { Mailer } from "../auth/Mailer.js"
import { OneTimeCode, SecondFactorRepository, StoredFactor } from "../auth/SecondFactorRepository.js"

/** Wrong codes in a row that lock an enrolled factor, or end an enrolment or an e-mailed code. */
export const maxWrongCodes = 5
/** How long an enrolled factor stays locked after `maxWrongCodes` wrong codes in a row. */
export const lockDuration = Duration.minutes(15)
/** How long an enrolment waits for its confirmation code. */
export const enrolmentLifetime = Duration.minutes(10)
/** How long an e-mailed code is valid. */
export const codeLifetime = Duration.minutes(10)
/** Steps either side of now whose TOTP code is accepted (clock drift, a code typed late). */
export const totpWindow = 1
/** The issuer an authenticator app shows beside the account. */
export const issuer = "cobro"

/** What checking a code against an e-mailed code or a TOTP factor found. */
type Outcome = "right" | "wrong" | "expired" | "spent"

export const sealContext = (user: UserId) => `second-factor:${user}`
const codeContext = (subject: string) => `second-factor-code:${subject}`

export const makeCodes = Effect.gen(function* () {
  const repo = yield* SecondFactorRepository
  const authenticator = yield* Authenticator
  const mailer = yield* Mailer
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const realTime = yield* RealTime

  /** 6 uniformly random digits from the CSPRNG (rejection sampling over 32-bit draws). */
  const randomCode: Effect.Effect<string> = Effect.flatMap(crypto.randomBytes(4), (b) => {
    const n = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0
    return n >= 4_294_000_000 ? randomCode : Effect.succeed((n % 1_000_000).toString().padStart(6, "0"))
  })

  /** `sealed key $ HMAC(key, code)`: the key random per code, sealed under the server key. */
  const hashCode = (subject: string, code: string) =>
    Effect.gen(function* () {
      const key = Encoding.encodeHex(yield* crypto.randomBytes(32))
      const mac = yield* crypto.hmacSha256(key, code)
      return `${yield* crypto.encrypt(key, codeContext(subject))}$${Encoding.encodeHex(mac)}`
    })

  const codeMatches = (stored: OneTimeCode, code: string) =>
    Effect.gen(function* () {
      const cut = stored.code_hash.lastIndexOf("$")
      const key = yield* crypto.decrypt(stored.code_hash.slice(0, cut), codeContext(stored.subject))
      const mac = Encoding.encodeHex(yield* crypto.hmacSha256(key, code))
      const encoder = new TextEncoder()
      return crypto.timingSafeEqual(encoder.encode(mac), encoder.encode(stored.code_hash.slice(cut + 1)))
    })

  /** Makes a new code for `subject` (replacing any earlier one), mails it to `to`; its expiry. */
  const sendCode = (subject: string, user: UserId, to: string, purpose: string) =>
    Effect.gen(function* () {
      const code = yield* randomCode
      const now = yield* realTime.now
      const exp_timestamp = DateTime.addDuration(now, codeLifetime)
      yield* repo.putCode(
        new OneTimeCode({
          subject,
          user_id: user,
          code_hash: yield* hashCode(subject, code),
          attempts: 0,
          creation_timestamp: now,
          exp_timestamp,
          used_timestamp: null
        })
      )
      yield* mailer
        .send({
          to,
          subject: `${issuer}: your verification code ${code}`,
          text: [
            `Your ${issuer} verification code is ${code}`,
            "",
            `It ${purpose}. It is valid for ${Duration.format(codeLifetime)} and can be used once.`,
            "If you did not ask for it, someone may hold your API credentials: rotate them."
          ].join("\n")
        })
        .pipe(
          Effect.mapError(
            (e) => new ProviderFailure({ key: "second_factor.unavailable", message: e.message })
          )
        )
      return exp_timestamp
    })

  /** Checks `code` against the code of `subject` (the user's), spending it when right. */
  const checkCode = (subject: string, user: UserId, code: string) =>
    transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* repo.findCode(subject, true)
        if (Option.isNone(found) || found.value.user_id !== user) return "wrong" as Outcome
        const stored = found.value
        const now = yield* realTime.now
        if (stored.used_timestamp !== null || stored.attempts >= maxWrongCodes) return "spent" as Outcome
        if (!DateTime.lessThan(now, stored.exp_timestamp)) return "expired" as Outcome
        if (yield* codeMatches(stored, code)) {
          yield* repo.putCode(new OneTimeCode({ ...stored, used_timestamp: now }))
          return "right" as Outcome
        }
        yield* repo.putCode(new OneTimeCode({ ...stored, attempts: stored.attempts + 1 }))
        return "wrong" as Outcome
      })
    )

  /**
   * `factor` (TOTP) after `code` at real time `now`: right (its step is newer than the last
   * accepted one, which it becomes) or wrong (another failure in a row).
   */
  const checkTotp = (factor: StoredFactor, code: string, now: DateTime.Utc) =>
    Effect.map(crypto.decrypt(factor.secret_sealed ?? "", sealContext(factor.user_id)), (secret) => {
      const step = authenticator.stepOf({
        secret,
        code,
        at: DateTime.toEpochMillis(now),
        window: totpWindow
      })
      return Option.isSome(step) && (factor.last_step === null || step.value > factor.last_step)
        ? Either.right(
            new StoredFactor({ ...factor, last_step: step.value, failures: 0, locked_until: null })
          )
        : Either.left(new StoredFactor({ ...factor, failures: factor.failures + 1 }))
    })

  return { sendCode, checkCode, checkTotp } as const
})
