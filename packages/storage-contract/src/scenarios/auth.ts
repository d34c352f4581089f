/**
 * Credentials, access tokens, partners, consents and authorization codes: the port contract of
 * `CredentialRepository` and `PartnerRepository`, and the engine flows over them (user tokens,
 * partner onboarding, single-use codes).
 */
import { expect } from "@effect/vitest"
import {
  Accounts,
  Auth,
  BankAccount,
  Credential,
  CredentialRepository,
  Crypto,
  Ids,
  Onboarding,
  Partner,
  PartnerRepository,
  Principal,
  Transactor,
  Wire
} from "@cobro/core"
import { BigDecimal, DateTime, Duration, Effect, Either, Encoding, Option, Schema, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { expectLedgerOk, seedUser, u1, u2 } from "./fixtures.js"

const sha256Hex = (text: string) =>
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    return Encoding.encodeHex(yield* crypto.sha256(text))
  })

/** A partner as its wire form: its commission (a BigDecimal) compares by value, not by representation. */
const wirePartner = (partner: Partner.Partner | Option.Option<Partner.Partner>) =>
  Schema.encodeSync(Partner.Partner)(Option.isOption(partner) ? Option.getOrThrow(partner) : partner)

const at = (ms: number) => DateTime.unsafeMake(ms)

const credential = (fields: Partial<ConstructorParameters<typeof Credential.UserCredential>[0]> = {}) =>
  new Credential.UserCredential({
    user_id: u1,
    client_id: Ids.ClientId.make("cli_one"),
    client_secret_sealed: "v1.sealed-secret-one",
    password_hash: null,
    creation_timestamp: at(1_000),
    secret_rotated_at: at(1_000),
    ...fields
  })

const partner = (fields: Partial<ConstructorParameters<typeof Partner.Partner>[0]> = {}) =>
  new Partner.Partner({
    partner_id: Ids.PartnerId.make("par_one"),
    name: "Socio Uno",
    slug: "socio-uno",
    commission: Wire.rate("0.015"),
    redirect_url: "https://socio.example.com/callback",
    webhook_url: null,
    client_id: Ids.ClientId.make("cli_par_one"),
    client_secret_sealed: "v1.sealed-partner-secret",
    creation_timestamp: at(2_000),
    secret_rotated_at: at(2_000),
    ...fields
  })

const token = (hash: string, fields: Partial<ConstructorParameters<typeof Credential.AccessToken>[0]> = {}) =>
  new Credential.AccessToken({
    token_hash: hash,
    kind: "user",
    user_id: u1,
    partner_id: null,
    code_hash: null,
    creation_timestamp: at(3_000),
    expires_at: at(3_000 + 3_600_000),
    revoked_at: null,
    ...fields
  })

const code = (
  hash: string,
  fields: Partial<ConstructorParameters<typeof Partner.AuthorizationCode>[0]> = {}
) =>
  new Partner.AuthorizationCode({
    code_hash: hash,
    partner_id: Ids.PartnerId.make("par_one"),
    user_id: u1,
    referred_user_id: "their-user-7",
    state: "st 1",
    creation_timestamp: at(4_000),
    expires_at: at(4_000 + 300_000),
    used_at: null,
    ...fields
  })

/** A merchant created the way the CLI does. */
const createMerchant = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Accounts.Accounts, (accounts) =>
    accounts.createUser(
      Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
        name: "Tienda Uno",
        email: "uno@example.com",
        cuit: "20-12345678-6",
        ...fields
      })
    )
  )

const createPartner = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name: "Socio Uno",
        redirect_url: "https://socio.example.com/callback",
        webhook_url: "https://socio.example.com/hooks",
        ...fields
      })
    )
  )

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

export const authScenarios: ReadonlyArray<Scenario> = [
  {
    name: "auth: credentials are unique per user and client id; updates replace; refusals keep storage usable",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const repo = yield* CredentialRepository.CredentialRepository
      const transactor = yield* Transactor.Transactor
      const one = credential()
      yield* repo.insertCredential(one)
      expect(Option.getOrThrow(yield* repo.findCredential(u1))).toEqual(one)
      expect(yield* repo.findCredential(u2)).toEqual(Option.none())

      const again = yield* Effect.flip(
        repo.insertCredential(credential({ client_id: Ids.ClientId.make("cli_x") }))
      )
      expect(again).toMatchObject({ _tag: "Conflict", key: "credential.exists" })
      const both = yield* Effect.flip(repo.insertCredential(one))
      expect(both).toMatchObject({ _tag: "Conflict", key: "credential.exists" })
      const taken = yield* Effect.flip(repo.insertCredential(credential({ user_id: u2 })))
      expect(taken).toMatchObject({ _tag: "Conflict", key: "client_id.taken" })

      // Inside a unit of work, a refused insert leaves the transaction usable.
      const rotated = credential({
        client_secret_sealed: "v1.sealed-secret-two",
        password_hash: "pbkdf2-sha256$600000$salt$hash",
        secret_rotated_at: at(9_000)
      })
      yield* transactor.withTransaction(
        Effect.gen(function* () {
          expect(Option.getOrThrow(yield* repo.findCredentialForUpdate(u1))).toEqual(one)
          expect((yield* Effect.flip(repo.insertCredential(credential({ user_id: u2 })))).key).toBe(
            "client_id.taken"
          )
          yield* repo.updateCredential(rotated)
        })
      )
      expect(Option.getOrThrow(yield* repo.findCredential(u1))).toEqual(rotated)
      // Updating a user without a credential changes nothing.
      yield* repo.updateCredential(credential({ user_id: u2, client_id: Ids.ClientId.make("cli_two") }))
      expect(yield* repo.findCredential(u2)).toEqual(Option.none())

      const two = credential({
        user_id: u2,
        client_id: Ids.ClientId.make("cli_two"),
        creation_timestamp: at(5)
      })
      yield* repo.insertCredential(two)
      expect(Option.getOrThrow(yield* repo.findCredentialForUpdate(u2))).toEqual(two)
      // A failed unit of work leaves no credential behind.
      yield* seedUser({ user_id: Ids.UserId.make("u3"), email: "tres@example.com" })
      const three = credential({ user_id: Ids.UserId.make("u3"), client_id: Ids.ClientId.make("cli_three") })
      const failed = yield* Effect.flip(
        transactor.withTransaction(
          Effect.zipRight(repo.insertCredential(three), Effect.fail("boom" as const))
        )
      )
      expect(failed).toBe("boom")
      expect(yield* repo.findCredential(three.user_id)).toEqual(Option.none())
      yield* repo.insertCredential(three)
    })
  },
  {
    name: "auth: tokens are found by hash; revocation happens once, by token, by code and by user",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      yield* (yield* PartnerRepository.PartnerRepository).insert(partner())
      const repo = yield* CredentialRepository.CredentialRepository
      const parId = Ids.PartnerId.make("par_one")
      const hashes = yield* Effect.all(["t1", "t2", "t3", "t4", "t5", "t6"].map(sha256Hex))
      const [h1, h2, h3, h4, h5, h6] = hashes as [string, string, string, string, string, string]
      const codeA = yield* sha256Hex("code-a")
      const codeB = yield* sha256Hex("code-b")
      const partnerToken = (hash: string, codeHash: string) =>
        token(hash, { kind: "partner", partner_id: parId, code_hash: codeHash, expires_at: null })
      const tokens = [
        token(h1),
        token(h2, { expires_at: null }),
        token(h3, { user_id: u2 }),
        partnerToken(h4, codeA),
        partnerToken(h5, codeA),
        partnerToken(h6, codeB)
      ]
      for (const t of tokens) yield* repo.insertToken(t)
      for (const t of tokens) expect(Option.getOrThrow(yield* repo.findToken(t.token_hash))).toEqual(t)
      expect(yield* repo.findToken("t1")).toEqual(Option.none())
      expect(yield* repo.findToken(yield* sha256Hex("nope"))).toEqual(Option.none())
      const dup = yield* Effect.flip(repo.insertToken(token(h1, { user_id: u2 })))
      expect(dup).toMatchObject({ _tag: "Conflict", key: "token.taken" })
      expect(Option.getOrThrow(yield* repo.findToken(h1))).toEqual(tokens[0])

      // Expiry round-trips to the millisecond.
      const stored = Option.getOrThrow(yield* repo.findToken(h1))
      expect(stored.isActiveAt(at(3_000 + 3_600_000 - 1))).toBe(true)
      expect(stored.isActiveAt(at(3_000 + 3_600_000))).toBe(false)
      expect(Option.getOrThrow(yield* repo.findToken(h4)).isActiveAt(at(10 ** 13))).toBe(true)

      expect(yield* repo.revokeToken(h1, at(7_000))).toBe(true)
      expect(yield* repo.revokeToken(h1, at(8_000))).toBe(false)
      expect(yield* repo.revokeToken(yield* sha256Hex("nope"), at(8_000))).toBe(false)
      expect(Option.getOrThrow(yield* repo.findToken(h1)).revoked_at).toEqual(at(7_000))

      expect(yield* repo.revokeTokensOfCode(codeA, at(9_000))).toBe(2)
      expect(yield* repo.revokeTokensOfCode(codeA, at(9_500))).toBe(0)
      expect(yield* repo.revokeTokensOfCode(yield* sha256Hex("code-z"), at(9_500))).toBe(0)
      // Only user tokens of that user, and only live ones.
      expect(yield* repo.revokeUserTokens(u1, at(10_000))).toBe(1)
      expect(yield* repo.revokeUserTokens(u1, at(11_000))).toBe(0)

      const revokedAt = yield* Effect.all(
        hashes.map((h) => Effect.map(repo.findToken(h), (t) => Option.getOrThrow(t).revoked_at))
      )
      expect(revokedAt).toEqual([at(7_000), at(10_000), null, at(9_000), at(9_000), null])
      // A revocation inside a failed unit of work is undone.
      yield* Effect.flip(
        (yield* Transactor.Transactor).withTransaction(
          Effect.zipRight(repo.revokeUserTokens(u2, at(12_000)), Effect.fail("boom" as const))
        )
      )
      expect(Option.getOrThrow(yield* repo.findToken(h3)).revoked_at).toBeNull()
    })
  },
  {
    name: "auth: partners are unique by id, client id and slug; updates replace; consents are refreshed",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* PartnerRepository.PartnerRepository
      const one = partner()
      yield* repo.insert(one)
      expect(wirePartner(yield* repo.findById(one.partner_id))).toEqual(wirePartner(one))
      expect(wirePartner(yield* repo.findByClientId(one.client_id))).toEqual(wirePartner(one))
      expect(yield* repo.findById(Ids.PartnerId.make("par_nope"))).toEqual(Option.none())
      expect(yield* repo.findByClientId(Ids.ClientId.make("cli_nope"))).toEqual(Option.none())

      const sameId = yield* Effect.flip(
        repo.insert(partner({ slug: "otro", client_id: Ids.ClientId.make("cli_par_two") }))
      )
      expect(sameId).toMatchObject({ _tag: "Conflict", key: "partner.id.taken" })
      const sameClient = yield* Effect.flip(
        repo.insert(partner({ partner_id: Ids.PartnerId.make("par_two"), slug: "otro" }))
      )
      expect(sameClient).toMatchObject({ _tag: "Conflict", key: "client_id.taken" })
      const sameSlug = yield* Effect.flip(
        repo.insert(
          partner({ partner_id: Ids.PartnerId.make("par_two"), client_id: Ids.ClientId.make("cli_b") })
        )
      )
      expect(sameSlug).toMatchObject({ _tag: "Conflict", key: "partner.slug.taken" })
      expect(sameSlug.message).toContain("socio-uno")

      const two = partner({
        partner_id: Ids.PartnerId.make("par_two"),
        slug: "socio-dos",
        client_id: Ids.ClientId.make("cli_par_two"),
        webhook_url: "https://dos.example.com/hooks"
      })
      const transactor = yield* Transactor.Transactor
      const rotated = new Partner.Partner({
        ...one,
        client_secret_sealed: "v1.rotated",
        secret_rotated_at: at(6_000)
      })
      yield* transactor.withTransaction(
        Effect.gen(function* () {
          expect((yield* Effect.flip(repo.insert(partner({ partner_id: two.partner_id })))).key).toBe(
            "client_id.taken"
          )
          yield* repo.insert(two)
          expect(wirePartner(yield* repo.findByIdForUpdate(one.partner_id))).toEqual(wirePartner(one))
          yield* repo.update(rotated)
        })
      )
      expect(wirePartner(yield* repo.findById(one.partner_id))).toEqual(wirePartner(rotated))
      expect(wirePartner(yield* repo.findByClientId(two.client_id))).toEqual(wirePartner(two))
      expect(
        BigDecimal.equals(
          Option.getOrThrow(yield* repo.findById(two.partner_id)).commission,
          Wire.rate("0.015")
        )
      ).toBe(true)

      expect(yield* repo.findConsent(one.partner_id, u1)).toEqual(Option.none())
      const first = new Partner.Consent({ partner_id: one.partner_id, user_id: u1, granted_at: at(1_000) })
      yield* repo.saveConsent(first)
      expect(Option.getOrThrow(yield* repo.findConsent(one.partner_id, u1))).toEqual(first)
      const refreshed = new Partner.Consent({ ...first, granted_at: at(2_000) })
      yield* repo.saveConsent(refreshed)
      expect(Option.getOrThrow(yield* repo.findConsent(one.partner_id, u1))).toEqual(refreshed)
      expect(yield* repo.findConsent(two.partner_id, u1)).toEqual(Option.none())
      expect(yield* repo.findConsent(one.partner_id, u2)).toEqual(Option.none())
    })
  },
  {
    name: "auth: a code is stored by hash and consumed once, also by concurrent units of work",
    run: Effect.gen(function* () {
      yield* seedUser()
      const partners = yield* PartnerRepository.PartnerRepository
      const credentials = yield* CredentialRepository.CredentialRepository
      const transactor = yield* Transactor.Transactor
      yield* partners.insert(partner())
      const hash = yield* sha256Hex("the-code")
      const issued = code(hash)
      yield* partners.insertCode(issued)
      expect(Option.getOrThrow(yield* partners.findCodeForUpdate(hash))).toEqual(issued)
      expect(yield* partners.findCodeForUpdate("the-code")).toEqual(Option.none())
      const dup = yield* Effect.flip(partners.insertCode(code(hash, { state: null })))
      expect(dup).toMatchObject({ _tag: "Conflict", key: "code.taken" })
      const bare = code(yield* sha256Hex("bare"), { referred_user_id: null, state: null })
      yield* partners.insertCode(bare)
      expect(Option.getOrThrow(yield* partners.findCodeForUpdate(bare.code_hash))).toEqual(bare)

      // Each consumer: lock the code, and if unused mark it used and issue a token from it.
      const consume = (i: number) =>
        transactor.withTransaction(
          Effect.gen(function* () {
            const found = Option.getOrThrow(yield* partners.findCodeForUpdate(hash))
            if (found.used_at !== null) return false
            yield* partners.updateCode(new Partner.AuthorizationCode({ ...found, used_at: at(50_000 + i) }))
            yield* credentials.insertToken(
              token(yield* sha256Hex(`from-code-${i}`), {
                kind: "partner",
                partner_id: found.partner_id,
                code_hash: hash,
                expires_at: null
              })
            )
            return true
          })
        )
      const outcomes = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => consume(i)),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((won) => won)).toHaveLength(1)
      const winner = outcomes.indexOf(true)
      expect(Option.getOrThrow(yield* partners.findCodeForUpdate(hash)).used_at).toEqual(at(50_000 + winner))
      // Exactly one token came from the code.
      expect(yield* credentials.revokeTokensOfCode(hash, at(60_000))).toBe(1)
      // The other code is untouched; updating an unknown code changes nothing.
      expect(Option.getOrThrow(yield* partners.findCodeForUpdate(bare.code_hash)).used_at).toBeNull()
      yield* partners.updateCode(code(yield* sha256Hex("unknown"), { used_at: at(1) }))
      expect(yield* partners.findCodeForUpdate(yield* sha256Hex("unknown"))).toEqual(Option.none())
    })
  },
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
