/**
 * Who is calling, and proof of it: user tokens from a client credential, partner registration,
 * authorization codes and their exchange for `PAR-` tokens, and turning a bearer token into the
 * `Principal` every service scopes its work to. Secrets are compared in constant time; tokens
 * and codes are stored only as SHA-256 hashes.
 */
import { BigDecimal, DateTime, Duration, Effect, Either, Option, Schema } from "effect"
import { AccessToken, partnerTokenPrefix, UserCredential, userTokenPrefix } from "./Credential.js"
import { CredentialRepository } from "./CredentialRepository.js"
import { Crypto } from "./Crypto.js"
import { EngineConfig } from "../EngineConfig.js"
import { InvalidInput, NotFound, Unauthenticated } from "../Errors.js"
import { ClientId, PartnerId, type UserId } from "../Ids.js"
import { decodeInput } from "../internal/decodeInput.js"
import { newId } from "../internal/ids.js"
import { hashOf, newClientId, newSecret, secretMatches } from "./secrets.js"
import { AuthorizationCode, codeLifetimeMinutes, Partner, PartnerSlug, slugify } from "./Partner.js"
import { PartnerRepository } from "./PartnerRepository.js"
import { Principal } from "../Principal.js"
import { RealTime } from "../RealTime.js"
import { Transactor } from "../Transactor.js"
import { DisplayName, HttpUrl, Rate, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"
import * as WebhookDestination from "../webhooks/WebhookDestination.js"
import * as Spans from "../Spans.js"

const zero = BigDecimal.unsafeFromNumber(0)
const one = BigDecimal.unsafeFromNumber(1)

/** POST /users/{id}/tokens body. */
export class TokenRequest extends Class<TokenRequest>("TokenRequest")({
  client_id: Schema.String,
  client_secret: Schema.String
}) {}

/** POST /users/{id}/tokens `data`. */
export class UserToken extends Class<UserToken>("UserToken")({
  token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  /** Seconds until `expiration_timestamp`. */
  expires_in: Schema.Int,
  expiration_timestamp: Timestamp
}) {}

/** POST /auth/tokens body. */
export class CodeExchangeRequest extends Class<CodeExchangeRequest>("CodeExchangeRequest")({
  code: Schema.String,
  client_id: Schema.String,
  client_secret: Schema.String
}) {}

/** POST /auth/tokens `data`; `token` repeats `access_token` for existing clients. */
export class PartnerGrant extends Class<PartnerGrant>("PartnerGrant")({
  access_token: Schema.String,
  token: Schema.String,
  user_id: Schema.String,
  referred_user_id: Schema.optional(Schema.String)
}) {}

export class RegisterPartnerRequest extends Class<RegisterPartnerRequest>("RegisterPartnerRequest")({
  name: DisplayName,
  redirect_url: HttpUrl,
  webhook_url: Schema.optional(HttpUrl),
  /** Derived from the name when absent. */
  slug: Schema.optional(PartnerSlug),
  /** A fraction between 0 and 1; 0 when absent. */
  commission: Schema.optional(
    Rate.pipe(Schema.betweenBigDecimal(zero, one, { message: () => "must be between 0 and 1" }))
  )
}) {}

export class RevokeRequest extends Class<RevokeRequest>("RevokeRequest")({
  token: Schema.String,
  client_id: Schema.String,
  client_secret: Schema.String
}) {}

/** Decodes a partner registration; a bad URL or slug is `InvalidInput` naming the field. */
export const decodeRegisterPartnerRequest = decodeInput(RegisterPartnerRequest)

/** A client id and secret, shown once; only the sealed secret is stored. */
export interface ClientCredentials {
  readonly client_id: ClientId
  readonly client_secret: string
}

const invalidCredentials = () =>
  new Unauthenticated({
    key: "auth.credentials.invalid",
    message: "the client_id or client_secret is not valid"
  })
const invalidToken = () =>
  new Unauthenticated({ key: "auth.token.invalid", message: "the token is not valid or was revoked" })
const invalidCode = () =>
  new Unauthenticated({ key: "auth.code.invalid", message: "the authorization code is not valid" })

export class Auth extends Effect.Service<Auth>()("@cobro/core/Auth", {
  effect: Effect.gen(function* () {
    const credentials = yield* CredentialRepository
    const partners = yield* PartnerRepository
    const crypto = yield* Crypto
    const transactor = yield* Transactor
    const config = yield* EngineConfig
    const checkWebhookUrl = yield* WebhookDestination.checker
    // Tokens, codes and secrets live on real time, also when the engine's clock is shifted.
    const realTime = yield* RealTime

    const expiryOf = (now: DateTime.Utc, lifetime: Duration.Duration) =>
      Duration.isFinite(lifetime) ? DateTime.addDuration(now, lifetime) : null

    /** Mints a token of `prefix`, stores its hash, returns the text and the stored row. */
    const mintToken = (fields: Omit<AccessToken, "token_hash" | "isActiveAt">, prefix: string) =>
      Effect.gen(function* () {
        const text = yield* newSecret(crypto, prefix)
        const row = new AccessToken({ ...fields, token_hash: yield* hashOf(crypto, text) })
        yield* Effect.orDie(credentials.insertToken(row))
        return { text, row } as const
      })

    /** The partner whose client id and secret these are; `Unauthenticated` otherwise. */
    const authenticatePartner = (clientId: string, clientSecret: string) =>
      Effect.gen(function* () {
        // Not a client id cobro could have issued (empty, a control character, too long): unknown.
        const id = Schema.decodeUnknownOption(ClientId)(clientId)
        if (Option.isNone(id)) return yield* invalidCredentials()
        const found = yield* partners.findByClientId(id.value)
        if (Option.isNone(found)) return yield* invalidCredentials()
        const ok = yield* secretMatches(
          crypto,
          clientSecret,
          found.value.client_secret_sealed,
          found.value.client_id
        )
        return ok ? found.value : yield* invalidCredentials()
      })

    /** POST /users/{id}/tokens: a fresh user token for a valid credential of that user. */
    const issueUserToken = Spans.fn("Auth.issueUserToken")(function* (userId: UserId, request: TokenRequest) {
      const found = yield* credentials.findCredential(userId)
      if (Option.isNone(found) || found.value.client_id !== request.client_id)
        return yield* invalidCredentials()
      const credential = found.value
      if (
        !(yield* secretMatches(
          crypto,
          request.client_secret,
          credential.client_secret_sealed,
          credential.client_id
        ))
      ) {
        return yield* invalidCredentials()
      }
      const now = yield* realTime.now
      const expires = DateTime.addDuration(now, config.userTokenLifetime)
      const { text } = yield* mintToken(
        {
          kind: "user",
          user_id: userId,
          partner_id: null,
          code_hash: null,
          creation_timestamp: now,
          expires_at: expires,
          revoked_at: null
        },
        userTokenPrefix
      )
      return new UserToken({
        token: text,
        token_type: "Bearer",
        expires_in: Math.floor(Duration.toSeconds(config.userTokenLifetime)),
        expiration_timestamp: expires
      })
    })

    /** A bearer token (without "Bearer ") to the principal it acts for; `Unauthenticated` if unknown, revoked or expired. */
    const authenticate = Spans.fn("Auth.authenticate")(function* (token: string) {
      if (token.length === 0) return yield* invalidToken()
      const found = yield* credentials.findToken(yield* hashOf(crypto, token))
      if (Option.isNone(found) || found.value.revoked_at !== null) return yield* invalidToken()
      const row = found.value
      if (!row.isActiveAt(yield* realTime.now)) {
        return yield* new Unauthenticated({ key: "auth.token.expired", message: "the token has expired" })
      }
      return row.kind === "partner" && row.partner_id !== null
        ? Principal.Partner({ user_id: row.user_id, partner_id: row.partner_id })
        : Principal.User({ user_id: row.user_id })
    })

    /** A new client secret for the user; the old one stops working and the user's tokens are revoked. */
    const rotateSecret = Spans.fn("Auth.rotateSecret")(function* (userId: UserId) {
      const secret = yield* newSecret(crypto, "cs_")
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const found = yield* credentials.findCredentialForUpdate(userId)
          if (Option.isNone(found)) return yield* NotFound.of("user", userId)
          const now = yield* realTime.now
          const current = found.value
          yield* credentials.updateCredential(
            new UserCredential({
              ...current,
              client_secret_sealed: yield* crypto.encrypt(secret, current.client_id),
              secret_rotated_at: now
            })
          )
          yield* credentials.revokeUserTokens(userId, now)
          return { client_id: current.client_id, client_secret: secret } satisfies ClientCredentials
        })
      )
    })

    /** Registers a partner ("with support": the CLI); its secret is shown this once. */
    const registerPartner = Spans.fn("Auth.registerPartner")(function* (request: RegisterPartnerRequest) {
      yield* checkWebhookUrl("webhook_url", request.webhook_url)
      const slug = request.slug ?? slugify(request.name)
      if (!Schema.is(PartnerSlug)(slug)) {
        return yield* InvalidInput.of("slug", "no slug can be derived from the name; send one")
      }
      const clientId = yield* newClientId(crypto)
      const secret = yield* newSecret(crypto, "cs_")
      const now = yield* realTime.now
      const partner = new Partner({
        partner_id: PartnerId.make(yield* newId("par")),
        name: request.name,
        slug,
        commission: request.commission ?? zero,
        redirect_url: request.redirect_url,
        webhook_url: request.webhook_url ?? null,
        client_id: clientId,
        client_secret_sealed: yield* crypto.encrypt(secret, clientId),
        creation_timestamp: now,
        secret_rotated_at: now
      })
      yield* partners.insert(partner)
      return { partner, client_id: clientId, client_secret: secret } as const
    })

    const getPartner = Spans.fn("Auth.getPartner")(function* (partnerId: PartnerId) {
      return yield* Effect.flatMap(partners.findById(partnerId), (p) =>
        Option.isSome(p) ? Effect.succeed(p.value) : Effect.fail(NotFound.of("partner", partnerId))
      )
    })

    /** A new client secret for the partner; the old one stops working (its tokens stay valid). */
    const rotatePartnerSecret = Spans.fn("Auth.rotatePartnerSecret")(function* (partnerId: PartnerId) {
      const secret = yield* newSecret(crypto, "cs_")
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const found = yield* partners.findByIdForUpdate(partnerId)
          if (Option.isNone(found)) return yield* NotFound.of("partner", partnerId)
          const partner = found.value
          yield* partners.update(
            new Partner({
              ...partner,
              client_secret_sealed: yield* crypto.encrypt(secret, partner.client_id),
              secret_rotated_at: yield* realTime.now
            })
          )
          return { client_id: partner.client_id, client_secret: secret } satisfies ClientCredentials
        })
      )
    })

    /**
     * A single-use code, valid 5 minutes, bound to the partner and the user (call it after the
     * user consented). Only its hash is stored; the text goes to the partner on the redirect.
     */
    const issueCode = Spans.fn("Auth.issueCode")(function* (
      partnerId: PartnerId,
      userId: UserId,
      options: { readonly referred_user_id?: string | undefined; readonly state?: string | undefined } = {}
    ) {
      yield* getPartner(partnerId)
      const code = yield* newSecret(crypto)
      const now = yield* realTime.now
      const row = new AuthorizationCode({
        code_hash: yield* hashOf(crypto, code),
        partner_id: partnerId,
        user_id: userId,
        referred_user_id: options.referred_user_id ?? null,
        state: options.state ?? null,
        creation_timestamp: now,
        expires_at: DateTime.addDuration(now, Duration.minutes(codeLifetimeMinutes)),
        used_at: null
      })
      yield* Effect.orDie(partners.insertCode(row))
      return { code, expires_at: row.expires_at } as const
    })

    /**
     * POST /auth/tokens: the code, with the partner's own credentials, for a `PAR-` token acting
     * for the code's user. A code works once; presenting it again revokes what it was exchanged
     * for (it may have leaked) and fails.
     */
    const exchangeCode = Spans.fn("Auth.exchangeCode")(function* (request: CodeExchangeRequest) {
      const partner = yield* authenticatePartner(request.client_id, request.client_secret)
      const codeHash = yield* hashOf(crypto, request.code)
      const outcome = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const now = yield* realTime.now
          const found = yield* partners.findCodeForUpdate(codeHash)
          if (Option.isNone(found) || found.value.partner_id !== partner.partner_id) {
            return Either.left(invalidCode())
          }
          const code = found.value
          if (code.used_at !== null) {
            // Committed even though the exchange fails: the revocation must stick.
            yield* credentials.revokeTokensOfCode(codeHash, now)
            return Either.left(
              new Unauthenticated({
                key: "auth.code.used",
                message: "the authorization code was already used"
              })
            )
          }
          if (code.isExpiredAt(now)) {
            return Either.left(
              new Unauthenticated({ key: "auth.code.expired", message: "the authorization code has expired" })
            )
          }
          yield* partners.updateCode(new AuthorizationCode({ ...code, used_at: now }))
          const { text } = yield* mintToken(
            {
              kind: "partner",
              user_id: code.user_id,
              partner_id: partner.partner_id,
              code_hash: codeHash,
              creation_timestamp: now,
              expires_at: expiryOf(now, config.partnerTokenLifetime),
              revoked_at: null
            },
            partnerTokenPrefix
          )
          return Either.right(
            new PartnerGrant({
              access_token: text,
              token: text,
              user_id: code.user_id,
              ...(code.referred_user_id === null ? {} : { referred_user_id: code.referred_user_id })
            })
          )
        })
      )
      return yield* outcome
    })

    /**
     * Revokes a partner token, authenticated with the partner's credentials. Like RFC 7009, a
     * token that is unknown, already revoked or another partner's is left alone without error.
     */
    const revokePartnerToken = Spans.fn("Auth.revokePartnerToken")(function* (request: RevokeRequest) {
      const partner = yield* authenticatePartner(request.client_id, request.client_secret)
      const hash = yield* hashOf(crypto, request.token)
      const found = yield* credentials.findToken(hash)
      if (
        Option.isSome(found) &&
        found.value.kind === "partner" &&
        found.value.partner_id === partner.partner_id
      ) {
        yield* credentials.revokeToken(hash, yield* realTime.now)
      }
    })

    return {
      issueUserToken,
      authenticate,
      rotateSecret,
      registerPartner,
      getPartner,
      rotatePartnerSecret,
      issueCode,
      exchangeCode,
      revokePartnerToken
    } as const
  })
}) {}
