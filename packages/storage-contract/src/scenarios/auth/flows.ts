/** Auth: the engine flows over the repository. */
import { expect } from "@effect/vitest"
import { Accounts, Auth, BankAccount, Crypto, Onboarding, Principal } from "@cobro/core"
import { CredentialRepository, PartnerRepository } from "@cobro/core/ports"
import { DateTime, Duration, Effect, Either, Option, TestClock } from "effect"
import type { Scenario } from "../../Scenario.js"
import { expectLedgerOk, requestWith } from "../fixtures.js"
import { sha256Hex, wirePartner } from "./helpers.js"

const merchantRequest = requestWith(Accounts.CreateUserRequest, {
  name: "Tienda Uno",
  email: "uno@example.com",
  cuit: "20-12345678-6"
})

const partnerRequest = requestWith(Auth.RegisterPartnerRequest, {
  name: "Socio Uno",
  redirect_url: "https://socio.example.com/callback",
  webhook_url: "https://socio.example.com/hooks"
})

/** A merchant created the way the CLI does. */
const createMerchant = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Accounts.Accounts, (accounts) => accounts.createUser(merchantRequest(fields)))

const createPartner = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Auth.Auth, (auth) => auth.registerPartner(partnerRequest(fields)))

type RegisteredPartner = Effect.Effect.Success<ReturnType<typeof createPartner>>

const exchange = (registered: RegisteredPartner, text: string) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code: text,
        client_id: registered.client_id,
        client_secret: registered.client_secret
      })
    )
  )

export const authFlowScenarios: ReadonlyArray<Scenario> = [
  {
    name: "auth flow: create user → user token → authenticate; rotation revokes; tokens expire",
    run: Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2026, 0, 1, 9))
      const auth = yield* Auth.Auth
      const created = yield* createMerchant()
      const request = new Auth.TokenRequest({
        client_id: created.client_id,
        client_secret: created.client_secret
      })
      const issued = yield* auth.issueUserToken(created.user.user_id, request)
      expect(issued.expires_in).toBe(3600)
      expect(DateTime.formatIso(issued.expiration_timestamp)).toBe("2026-01-01T10:00:00.000Z")

      const repo = yield* CredentialRepository.CredentialRepository
      const row = Option.getOrThrow(yield* repo.findCredential(created.user.user_id))
      expect(JSON.stringify(row)).not.toContain(created.client_secret)
      expect(yield* (yield* Crypto.Crypto).decrypt(row.client_secret_sealed, created.client_id)).toBe(
        created.client_secret
      )
      expect(yield* repo.findToken(issued.token)).toEqual(Option.none())
      const stored = Option.getOrThrow(yield* repo.findToken(yield* sha256Hex(issued.token)))
      expect([stored.kind, stored.user_id, stored.expires_at]).toEqual([
        "user",
        created.user.user_id,
        issued.expiration_timestamp
      ])
      expect(yield* auth.authenticate(issued.token)).toEqual(
        Principal.Principal.User({ user_id: created.user.user_id })
      )
      const wrong = yield* Effect.flip(
        auth.issueUserToken(
          created.user.user_id,
          new Auth.TokenRequest({ ...request, client_secret: "cs_nope" })
        )
      )
      expect(wrong.key).toBe("auth.credentials.invalid")
      // A second user cannot take the first one's email.
      const taken = yield* Effect.flip(
        createMerchant({ email: "UNO@example.com", cuit: BankAccount.makeCuit("20", "23456789") })
      )
      expect(taken.key).toBe("user.email.taken")

      yield* TestClock.adjust(Duration.millis(3_600_000 - 1))
      expect((yield* auth.authenticate(issued.token))._tag).toBe("User")
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Effect.flip(auth.authenticate(issued.token))).key).toBe("auth.token.expired")

      const live = (yield* auth.issueUserToken(created.user.user_id, request)).token
      const rotated = yield* auth.rotateSecret(created.user.user_id)
      expect(rotated.client_id).toBe(created.client_id)
      expect((yield* Effect.flip(auth.authenticate(live))).key).toBe("auth.token.invalid")
      expect((yield* Effect.flip(auth.issueUserToken(created.user.user_id, request))).key).toBe(
        "auth.credentials.invalid"
      )
      const fresh = yield* auth.issueUserToken(
        created.user.user_id,
        new Auth.TokenRequest({ client_id: created.client_id, client_secret: rotated.client_secret })
      )
      expect((yield* auth.authenticate(fresh.token))._tag).toBe("User")
      yield* expectLedgerOk
    })
  },
  {
    name: "auth flow: partner registration → register → consent → code → exchange → the partner token reads the account",
    run: Effect.gen(function* () {
      const auth = yield* Auth.Auth
      const onboarding = yield* Onboarding.Onboarding
      const accounts = yield* Accounts.Accounts
      const registered = yield* createPartner({ name: "Mi Socio S.A.", commission: 0.02 })
      const partnerId = registered.partner.partner_id
      expect(registered.partner.slug).toBe("mi-socio-s-a")
      const stored = yield* (yield* PartnerRepository.PartnerRepository).findByClientId(registered.client_id)
      expect(wirePartner(stored)).toEqual(wirePartner(registered.partner))
      expect(JSON.stringify(stored)).not.toContain(registered.client_secret)
      const slugTaken = yield* Effect.flip(createPartner({ name: "MI SOCIO S.A." }))
      expect(slugTaken).toMatchObject({ _tag: "Conflict", key: "partner.slug.taken" })

      const request = yield* Onboarding.decodeAuthorizeRequest({
        partner_id: partnerId,
        referred_user_id: "socio-user-42",
        state: "xyz"
      })
      const created = yield* onboarding.register(
        yield* Onboarding.decodeRegisterRequest({
          partner_id: partnerId,
          email: "ana@example.com",
          name: "Ana Tienda",
          cuit: "27-12345678-0",
          password: "correct horse battery"
        })
      )
      const signedIn = yield* onboarding.signIn(
        new Onboarding.SignInRequest({ email: "ana@example.com", password: "correct horse battery" })
      )
      expect(signedIn.user_id).toBe(created.user.user_id)
      const redirect = yield* onboarding.consent(created.user.user_id, request)
      expect(new URL(redirect.redirect_url).searchParams.get("state")).toBe("xyz")
      expect(
        Option.isSome(
          yield* (yield* PartnerRepository.PartnerRepository).findConsent(partnerId, created.user.user_id)
        )
      ).toBe(true)

      const grant = yield* exchange(registered, redirect.code)
      expect(grant.user_id).toBe(created.user.user_id)
      expect(grant.referred_user_id).toBe("socio-user-42")
      const principal = yield* auth.authenticate(grant.access_token)
      expect(principal).toEqual(
        Principal.Principal.Partner({ user_id: created.user.user_id, partner_id: partnerId })
      )
      const account = yield* accounts.getAccount(principal, created.user.user_id)
      expect(account.partner_config?.partner_id).toBe(partnerId)

      // Partner tokens do not expire; the partner revokes its own token.
      yield* TestClock.adjust("3650 days")
      expect((yield* auth.authenticate(grant.access_token))._tag).toBe("Partner")
      yield* auth.revokePartnerToken(
        new Auth.RevokeRequest({
          token: grant.access_token,
          client_id: registered.client_id,
          client_secret: registered.client_secret
        })
      )
      expect((yield* Effect.flip(auth.authenticate(grant.access_token))).key).toBe("auth.token.invalid")
      yield* expectLedgerOk
    })
  },
  {
    name: "auth flow: a code works once — reuse revokes, concurrent exchanges give one token, expiry after 5 minutes",
    run: Effect.gen(function* () {
      const auth = yield* Auth.Auth
      const registered = yield* createPartner()
      const other = yield* createPartner({ name: "Otro" })
      const partnerId = registered.partner.partner_id
      const { user } = yield* createMerchant()

      // Reuse: the second exchange fails and revokes what the first gave; other codes' tokens stay.
      const first = yield* auth.issueCode(partnerId, user.user_id)
      const second = yield* auth.issueCode(partnerId, user.user_id)
      const keep = yield* exchange(registered, second.code)
      expect((yield* Effect.flip(exchange(other, first.code))).key).toBe("auth.code.invalid")
      const grant = yield* exchange(registered, first.code)
      expect((yield* auth.authenticate(grant.access_token))._tag).toBe("Partner")
      expect((yield* Effect.flip(exchange(registered, first.code))).key).toBe("auth.code.used")
      expect((yield* Effect.flip(auth.authenticate(grant.access_token))).key).toBe("auth.token.invalid")
      expect((yield* auth.authenticate(keep.access_token))._tag).toBe("Partner")
      const repo = yield* CredentialRepository.CredentialRepository
      const revoked = Option.getOrThrow(yield* repo.findToken(yield* sha256Hex(grant.access_token)))
      expect([revoked.kind, revoked.code_hash]).toEqual(["partner", yield* sha256Hex(first.code)])

      // Concurrent exchanges of one code: exactly one succeeds.
      const raced = yield* auth.issueCode(partnerId, user.user_id)
      const outcomes = yield* Effect.all(
        Array.from({ length: 4 }, () => Effect.either(exchange(registered, raced.code))),
        { concurrency: "unbounded" }
      )
      const won = outcomes.filter(Either.isRight)
      expect(won).toHaveLength(1)
      expect(outcomes.filter(Either.isLeft).map((o) => o.left.key)).toEqual([
        "auth.code.used",
        "auth.code.used",
        "auth.code.used"
      ])
      // The later attempts count as reuse: the one token is revoked too.
      expect((yield* Effect.flip(auth.authenticate(won[0]!.right.access_token))).key).toBe(
        "auth.token.invalid"
      )
      expect(yield* repo.revokeTokensOfCode(yield* sha256Hex(raced.code), DateTime.unsafeMake(0))).toBe(0)

      // Expiry: valid until just before 5 minutes.
      const early = yield* auth.issueCode(partnerId, user.user_id)
      const late = yield* auth.issueCode(partnerId, user.user_id)
      yield* TestClock.adjust(Duration.millis(5 * 60_000 - 1))
      expect((yield* exchange(registered, early.code)).user_id).toBe(user.user_id)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Effect.flip(exchange(registered, late.code))).key).toBe("auth.code.expired")
      yield* expectLedgerOk
    })
  }
]
