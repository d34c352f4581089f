/**
 * Storage of partners, the consents users give them, and authorization codes (stored by hash).
 */
import { Context, DateTime, Effect, Either, HashMap, Layer, Option } from "effect"
import { Conflict } from "../Errors.js"
import type { ClientId, PartnerId, UserId } from "../Ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import type { AuthorizationCode, Consent, Partner } from "./Partner.js"

export class PartnerRepository extends Context.Tag("@cobro/core/PartnerRepository")<
  PartnerRepository,
  {
    /** Fails with `Conflict` when the id, the client id or the slug is taken. */
    readonly insert: (partner: Partner) => Effect.Effect<void, Conflict>
    /** Replaces the partner with the same id (its client id and slug do not change). */
    readonly update: (partner: Partner) => Effect.Effect<void>
    readonly findById: (id: PartnerId) => Effect.Effect<Option.Option<Partner>>
    /** The same, locking the row for the rest of the unit of work. */
    readonly findByIdForUpdate: (id: PartnerId) => Effect.Effect<Option.Option<Partner>>
    readonly findByClientId: (clientId: ClientId) => Effect.Effect<Option.Option<Partner>>
    /** Inserts or refreshes the consent of (partner, user). */
    readonly saveConsent: (consent: Consent) => Effect.Effect<void>
    readonly findConsent: (partner: PartnerId, user: UserId) => Effect.Effect<Option.Option<Consent>>
    /** Every consent given to the partner, newest grant first (then by user id). */
    readonly listConsents: (partner: PartnerId) => Effect.Effect<ReadonlyArray<Consent>>
    /** Fails with `Conflict` when the hash is taken (a random collision: never in practice). */
    readonly insertCode: (code: AuthorizationCode) => Effect.Effect<void, Conflict>
    /** The code with this hash, locking it for the rest of the unit of work. */
    readonly findCodeForUpdate: (codeHash: string) => Effect.Effect<Option.Option<AuthorizationCode>>
    readonly updateCode: (code: AuthorizationCode) => Effect.Effect<void>
  }
>() {}

/**
 * The `Conflict`s the adapters raise (memory and SQL alike), defined once. `clientIdTaken` is
 * also a credential's (users and partners share the client id space).
 */
export const conflicts = {
  idTaken: () => new Conflict({ key: "partner.id.taken", message: "a partner with this id exists" }),
  clientIdTaken: () => new Conflict({ key: "client_id.taken", message: "the client id is taken" }),
  slugTaken: (slug: string) =>
    new Conflict({ key: "partner.slug.taken", message: `the slug '${slug}' is used by another partner` }),
  codeTaken: () => new Conflict({ key: "code.taken", message: "code collision" })
}

interface Tables {
  readonly partners: HashMap.HashMap<PartnerId, Partner>
  readonly consents: HashMap.HashMap<string, Consent>
  readonly codes: HashMap.HashMap<string, AuthorizationCode>
}

/** Newest grant first, then by user id: the order of `listConsents` in every adapter. */
export const newestConsentFirst = (a: Consent, b: Consent): number =>
  DateTime.toEpochMillis(b.granted_at) - DateTime.toEpochMillis(a.granted_at) ||
  (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0)

const consentKey = (partner: PartnerId, user: UserId) => JSON.stringify([partner, user])

const clash = (partners: HashMap.HashMap<PartnerId, Partner>, partner: Partner): Option.Option<Conflict> => {
  if (HashMap.has(partners, partner.partner_id)) {
    return Option.some(conflicts.idTaken())
  }
  for (const other of HashMap.values(partners)) {
    if (other.client_id === partner.client_id) {
      return Option.some(conflicts.clientIdTaken())
    }
    if (other.slug === partner.slug) {
      return Option.some(conflicts.slugTaken(partner.slug))
    }
  }
  return Option.none()
}

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({
    partners: HashMap.empty(),
    consents: HashMap.empty(),
    codes: HashMap.empty()
  })
  const findById = (id: PartnerId) => Effect.map(tables.get, (t) => HashMap.get(t.partners, id))
  return PartnerRepository.of({
    insert: (partner) =>
      tables.updateOrFail((t) =>
        Option.match(clash(t.partners, partner), {
          onNone: () =>
            Either.right({ ...t, partners: HashMap.set(t.partners, partner.partner_id, partner) }),
          onSome: Either.left
        })
      ),
    update: (partner) =>
      tables.update((t) =>
        HashMap.has(t.partners, partner.partner_id)
          ? { ...t, partners: HashMap.set(t.partners, partner.partner_id, partner) }
          : t
      ),
    findById,
    findByIdForUpdate: findById,
    findByClientId: (clientId) =>
      Effect.map(tables.get, (t) => HashMap.findFirst(t.partners, (p) => p.client_id === clientId)).pipe(
        Effect.map(Option.map(([, p]) => p))
      ),
    saveConsent: (consent) =>
      tables.update((t) => ({
        ...t,
        consents: HashMap.set(t.consents, consentKey(consent.partner_id, consent.user_id), consent)
      })),
    findConsent: (partner, user) =>
      Effect.map(tables.get, (t) => HashMap.get(t.consents, consentKey(partner, user))),
    listConsents: (partner) =>
      Effect.map(tables.get, (t) =>
        Array.from(HashMap.values(t.consents))
          .filter((c) => c.partner_id === partner)
          .sort(newestConsentFirst)
      ),
    insertCode: (code) =>
      tables.updateOrFail((t) =>
        HashMap.has(t.codes, code.code_hash)
          ? Either.left(conflicts.codeTaken())
          : Either.right({ ...t, codes: HashMap.set(t.codes, code.code_hash, code) })
      ),
    findCodeForUpdate: (hash) => Effect.map(tables.get, (t) => HashMap.get(t.codes, hash)),
    updateCode: (code) =>
      tables.update((t) =>
        HashMap.has(t.codes, code.code_hash) ? { ...t, codes: HashMap.set(t.codes, code.code_hash, code) } : t
      )
  })
})

export const layerMemory: Layer.Layer<PartnerRepository, never, MemoryDb> = Layer.effect(
  PartnerRepository,
  makeMemory
)
