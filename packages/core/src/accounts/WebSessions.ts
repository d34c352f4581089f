/**
 * The dashboard's web sessions: signing in with a password (and, where the host asks for it, a
 * second proof), the session a sign-in opens, and what a session token acts for.
 *
 * - A merchant signs in with its e-mail and its credential's password (`password_hash`: set at
 *   onboarding, or by the operator with `cobro users set-password`); with `secondFactor`, also a
 *   code of its enrolled factor (`SecondFactors.verify`: TOTP or e-mail codes).
 * - A partner signs in with its client id and its dashboard password (`cobro partners
 *   set-password`); with `secondFactor`, also its client secret (partners have no enrolled factor:
 *   the secret is what the API already takes as proof that a caller is the partner).
 * - A session token is 32 random bytes (base64url); only its SHA-256 is stored. It ends after
 *   `idle` without use or `absolute` after sign-in, whichever comes first, on real time
 *   (`RealTime`: a sandbox test clock never extends or ends a session), and at sign-out.
 *
 * Wrong passwords and codes answer the same `Unauthenticated` (`auth.login.invalid`) whatever was
 * wrong, after the same work (an unknown account is checked against a decoy hash); counting them
 * is the caller's (the HTTP layer's failure limits).
 */
import { DateTime, type Duration, Effect, Encoding, Option, Schema } from "effect"
import { InvalidInput, NotFound, Unauthenticated } from "../Errors.js"
import { ClientId, type PartnerId, type UserId } from "../Ids.js"
import { RealTime } from "../RealTime.js"
import * as Spans from "../Spans.js"
import { CredentialRepository } from "../auth/CredentialRepository.js"
import { Crypto } from "../auth/Crypto.js"
import { PartnerRepository } from "../auth/PartnerRepository.js"
import { hashOf, secretMatches } from "../auth/secrets.js"
import { PartnerPassword, WebSession, WebSessionRepository } from "../auth/WebSessionRepository.js"
import { Password } from "./Onboarding.js"
import { SecondFactors } from "./SecondFactors.js"
import { UserRepository } from "./UserRepository.js"

/** Who a session acts for. */
export type SessionPrincipal =
  | { readonly kind: "user"; readonly user_id: UserId; readonly name: string; readonly email: string }
  | { readonly kind: "partner"; readonly partner_id: PartnerId; readonly name: string }

/** How long a session lives: since its last use, and since sign-in. */
export interface Lifetimes {
  readonly idle: Duration.DurationInput
  readonly absolute: Duration.DurationInput
}

export interface OpenedSession {
  /** The session token: the cookie's value, returned this once. */
  readonly token: string
  readonly principal: SessionPrincipal
}

export interface ActiveSession {
  readonly principal: SessionPrincipal
  readonly creation_timestamp: DateTime.Utc
}

const loginFailed = () =>
  new Unauthenticated({ key: "auth.login.invalid", message: "the account, password or code is not valid" })

/** The second proof was needed and not given (the password was right). */
const proofMissing = () =>
  new Unauthenticated({ key: "auth.login.second_factor_required", message: "a second factor is required" })

export class WebSessions extends Effect.Service<WebSessions>()("@cobro/core/WebSessions", {
  effect: Effect.gen(function* () {
    const repo = yield* WebSessionRepository
    const users = yield* UserRepository
    const credentials = yield* CredentialRepository
    const partners = yield* PartnerRepository
    const crypto = yield* Crypto
    const realTime = yield* RealTime
    const factors = yield* Effect.serviceOption(SecondFactors)
    const decoyHash = yield* Effect.cached(
      crypto.hashPassword("decoy password, never matches a real account")
    )

    const checkPassword = (password: string, stored: Option.Option<string>) =>
      Effect.flatMap(Option.isSome(stored) ? Effect.succeed(stored.value) : decoyHash, (hash) =>
        Effect.map(crypto.verifyPassword(password, hash), (ok) => ok && Option.isSome(stored))
      )

    const open = (principal: SessionPrincipal) =>
      Effect.gen(function* () {
        const token = Encoding.encodeBase64Url(yield* crypto.randomBytes(32))
        const now = yield* realTime.now
        yield* repo.insertSession(
          new WebSession({
            session_hash: yield* hashOf(crypto, token),
            kind: principal.kind,
            user_id: principal.kind === "user" ? principal.user_id : null,
            partner_id: principal.kind === "partner" ? principal.partner_id : null,
            creation_timestamp: now,
            last_seen_timestamp: now
          })
        )
        return { token, principal } satisfies OpenedSession
      })

    /** A merchant's sign-in: e-mail and password, and a code of its second factor when `secondFactor`. */
    const signInUser = Spans.fn("WebSessions.signInUser")(function* (
      input: { readonly email: string; readonly password: string; readonly code?: string | undefined },
      options: { readonly secondFactor: boolean }
    ) {
      const user = yield* users.findByEmail(input.email.trim().toLowerCase())
      const credential = Option.isSome(user)
        ? yield* credentials.findCredential(user.value.user_id)
        : Option.none()
      const ok = yield* checkPassword(
        input.password,
        Option.flatMapNullable(credential, (c) => c.password_hash)
      )
      if (!ok || Option.isNone(user)) return yield* loginFailed()
      if (options.secondFactor) {
        if (input.code === undefined || input.code === "") return yield* proofMissing()
        if (Option.isNone(factors)) return yield* loginFailed()
        const right = yield* Effect.catchTag(
          factors.value.verify(user.value.user_id, input.code),
          "SecondFactorRefused",
          (e) => Effect.fail(new Unauthenticated({ key: e.key, message: e.message }))
        )
        if (!right) return yield* loginFailed()
      }
      return yield* open({
        kind: "user",
        user_id: user.value.user_id,
        name: user.value.name,
        email: user.value.email
      })
    })

    /** A partner's sign-in: client id and dashboard password, and its client secret when `secondFactor`. */
    const signInPartner = Spans.fn("WebSessions.signInPartner")(function* (
      input: {
        readonly client_id: string
        readonly password: string
        readonly client_secret?: string | undefined
      },
      options: { readonly secondFactor: boolean }
    ) {
      const id = Schema.decodeUnknownOption(ClientId)(input.client_id.trim())
      const partner = Option.isSome(id) ? yield* partners.findByClientId(id.value) : Option.none()
      const stored = Option.isSome(partner)
        ? yield* repo.findPartnerPassword(partner.value.partner_id)
        : Option.none<PartnerPassword>()
      const ok = yield* checkPassword(
        input.password,
        Option.map(stored, (p) => p.password_hash)
      )
      if (!ok || Option.isNone(partner)) return yield* loginFailed()
      if (options.secondFactor) {
        if (input.client_secret === undefined || input.client_secret === "") return yield* proofMissing()
        const right = yield* secretMatches(
          crypto,
          input.client_secret,
          partner.value.client_secret_sealed,
          partner.value.client_id
        )
        if (!right) return yield* loginFailed()
      }
      return yield* open({ kind: "partner", partner_id: partner.value.partner_id, name: partner.value.name })
    })

    /** What `token` acts for while its session lives (its last use moves to now); none otherwise. */
    const resolve = Spans.fn("WebSessions.resolve")(function* (token: string, lifetimes: Lifetimes) {
      if (token.length === 0 || token.length > 100) return Option.none<ActiveSession>()
      const hash = yield* hashOf(crypto, token)
      const found = yield* repo.findSession(hash)
      if (Option.isNone(found)) return Option.none<ActiveSession>()
      const session = found.value
      const now = yield* realTime.now
      const expired =
        !DateTime.lessThan(now, DateTime.addDuration(session.last_seen_timestamp, lifetimes.idle)) ||
        !DateTime.lessThan(now, DateTime.addDuration(session.creation_timestamp, lifetimes.absolute))
      if (expired) {
        yield* repo.deleteSession(hash)
        return Option.none<ActiveSession>()
      }
      const principal = yield* principalOf(session)
      if (Option.isNone(principal)) {
        yield* repo.deleteSession(hash)
        return Option.none<ActiveSession>()
      }
      yield* repo.touchSession(hash, now)
      return Option.some<ActiveSession>({
        principal: principal.value,
        creation_timestamp: session.creation_timestamp
      })
    })

    const principalOf = (session: WebSession) =>
      Effect.gen(function* () {
        if (session.kind === "user" && session.user_id !== null) {
          const user = yield* users.findById(session.user_id)
          return Option.map(user, (u): SessionPrincipal => ({
            kind: "user",
            user_id: u.user_id,
            name: u.name,
            email: u.email
          }))
        }
        if (session.kind === "partner" && session.partner_id !== null) {
          const partner = yield* partners.findById(session.partner_id)
          return Option.map(partner, (p): SessionPrincipal => ({
            kind: "partner",
            partner_id: p.partner_id,
            name: p.name
          }))
        }
        return Option.none<SessionPrincipal>()
      })

    /**
     * Forgets the sessions that `lifetimes` has ended and no request has presented since (a
     * session is also forgotten when presented after its end): how many.
     */
    const purgeExpired = Spans.fn("WebSessions.purgeExpired")(function* (lifetimes: Lifetimes) {
      const now = yield* realTime.now
      return yield* repo.deleteExpired(
        DateTime.subtractDuration(now, lifetimes.idle),
        DateTime.subtractDuration(now, lifetimes.absolute)
      )
    })

    /** Ends the session of `token` (nothing when there is none). */
    const signOut = Spans.fn("WebSessions.signOut")(function* (token: string) {
      if (token.length === 0 || token.length > 100) return
      yield* repo.deleteSession(yield* hashOf(crypto, token))
    })

    /** Sets the partner's dashboard password; its open sessions end. */
    const setPartnerPassword = Spans.fn("WebSessions.setPartnerPassword")(function* (
      partnerId: PartnerId,
      password: string
    ) {
      const checked = Schema.decodeUnknownOption(Password)(password)
      if (Option.isNone(checked)) {
        return yield* InvalidInput.of("password", "must be 8 to 256 characters")
      }
      const partner = yield* partners.findById(partnerId)
      if (Option.isNone(partner)) {
        return yield* NotFound.of("partner", partnerId)
      }
      yield* repo.putPartnerPassword(
        new PartnerPassword({
          partner_id: partnerId,
          password_hash: yield* crypto.hashPassword(checked.value),
          updated_timestamp: yield* realTime.now
        })
      )
      yield* repo.deleteSessionsOf("partner", partnerId)
    })

    /** Ends every session of a merchant (after its password or secret changed, say). */
    const endSessionsOfUser = (userId: UserId) => repo.deleteSessionsOf("user", userId)

    /** The merchant's API client id and when its secret last changed (the dashboard's Developers page). */
    const clientOf = Spans.fn("WebSessions.clientOf")(function* (userId: UserId) {
      const found = yield* credentials.findCredential(userId)
      if (Option.isNone(found)) return yield* NotFound.of("user", userId)
      return { client_id: found.value.client_id, secret_rotated_at: found.value.secret_rotated_at }
    })

    return {
      signInUser,
      signInPartner,
      resolve,
      signOut,
      purgeExpired,
      setPartnerPassword,
      endSessionsOfUser,
      clientOf
    } as const
  })
}) {}
