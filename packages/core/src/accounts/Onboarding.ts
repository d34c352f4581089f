/**
 * Partner onboarding as the web application drives it: the partner sends the user to
 * `/authorize` with `partner_id` (and optionally `referred_user_id`, `state`, `redirect_uri`);
 * the user registers or signs in, consents, and is sent back to the partner's registered
 * redirect URL with a 5-minute `code` (and `state`) that the partner exchanges at POST /auth/tokens.
 * The web app keeps the session between steps; these operations trust the `user_id` it passes.
 */
import { DateTime, Effect, Option, Schema } from "effect"
import { Accounts, CreateUserRequest, type CreatedUser, CuitInput, DisplayName, Email } from "./Accounts.js"
import { Auth } from "../auth/Auth.js"
import { UserCredential } from "../auth/Credential.js"
import { CredentialRepository } from "../auth/CredentialRepository.js"
import { Crypto } from "../auth/Crypto.js"
import { InvalidInput, NotFound, Unauthenticated } from "../Errors.js"
import { decodeInput } from "../internal/decodeInput.js"
import { PartnerId, type UserId } from "../Ids.js"
import { Consent, type Partner } from "../auth/Partner.js"
import { PartnerRepository } from "../auth/PartnerRepository.js"
import { Principal } from "../Principal.js"
import { Transactor } from "../Transactor.js"
import { User } from "./User.js"
import { UserRepository } from "./UserRepository.js"
import { Class } from "../internal/schemaClass.js"
import * as Spans from "../Spans.js"

/** What the partner put in the `/authorize` query. */
export class AuthorizeRequest extends Class<AuthorizeRequest>("AuthorizeRequest")({
  partner_id: PartnerId,
  /** The partner's own id for the user, returned at code exchange. */
  referred_user_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  /** Opaque to us; sent back on the redirect (CSRF protection for the partner). */
  state: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  /** When sent, it must equal the partner's registered redirect URL exactly. */
  redirect_uri: Schema.optional(Schema.String)
}) {}

export const Password = Schema.String.pipe(
  Schema.minLength(8, { message: () => "must be at least 8 characters" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" })
)

export class RegisterRequest extends Class<RegisterRequest>("RegisterRequest")({
  partner_id: PartnerId,
  email: Email,
  name: DisplayName,
  cuit: CuitInput,
  password: Password
}) {}

export class SignInRequest extends Class<SignInRequest>("SignInRequest")({
  email: Email,
  password: Schema.String
}) {}

export const decodeAuthorizeRequest = decodeInput(AuthorizeRequest)
export const decodeRegisterRequest = decodeInput(RegisterRequest)
export const decodeSignInRequest = decodeInput(SignInRequest)

/** What the consent page shows about the partner. */
export interface PartnerDisplay {
  readonly partner_id: PartnerId
  readonly name: string
  readonly slug: string
}

export interface Redirect {
  /** The partner's registered redirect URL with `code` (and `state`) in its query. */
  readonly redirect_url: string
  readonly code: string
  readonly expires_at: DateTime.Utc
}

/** A merchant a partner may act for: its consent and its account. */
export interface PartnerMerchant {
  readonly consent: Consent
  readonly user: User
}

const loginFailed = () =>
  new Unauthenticated({ key: "auth.login.invalid", message: "the email or password is not valid" })

export class Onboarding extends Effect.Service<Onboarding>()("@cobro/core/Onboarding", {
  effect: Effect.gen(function* () {
    const accounts = yield* Accounts
    const auth = yield* Auth
    const users = yield* UserRepository
    const credentials = yield* CredentialRepository
    const partners = yield* PartnerRepository
    const crypto = yield* Crypto
    const transactor = yield* Transactor
    /** Verified against when the email is unknown, so both failures take the same time. */
    const decoyHash = yield* Effect.cached(
      crypto.hashPassword("decoy password, never matches a real account")
    )

    const checkRedirect = (partner: Partner, request: AuthorizeRequest) =>
      request.redirect_uri === undefined || request.redirect_uri === partner.redirect_url
        ? Effect.void
        : Effect.fail(InvalidInput.of("redirect_uri", "does not match the partner's registered redirect URL"))

    /** Step 1: the partner and the request are valid; what the pages show. */
    const authorize = Spans.fn("Onboarding.authorize")(function* (request: AuthorizeRequest) {
      const partner = yield* auth.getPartner(request.partner_id)
      yield* checkRedirect(partner, request)
      return {
        partner_id: partner.partner_id,
        name: partner.name,
        slug: partner.slug
      } satisfies PartnerDisplay
    })

    /** Step 2a: a new merchant (PENDING) onboarded by the partner, with a password for the web app. */
    const register = Spans.fn("Onboarding.register")(function* (request: RegisterRequest) {
      const passwordHash = yield* crypto.hashPassword(request.password)
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const created: CreatedUser = yield* accounts.createUser(
            new CreateUserRequest({
              name: request.name,
              email: request.email,
              cuit: request.cuit,
              partner_id: request.partner_id
            })
          )
          const credential = yield* credentials.findCredentialForUpdate(created.user.user_id)
          if (Option.isSome(credential)) {
            yield* credentials.updateCredential(
              new UserCredential({ ...credential.value, password_hash: passwordHash })
            )
          }
          return created
        })
      )
    })

    /** Step 2b: an existing merchant signs in with email and password. */
    const signIn = Spans.fn("Onboarding.signIn")(function* (request: SignInRequest) {
      const user = yield* users.findByEmail(request.email)
      const credential = Option.isSome(user)
        ? yield* credentials.findCredential(user.value.user_id)
        : Option.none<UserCredential>()
      const stored = Option.flatMapNullable(credential, (c) => c.password_hash)
      const ok = yield* crypto.verifyPassword(
        request.password,
        Option.isSome(stored) ? stored.value : yield* decoyHash
      )
      if (!ok || Option.isNone(user) || Option.isNone(stored)) return yield* loginFailed()
      return user.value
    })

    /**
     * Step 3: the signed-in user consents. Records the consent, makes the partner the user's
     * onboarding partner if it has none yet, issues the code and builds the redirect.
     */
    const consent = Spans.fn("Onboarding.consent")(function* (userId: UserId, request: AuthorizeRequest) {
      const partner = yield* auth.getPartner(request.partner_id)
      yield* checkRedirect(partner, request)
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const found = yield* users.findByIdForUpdate(userId)
          if (Option.isNone(found)) return yield* NotFound.of("user", userId)
          const user = found.value
          if (user.partner_id === null) {
            yield* Effect.orDie(
              users.update(
                new User({ ...user, partner_id: partner.partner_id, last_modified_timestamp: now })
              )
            )
          }
          yield* partners.saveConsent(
            new Consent({ partner_id: partner.partner_id, user_id: userId, granted_at: now })
          )
          const { code, expires_at } = yield* auth.issueCode(partner.partner_id, userId, {
            referred_user_id: request.referred_user_id,
            state: request.state
          })
          return {
            redirect_url: redirectTo(partner.redirect_url, code, request.state),
            code,
            expires_at
          } satisfies Redirect
        })
      )
    })

    /**
     * The merchants that consented to the partner (its grants), newest consent first, each with
     * its account as stored: what a signed-in partner's dashboard lists.
     */
    const merchantsOf = Spans.fn("Onboarding.merchantsOf")(function* (partnerId: PartnerId) {
      const consents = yield* partners.listConsents(partnerId)
      const found = yield* Effect.forEach(consents, (consent) =>
        Effect.map(
          users.findById(consent.user_id),
          Option.map((user): PartnerMerchant => ({ consent, user }))
        )
      )
      return found.flatMap(Option.toArray)
    })

    /**
     * The principal a partner acts as for `userId`, as a `PAR-` token of it would: only with the
     * merchant's consent; without one the merchant does not exist for the partner (`NotFound`).
     */
    const actFor = Spans.fn("Onboarding.actFor")(function* (partnerId: PartnerId, userId: UserId) {
      const consent = yield* partners.findConsent(partnerId, userId)
      if (Option.isNone(consent)) return yield* NotFound.of("user", userId)
      return Principal.Partner({ user_id: userId, partner_id: partnerId })
    })

    return { authorize, register, signIn, consent, merchantsOf, actFor } as const
  })
}) {}

/** `base` with `code` and `state` set in its query; other query parameters are kept. */
export const redirectTo = (base: string, code: string, state: string | undefined): string => {
  const url = new URL(base)
  url.searchParams.set("code", code)
  if (state !== undefined) url.searchParams.set("state", state)
  return url.toString()
}
