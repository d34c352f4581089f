import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option, TestClock } from "effect"
import { Accounts, Auth, Crypto, Onboarding, Principal } from "../src/index.js"
import { CredentialRepository, PartnerRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createMerchant, createPartner, cuitFor, partnerToken } from "./accountFixtures.js"
import { events, expectLedgerOk } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const exchange = (partner: Effect.Effect.Success<ReturnType<typeof createPartner>>, code: string) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: partner.client_id,
        client_secret: partner.client_secret
      })
    )
  )

const register = (partnerId: string, fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const onboarding = yield* Onboarding.Onboarding
    return yield* onboarding.register(
      yield* Onboarding.decodeRegisterRequest({
        partner_id: partnerId,
        email: "ana@example.com",
        name: "Ana Tienda",
        cuit: "27-12345678-0",
        password: "correct horse battery",
        ...fields
      })
    )
  })

describe("Auth.registerPartner", () => {
  it.effect("returns partner_id, client_id and a one-time client_secret stored sealed", () =>
    provideEngine(
      Effect.gen(function* () {
        const { partner, client_id, client_secret } = yield* createPartner({ name: "Mi Socio S.A." })
        expect(partner.partner_id).toMatch(/^par_/)
        expect(partner.slug).toBe("mi-socio-s-a")
        expect(partner.client_id).toBe(client_id)
        expect(partner.redirect_url).toBe("https://socio.example.com/callback")
        const repo = yield* PartnerRepository.PartnerRepository
        const stored = Option.getOrThrow(yield* repo.findById(partner.partner_id))
        expect(JSON.stringify(stored)).not.toContain(client_secret)
        const crypto = yield* Crypto.Crypto
        expect(yield* crypto.decrypt(stored.client_secret_sealed, client_id)).toBe(client_secret)
      })
    )
  )

  it.effect("validates URLs naming the field and keeps slugs unique", () =>
    provideEngine(
      Effect.gen(function* () {
        const bad = yield* Effect.flip(
          Auth.decodeRegisterPartnerRequest({
            name: "X",
            redirect_url: "not a url",
            webhook_url: "https://x.example"
          })
        )
        expect(bad).toMatchObject({ _tag: "InvalidInput", field: "redirect_url" })
        const badHook = yield* Effect.flip(
          Auth.decodeRegisterPartnerRequest({
            name: "X",
            redirect_url: "https://x.example",
            webhook_url: "ftp://x"
          })
        )
        expect(badHook.field).toBe("webhook_url")
        yield* createPartner({ name: "Socio" })
        const taken = yield* Effect.flip(createPartner({ name: "SOCIO" }))
        expect(taken).toMatchObject({ _tag: "Conflict", key: "partner.slug.taken" })
        const other = yield* createPartner({ name: "SOCIO", slug: "socio-2" })
        expect(other.partner.slug).toBe("socio-2")
      })
    )
  )
})

describe("Onboarding", () => {
  it.effect("register → consent → redirect with code and state → exchange → PAR- token for that user", () =>
    provideEngine(
      Effect.gen(function* () {
        const onboarding = yield* Onboarding.Onboarding
        const auth = yield* Auth.Auth
        const accounts = yield* Accounts.Accounts
        const partner = yield* createPartner({ redirect_url: "https://socio.example.com/cb?src=cobro" })
        const partnerId = partner.partner.partner_id
        const request = yield* Onboarding.decodeAuthorizeRequest({
          partner_id: partnerId,
          referred_user_id: "socio-user-42",
          state: "xyz 123"
        })
        expect(yield* onboarding.authorize(request)).toEqual({
          partner_id: partnerId,
          name: "Socio Uno",
          slug: "socio-uno"
        })

        const created = yield* register(partnerId)
        expect(created.user.account_status).toBe("PENDING")
        expect(created.user.partner_id).toBe(partnerId)
        expect(created.user.cuit).toBe("27123456780")

        const redirect = yield* onboarding.consent(created.user.user_id, request)
        const url = new URL(redirect.redirect_url)
        expect(`${url.origin}${url.pathname}`).toBe("https://socio.example.com/cb")
        expect(url.searchParams.get("src")).toBe("cobro")
        expect(url.searchParams.get("code")).toBe(redirect.code)
        expect(url.searchParams.get("state")).toBe("xyz 123")
        expect(DateTime.toEpochMillis(redirect.expires_at)).toBe(5 * 60_000)

        const grant = yield* exchange(partner, redirect.code)
        expect(grant.access_token).toMatch(/^PAR-[A-Za-z0-9_-]{43}$/)
        expect(grant.token).toBe(grant.access_token)
        expect(grant.user_id).toBe(created.user.user_id)
        expect(grant.referred_user_id).toBe("socio-user-42")

        const principal = yield* auth.authenticate(grant.access_token)
        expect(principal).toEqual(
          Principal.Principal.Partner({ user_id: created.user.user_id, partner_id: partnerId })
        )
        const account = yield* accounts.getAccount(principal, created.user.user_id)
        expect(account.partner_config?.partner_id).toBe(partnerId)

        const consents = yield* PartnerRepository.PartnerRepository
        expect(Option.isSome(yield* consents.findConsent(partnerId, created.user.user_id))).toBe(true)

        // Activation (identity verification) notifies the partner.
        yield* accounts.setStatus(created.user.user_id, "ACTIVE")
        expect((yield* events).map((e) => [e.type, e.webhook_url])).toEqual([
          ["account.activated", "https://socio.example.com/hooks"]
        ])
        yield* expectLedgerOk
      })
    )
  )

  it.effect("keeps the password only as a slow salted hash; sign-in checks it", () =>
    provideEngine(
      Effect.gen(function* () {
        const onboarding = yield* Onboarding.Onboarding
        const partner = yield* createPartner()
        const created = yield* register(partner.partner.partner_id)
        const repo = yield* CredentialRepository.CredentialRepository
        const row = Option.getOrThrow(yield* repo.findCredential(created.user.user_id))
        expect(row.password_hash).toMatch(/^pbkdf2-sha256\$600000\$/)
        expect(JSON.stringify(row)).not.toContain("correct horse battery")

        const signedIn = yield* onboarding.signIn(
          yield* Onboarding.decodeSignInRequest({
            email: " ANA@example.com",
            password: "correct horse battery"
          })
        )
        expect(signedIn.user_id).toBe(created.user.user_id)
        for (const [email, password] of [
          ["ana@example.com", "wrong password"],
          ["nadie@example.com", "correct horse battery"]
        ] as const) {
          const error = yield* Effect.flip(
            onboarding.signIn(new Onboarding.SignInRequest({ email, password }))
          )
          expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.login.invalid" })
        }
        // A user created by the CLI has no web password: it cannot sign in.
        yield* createMerchant({ email: "cli@example.com" })
        const noPassword = yield* Effect.flip(
          onboarding.signIn(
            new Onboarding.SignInRequest({ email: "cli@example.com", password: "anything at all" })
          )
        )
        expect(noPassword._tag).toBe("Unauthenticated")
      })
    )
  )

  it.effect("rejects a short password, a taken email and a redirect_uri other than the registered one", () =>
    provideEngine(
      Effect.gen(function* () {
        const onboarding = yield* Onboarding.Onboarding
        const partner = yield* createPartner()
        const partnerId = partner.partner.partner_id
        const short = yield* Effect.flip(register(partnerId, { password: "short" }))
        expect(short).toMatchObject({ _tag: "InvalidInput", field: "password" })
        yield* register(partnerId)
        const taken = yield* Effect.flip(register(partnerId, { cuit: cuitFor("87654321") }))
        expect(taken).toMatchObject({ _tag: "Conflict", key: "user.email.taken" })
        const mismatch = yield* Effect.flip(
          onboarding.authorize(
            yield* Onboarding.decodeAuthorizeRequest({
              partner_id: partnerId,
              redirect_uri: "https://evil.example.com/callback"
            })
          )
        )
        expect(mismatch).toMatchObject({ _tag: "InvalidInput", field: "redirect_uri" })
        const unknown = yield* Effect.flip(
          onboarding.authorize(yield* Onboarding.decodeAuthorizeRequest({ partner_id: "par_nope" }))
        )
        expect(unknown).toMatchObject({ _tag: "NotFound", key: "partner.not.found" })
      })
    )
  )

  it.effect(
    "an existing user signing in through a partner gets it as onboarding partner only if it had none",
    () =>
      provideEngine(
        Effect.gen(function* () {
          const onboarding = yield* Onboarding.Onboarding
          const accounts = yield* Accounts.Accounts
          const first = yield* createPartner({ name: "Primero" })
          const second = yield* createPartner({ name: "Segundo" })
          const { user } = yield* createMerchant()
          yield* onboarding.consent(
            user.user_id,
            yield* Onboarding.decodeAuthorizeRequest({ partner_id: first.partner.partner_id })
          )
          expect((yield* accounts.getUser(user.user_id)).partner_id).toBe(first.partner.partner_id)
          const redirect = yield* onboarding.consent(
            user.user_id,
            yield* Onboarding.decodeAuthorizeRequest({ partner_id: second.partner.partner_id })
          )
          expect(new URL(redirect.redirect_url).searchParams.has("state")).toBe(false)
          expect((yield* accounts.getUser(user.user_id)).partner_id).toBe(first.partner.partner_id)
          // The second partner still acts for the user with its own token.
          const grant = yield* exchange(second, redirect.code)
          expect(grant.user_id).toBe(user.user_id)
          expect(grant.referred_user_id).toBeUndefined()
        })
      )
  )
})

describe("Onboarding.merchantsOf and actFor: a partner's grants", () => {
  it.effect("lists the merchants that consented, newest first, and acts only for them", () =>
    provideEngine(
      Effect.gen(function* () {
        const onboarding = yield* Onboarding.Onboarding
        const first = yield* createPartner({ name: "Primero" })
        const second = yield* createPartner({ name: "Segundo" })
        const one = (yield* createMerchant()).user
        const two = (yield* createMerchant({ email: "dos@example.com" })).user
        const other = (yield* createMerchant({ email: "otro@example.com" })).user
        const consent = (userId: typeof one.user_id, partnerId: typeof first.partner.partner_id) =>
          Effect.flatMap(Onboarding.decodeAuthorizeRequest({ partner_id: partnerId }), (request) =>
            onboarding.consent(userId, request)
          )
        expect(yield* onboarding.merchantsOf(first.partner.partner_id)).toEqual([])
        yield* consent(one.user_id, first.partner.partner_id)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* consent(two.user_id, first.partner.partner_id)
        yield* consent(other.user_id, second.partner.partner_id)

        const listed = yield* onboarding.merchantsOf(first.partner.partner_id)
        expect(listed.map((m) => m.user.user_id)).toEqual([two.user_id, one.user_id])
        expect(listed[0]!.user.account_status).toBe(two.account_status)
        expect(listed[1]!.consent.granted_at).toEqual(
          yield* Effect.map(DateTime.now, (now) => DateTime.subtract(now, { seconds: 1 }))
        )

        expect(yield* onboarding.actFor(first.partner.partner_id, one.user_id)).toEqual(
          Principal.Principal.Partner({ user_id: one.user_id, partner_id: first.partner.partner_id })
        )
        const refused = yield* Effect.flip(onboarding.actFor(first.partner.partner_id, other.user_id))
        expect(refused).toMatchObject({ _tag: "NotFound", key: "user.not.found" })
        const unknown = yield* Effect.flip(onboarding.actFor(second.partner.partner_id, one.user_id))
        expect(unknown._tag).toBe("NotFound")
      })
    )
  )
})

describe("Auth.exchangeCode", () => {
  it.effect("a code is valid for exactly 5 minutes", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const partner = yield* createPartner()
        const { user } = yield* createMerchant()
        const early = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
        const late = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
        yield* TestClock.adjust(Duration.millis(5 * 60_000 - 1))
        expect((yield* exchange(partner, early.code)).user_id).toBe(user.user_id)
        yield* TestClock.adjust(Duration.millis(1))
        const error = yield* Effect.flip(exchange(partner, late.code))
        expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.code.expired" })
      })
    )
  )

  it.effect("a code works once; presenting it again revokes the token it gave", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const partner = yield* createPartner()
        const { user } = yield* createMerchant()
        const { code } = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
        const other = yield* partnerToken(partner, user.user_id)
        const grant = yield* exchange(partner, code)
        expect((yield* auth.authenticate(grant.access_token))._tag).toBe("Partner")

        const reuse = yield* Effect.flip(exchange(partner, code))
        expect(reuse).toMatchObject({ _tag: "Unauthenticated", key: "auth.code.used" })
        expect((yield* Effect.flip(auth.authenticate(grant.access_token))).key).toBe("auth.token.invalid")
        // Tokens from other codes are untouched.
        expect((yield* auth.authenticate(other))._tag).toBe("Partner")
      })
    )
  )

  it.effect("wrong partner credentials are Unauthenticated and leave the code usable", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const partner = yield* createPartner()
        const { user } = yield* createMerchant()
        const { code } = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
        for (const [client_id, client_secret] of [
          [partner.client_id, `${partner.client_secret}x`],
          [partner.client_id, ""],
          ["cli_unknown", partner.client_secret],
          ["", ""]
        ] as const) {
          const error = yield* Effect.flip(
            auth.exchangeCode(new Auth.CodeExchangeRequest({ code, client_id, client_secret }))
          )
          expect(error).toMatchObject({ _tag: "Unauthenticated", key: "auth.credentials.invalid" })
        }
        expect((yield* exchange(partner, code)).user_id).toBe(user.user_id)
      })
    )
  )

  it.effect("a code is bound to its partner; an unknown code is Unauthenticated", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const mine = yield* createPartner({ name: "Mio" })
        const theirs = yield* createPartner({ name: "Otro" })
        const { user } = yield* createMerchant()
        const { code } = yield* auth.issueCode(mine.partner.partner_id, user.user_id)
        const stolen = yield* Effect.flip(exchange(theirs, code))
        expect(stolen).toMatchObject({ _tag: "Unauthenticated", key: "auth.code.invalid" })
        const unknown = yield* Effect.flip(exchange(mine, "no-such-code"))
        expect(unknown.key).toBe("auth.code.invalid")
        // The stolen attempt did not consume it.
        expect((yield* exchange(mine, code)).user_id).toBe(user.user_id)
      })
    )
  )
})

describe("Auth.revokePartnerToken", () => {
  it.effect("the partner revokes its own token; another partner's attempt changes nothing", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const mine = yield* createPartner({ name: "Mio" })
        const theirs = yield* createPartner({ name: "Otro" })
        const { user } = yield* createMerchant()
        const token = yield* partnerToken(mine, user.user_id)
        yield* auth.revokePartnerToken(
          new Auth.RevokeRequest({ token, client_id: theirs.client_id, client_secret: theirs.client_secret })
        )
        expect((yield* auth.authenticate(token))._tag).toBe("Partner")
        const wrongSecret = yield* Effect.flip(
          auth.revokePartnerToken(
            new Auth.RevokeRequest({ token, client_id: mine.client_id, client_secret: "x" })
          )
        )
        expect(wrongSecret._tag).toBe("Unauthenticated")
        yield* auth.revokePartnerToken(
          new Auth.RevokeRequest({ token, client_id: mine.client_id, client_secret: mine.client_secret })
        )
        expect((yield* Effect.flip(auth.authenticate(token))).key).toBe("auth.token.invalid")
      })
    )
  )

  it.effect("partner tokens do not expire by default; partner secret rotation keeps them", () =>
    provideEngine(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const partner = yield* createPartner()
        const { user } = yield* createMerchant()
        const token = yield* partnerToken(partner, user.user_id)
        yield* TestClock.adjust("3650 days")
        expect((yield* auth.authenticate(token))._tag).toBe("Partner")
        const rotated = yield* auth.rotatePartnerSecret(partner.partner.partner_id)
        expect((yield* auth.authenticate(token))._tag).toBe("Partner")
        const { code } = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
        expect((yield* Effect.flip(exchange(partner, code))).key).toBe("auth.credentials.invalid")
        expect((yield* exchange({ ...partner, client_secret: rotated.client_secret }, code)).user_id).toBe(
          user.user_id
        )
      })
    )
  )
})
