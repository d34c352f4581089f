/**
 * CSRF protection of the onboarding form: a signed double-submit token. The page sets the token
 * in a `SameSite=Strict`, `HttpOnly` cookie and repeats it in a hidden field; a submission is
 * accepted only when both are present, equal (compared in constant time), signed with this
 * server's key and younger than `TOKEN_LIFETIME_SECONDS`. Another site can neither read the
 * cookie nor make the browser send it, and without the key it cannot mint a token of its own.
 *
 * Token: `<random>.<issued at, epoch seconds>.<HMAC-SHA256(key, random.issued)>`, base64url.
 */
import { Crypto, RealTime } from "@cobro/core"
import { DateTime, Effect, Encoding } from "effect"

export const COOKIE = "cobro_csrf"
export const FIELD = "csrf_token"
export const TOKEN_LIFETIME_SECONDS = 2 * 60 * 60

export interface CsrfShape {
  /** The token to use: the request's cookie when it is still valid (other tabs keep working), else a new one. */
  readonly issue: (cookie: string | undefined) => Effect.Effect<string>
  /** Whether the submitted field and cookie form a valid pair. */
  readonly verify: (field: string | undefined, cookie: string | undefined) => Effect.Effect<boolean>
}

const utf8 = new TextEncoder()

export const make = (key: Uint8Array): Effect.Effect<CsrfShape, never, Crypto.Crypto> =>
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    // A form is filled in on real time, also when the engine's clock is shifted.
    const realTime = yield* RealTime.RealTime
    const nowSeconds = Effect.map(realTime.now, (now) => Math.floor(DateTime.toEpochMillis(now) / 1000))
    const sign = (payload: string) =>
      Effect.map(crypto.hmacSha256(key, payload), (mac) => Encoding.encodeBase64Url(mac))

    /** The token's age in seconds when it is well formed and signed with our key, else null. */
    const ageOf = (token: string | undefined) =>
      Effect.gen(function* () {
        const parts = token?.split(".") ?? []
        if (parts.length !== 3) return null
        const [random, issued, mac] = parts as [string, string, string]
        if (!/^\d{1,12}$/.test(issued)) return null
        const expected = yield* sign(`${random}.${issued}`)
        if (!crypto.timingSafeEqual(utf8.encode(mac), utf8.encode(expected))) return null
        const age = (yield* nowSeconds) - Number(issued)
        return age < -60 ? null : Math.max(0, age)
      })

    const issue = (cookie: string | undefined) =>
      Effect.gen(function* () {
        // Reused while young, so a form rendered now still has most of the lifetime to be sent.
        const age = yield* ageOf(cookie)
        if (cookie !== undefined && age !== null && age < TOKEN_LIFETIME_SECONDS / 2) return cookie
        const random = Encoding.encodeBase64Url(yield* crypto.randomBytes(24))
        const issued = String(yield* nowSeconds)
        return `${random}.${issued}.${yield* sign(`${random}.${issued}`)}`
      })

    const verify = (field: string | undefined, cookie: string | undefined) =>
      Effect.gen(function* () {
        if (field === undefined || cookie === undefined) return false
        if (!crypto.timingSafeEqual(utf8.encode(field), utf8.encode(cookie))) return false
        const age = yield* ageOf(cookie)
        return age !== null && age <= TOKEN_LIFETIME_SECONDS
      })

    return { issue, verify } satisfies CsrfShape
  })
