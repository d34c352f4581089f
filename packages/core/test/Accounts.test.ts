import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Schema, TestClock } from "effect"
import { Accounts, Auth, Crypto, Ids, Payments, Principal } from "../src/index.js"
import { CredentialRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createMerchant, createPartner, cuitFor, partnerToken, userToken } from "./accountFixtures.js"
import { createRequest, events, expectLedgerOk } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const patch = (body: Record<string, unknown>) => Accounts.decodeAccountPatch(body)

/** The merchant and a principal acting for it. */
const merchant = (fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const created = yield* createMerchant(fields)
    return { ...created, principal: Principal.Principal.User({ user_id: created.user.user_id }) }
  })

describe("Accounts.createUser", () => {
  it.effect("creates a PENDING merchant with zeroed configuration and a one-time client secret", () =>
    provideEngine(
      Effect.gen(function* () {
        const { user, client_id, client_secret } = yield* createMerchant({ cuit: "20-12345678-6" })
        expect(user.account_status).toBe("PENDING")
        expect(user.cuit).toBe("20123456786")
        expect(user.alias_prefix).toBeNull()
        expect(user.automatic_cancellation).toBe(false)
        expect(user.partner_id).toBeNull()
        expect(client_id).toMatch(/^cli_[0-9a-f]{32}$/)
        expect(client_secret.length).toBeGreaterThanOrEqual(43)
        expect(user.user_id).toMatch(/^usr_/)
      })
    )
  )

  it.effect("stores the client secret only sealed under the server key", () =>
    provideEngine(
      Effect.gen(function* () {
        const { user, client_id, client_secret } = yield* createMerchant()
        const repo = yield* CredentialRepository.CredentialRepository
        const row = (yield* repo.findCredential(user.user_id)).pipe((o) =>
          o._tag === "Some" ? o.value : undefined
        )
        expect(row).toBeDefined()
        expect(JSON.stringify(row)).not.toContain(client_secret)
        expect(row!.client_secret_sealed.startsWith("v1.")).toBe(true)
        const crypto = yield* Crypto.Crypto
        expect(yield* crypto.decrypt(row!.client_secret_sealed, client_id)).toBe(client_secret)
        // Bound to its client id: the sealed value does not open for another row.
        const exit = yield* Effect.exit(crypto.decrypt(row!.client_secret_sealed, "cli_other"))
        expect(exit._tag).toBe("Failure")
      })
    )
  )

  it.effect("rejects an invalid CUIT or email naming the field, and a taken email", () =>
    provideEngine(
      Effect.gen(function* () {
        const badCuit = yield* Effect.flip(
          Accounts.decodeCreateUserRequest({ name: "X", email: "x@example.com", cuit: "20123456780" })
        )
        expect(badCuit.field).toBe("cuit")
        const badEmail = yield* Effect.flip(
          Accounts.decodeCreateUserRequest({ name: "X", email: "not-an-email", cuit: cuitFor("12345678") })
        )
        expect(badEmail.field).toBe("email")
        yield* createMerchant()
        const taken = yield* Effect.flip(
          createMerchant({ email: "UNO@example.com", cuit: cuitFor("23456789") })
        )
        expect(taken).toMatchObject({ _tag: "Conflict", key: "user.email.taken" })
      })
    )
  )

  it.effect("refuses an unknown onboarding partner", () =>
    provideEngine(
      Effect.gen(function* () {
        const error = yield* Effect.flip(createMerchant({ partner_id: "par_missing" }))
        expect(error).toMatchObject({ _tag: "NotFound", key: "partner.not.found" })
      })
    )
  )
})

describe("AccountPatch limits", () => {
  const field = (body: Record<string, unknown>) =>
    Effect.map(Effect.flip(patch(body)), (e) => ({ tag: e._tag, field: e.field }))

  it.effect("cancellation_period: 1 to 200 whole hours", () =>
    Effect.gen(function* () {
      for (const bad of [0, 201, -1, 1.5, "10"]) {
        expect(yield* field({ cancellation_period: bad })).toEqual({
          tag: "InvalidInput",
          field: "cancellation_period"
        })
      }
      for (const good of [1, 200])
        expect((yield* patch({ cancellation_period: good })).cancellation_period).toBe(good)
    })
  )

  it.effect("cancellation_period_minutes: 5 to 20160 whole minutes", () =>
    Effect.gen(function* () {
      for (const bad of [4, 20161, 0, 10.5]) {
        expect(yield* field({ cancellation_period_minutes: bad })).toEqual({
          tag: "InvalidInput",
          field: "cancellation_period_minutes"
        })
      }
      for (const good of [5, 20160]) {
        expect((yield* patch({ cancellation_period_minutes: good })).cancellation_period_minutes).toBe(good)
      }
    })
  )

  it.effect("alias_prefix: at most 8 of lowercase letters, digits and underscore", () =>
    Effect.gen(function* () {
      for (const bad of ["abcdefghi", "Tienda", "ab-c", "ab.c", "", "ñandu", "a b"]) {
        expect(yield* field({ alias_prefix: bad })).toEqual({ tag: "InvalidInput", field: "alias_prefix" })
      }
      for (const good of ["abcdefgh", "a", "t_1", "12345678"]) {
        expect((yield* patch({ alias_prefix: good })).alias_prefix).toBe(good)
      }
    })
  )

  it.effect("automatic_cancellation is a boolean; transfer_tolerance a non-negative ARS amount", () =>
    Effect.gen(function* () {
      expect(yield* field({ automatic_cancellation: "yes" })).toEqual({
        tag: "InvalidInput",
        field: "automatic_cancellation"
      })
      expect(yield* field({ transfer_tolerance: -1 })).toEqual({
        tag: "InvalidInput",
        field: "transfer_tolerance"
      })
      expect(yield* field({ transfer_tolerance: 1.001 })).toEqual({
        tag: "InvalidInput",
        field: "transfer_tolerance"
      })
      expect((yield* patch({ transfer_tolerance: 10.5 })).transfer_tolerance?.minor).toBe(1050n)
    })
  )
})

describe("Accounts.updateAccount", () => {
  it.effect("changes only the fields sent, in any account state", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const { user, principal } = yield* merchant()
        expect(user.account_status).toBe("PENDING")
        yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({
            alias_prefix: "tienda",
            cancellation_period: 48,
            cancellation_period_minutes: 90,
            automatic_cancellation: true,
            transfer_tolerance: 5
          })
        )
        yield* TestClock.adjust("1 minute")
        const after = yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ cancellation_period: 24 })
        )
        expect(after.alias_prefix).toBe("tienda")
        expect(after.cancellation_period).toBe(24)
        expect(after.cancellation_period_minutes).toBe(90)
        expect(after.transfer_tolerance.minor).toBe(500n)
        const stored = yield* accounts.getUser(user.user_id)
        expect(stored.automatic_cancellation).toBe(true)
        expect(DateTime.toEpochMillis(stored.last_modified_timestamp)).toBe(60_000)

        // null clears a period; the other stays.
        const cleared = yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ cancellation_period_minutes: null })
        )
        expect(cleared.cancellation_period_minutes).toBeNull()
        expect(cleared.cancellation_period).toBe(24)

        // An empty patch changes nothing.
        const same = yield* accounts.updateAccount(principal, user.user_id, yield* patch({}))
        expect(same).toEqual(cleared)

        for (const status of ["REJECTED", "PENDING", "SUSPENDED"] as const) {
          yield* accounts.setStatus(user.user_id, status)
          const changed = yield* accounts.updateAccount(
            principal,
            user.user_id,
            yield* patch({ alias_prefix: "t2" })
          )
          expect(changed.account_status).toBe(status)
          expect(changed.alias_prefix).toBe("t2")
        }
      })
    )
  )

  it.effect("keeps alias prefixes unique across users", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const one = yield* merchant()
        const two = yield* merchant({ email: "dos@example.com", cuit: cuitFor("23456789") })
        yield* accounts.updateAccount(one.principal, one.user.user_id, yield* patch({ alias_prefix: "shop" }))
        const error = yield* Effect.flip(
          accounts.updateAccount(two.principal, two.user.user_id, yield* patch({ alias_prefix: "shop" }))
        )
        expect(error).toMatchObject({ _tag: "Conflict", key: "user.alias_prefix.taken" })
        // Setting one's own prefix again is fine; the failed change left nothing behind.
        yield* accounts.updateAccount(one.principal, one.user.user_id, yield* patch({ alias_prefix: "shop" }))
        expect((yield* accounts.getUser(two.user.user_id)).alias_prefix).toBeNull()
      })
    )
  )

  it.effect("is scoped to the caller's own account: another account is NotFound", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const one = yield* merchant()
        const two = yield* merchant({ email: "dos@example.com", cuit: cuitFor("23456789") })
        const error = yield* Effect.flip(
          accounts.updateAccount(one.principal, two.user.user_id, yield* patch({ alias_prefix: "x" }))
        )
        expect(error).toMatchObject({ _tag: "NotFound", key: "user.not.found" })
        expect((yield* accounts.getUser(two.user.user_id)).alias_prefix).toBeNull()
      })
    )
  )

  it.effect("minutes win over hours in a new payment's expiry (with automatic cancellation)", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 0))
        const accounts = yield* Accounts.Accounts
        const payments = yield* Payments.Payments
        const { user, principal } = yield* merchant({ user_id: "u1", account_status: "ACTIVE" })
        const expiryOf = (external_id: string) =>
          Effect.map(payments.create(createRequest({ external_id })), (p) =>
            DateTime.formatIso(p.expiration_timestamp)
          )

        yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ cancellation_period: 2, cancellation_period_minutes: 30 })
        )
        // Without automatic cancellation the engine default (5 days) applies.
        expect(yield* expiryOf("a")).toBe("2026-11-25T12:00:00.000Z")

        yield* accounts.updateAccount(principal, user.user_id, yield* patch({ automatic_cancellation: true }))
        expect(yield* expiryOf("b")).toBe("2026-11-20T12:30:00.000Z")

        yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ cancellation_period_minutes: null })
        )
        expect(yield* expiryOf("c")).toBe("2026-11-20T14:00:00.000Z")

        yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ cancellation_period_minutes: 20160 })
        )
        expect(yield* expiryOf("d")).toBe("2026-12-04T12:00:00.000Z")
        yield* expectLedgerOk
      })
    )
  )
})

describe("Accounts.getAccount", () => {
  it.effect("a partner token reads exactly SPEC's Account fields of its own user", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const auth = yield* Auth.Auth
        const partner = yield* createPartner({ name: "Socio Uno", commission: 0.015 })
        const { user } = yield* createMerchant({ partner_id: partner.partner.partner_id })
        const principal = yield* auth.authenticate(yield* partnerToken(partner, user.user_id))
        expect(principal).toEqual(
          Principal.Principal.Partner({ user_id: user.user_id, partner_id: partner.partner.partner_id })
        )
        yield* accounts.updateAccount(
          principal,
          user.user_id,
          yield* patch({ alias_prefix: "socio1", transfer_tolerance: 2 })
        )
        const account = yield* accounts.getAccount(principal, user.user_id)
        expect(yield* Schema.encode(Accounts.Account)(account)).toEqual({
          account_status: "PENDING",
          alias_prefix: "socio1",
          transfer_tolerance: 2,
          user_id: user.user_id,
          partner_config: {
            commission: 0.015,
            partner_id: partner.partner.partner_id,
            partner_name: "Socio Uno",
            partner_slug: "socio-uno"
          }
        })
      })
    )
  )

  it.effect("a user token reading the account is NotPermitted, even for its own account", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const auth = yield* Auth.Auth
        const created = yield* createMerchant()
        const principal = yield* auth.authenticate(yield* userToken(created))
        const error = yield* Effect.flip(accounts.getAccount(principal, created.user.user_id))
        expect(error).toMatchObject({ _tag: "NotPermitted", key: "account.partner_token.required" })
      })
    )
  )

  it.effect("a partner token for another user is NotFound", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const auth = yield* Auth.Auth
        const partner = yield* createPartner()
        const one = yield* createMerchant({ partner_id: partner.partner.partner_id })
        const two = yield* createMerchant({
          email: "dos@example.com",
          cuit: cuitFor("23456789"),
          partner_id: partner.partner.partner_id
        })
        const principal = yield* auth.authenticate(yield* partnerToken(partner, one.user.user_id))
        const read = yield* Effect.flip(accounts.getAccount(principal, two.user.user_id))
        expect(read).toMatchObject({ _tag: "NotFound", key: "user.not.found" })
        const write = yield* Effect.flip(
          accounts.updateAccount(principal, two.user.user_id, yield* patch({ alias_prefix: "x" }))
        )
        expect(write._tag).toBe("NotFound")
      })
    )
  )

  it.effect("partner_config is null for a user no partner onboarded", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const { user } = yield* createMerchant()
        const principal = Principal.Principal.Partner({
          user_id: user.user_id,
          partner_id: Ids.PartnerId.make("par_x")
        })
        expect((yield* accounts.getAccount(principal, user.user_id)).partner_config).toBeNull()
      })
    )
  )
})

describe("Accounts.setStatus", () => {
  it.effect("activation writes account_activated to the onboarding partner's webhook URL", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const partner = yield* createPartner({ webhook_url: "https://socio.example.com/hooks/cobro" })
        const { user } = yield* createMerchant({ partner_id: partner.partner.partner_id })
        const active = yield* accounts.setStatus(user.user_id, "ACTIVE")
        expect(active.account_status).toBe("ACTIVE")
        const written = yield* events
        expect(written).toHaveLength(1)
        expect(written[0]).toMatchObject({
          type: "account.activated",
          user_id: user.user_id,
          webhook_url: "https://socio.example.com/hooks/cobro",
          payload: { message: "account_activated", user_id: user.user_id }
        })
        // Same status again: nothing happens.
        yield* accounts.setStatus(user.user_id, "ACTIVE")
        expect(yield* events).toHaveLength(1)
        // Reinstated after a suspension: activated again.
        yield* accounts.setStatus(user.user_id, "SUSPENDED")
        yield* accounts.setStatus(user.user_id, "ACTIVE")
        expect((yield* events).map((e) => e.type)).toEqual(["account.activated", "account.activated"])
      })
    )
  )

  it.effect("no event for a user without a partner; illegal transitions are Conflict", () =>
    provideEngine(
      Effect.gen(function* () {
        const accounts = yield* Accounts.Accounts
        const { user } = yield* createMerchant()
        yield* accounts.setStatus(user.user_id, "ACTIVE")
        expect(yield* events).toEqual([])
        const error = yield* Effect.flip(accounts.setStatus(user.user_id, "REJECTED"))
        expect(error).toMatchObject({ _tag: "Conflict", key: "account.status.transition.invalid" })
        expect((yield* accounts.getUser(user.user_id)).account_status).toBe("ACTIVE")
        const missing = yield* Effect.flip(accounts.setStatus(Ids.UserId.make("nobody"), "ACTIVE"))
        expect(missing._tag).toBe("NotFound")
      })
    )
  )
})
