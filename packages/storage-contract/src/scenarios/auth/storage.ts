/** Auth: the repository contract. */
import { expect } from "@effect/vitest"
import { Credential, Ids, Partner, Wire } from "@cobro/core"
import { CredentialRepository, PartnerRepository, Transactor } from "@cobro/core/ports"
import { BigDecimal, Effect, Option } from "effect"
import type { Scenario } from "../../Scenario.js"
import { seedUser, u1, u2 } from "../fixtures.js"
import { sha256Hex, wirePartner, at, partner, token, code } from "./helpers.js"

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

export const authStorageScenarios: ReadonlyArray<Scenario> = [
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

      // A partner's consents, newest grant first, the other partner's left out.
      expect(yield* repo.listConsents(one.partner_id)).toEqual([refreshed])
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const second = new Partner.Consent({ partner_id: one.partner_id, user_id: u2, granted_at: at(3_000) })
      yield* repo.saveConsent(second)
      yield* repo.saveConsent(
        new Partner.Consent({ partner_id: two.partner_id, user_id: u1, granted_at: at(500) })
      )
      expect(yield* repo.listConsents(one.partner_id)).toEqual([second, refreshed])
      expect((yield* repo.listConsents(two.partner_id)).map((c) => c.user_id)).toEqual([u1])
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
  }
]
