/**
 * Storage of the dashboard's web sessions (`WebSessions`) and of partners' dashboard passwords.
 *
 * - A session is stored under the SHA-256 of its token (lower-case hex): the token itself, which
 *   is the session cookie, is never stored, so a copy of the database opens no session. It acts
 *   for a merchant (`kind` "user") or a partner ("partner"); its times are real time.
 * - A partner's password (for the dashboard only; a partner's API credential is its client id and
 *   secret) is stored as `Crypto.hashPassword`'s hash. Merchants' passwords are their credential's
 *   `password_hash` (`CredentialRepository`).
 */
import { Context, DateTime, Effect, HashMap, Layer, Option, Schema } from "effect"
import { PartnerId, UserId } from "../Ids.js"
import { Class } from "../internal/schemaClass.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { Timestamp } from "../Wire.js"

export const SessionKind = Schema.Literal("user", "partner")
export type SessionKind = typeof SessionKind.Type

export class WebSession extends Class<WebSession>("WebSession")({
  /** Lower-case hex SHA-256 of the session token; the token is never stored. */
  session_hash: Schema.String,
  kind: SessionKind,
  /** The merchant of a "user" session; null for a partner's. */
  user_id: Schema.NullOr(UserId),
  /** The partner of a "partner" session; null for a merchant's. */
  partner_id: Schema.NullOr(PartnerId),
  /** Sign-in (real time): the absolute expiry counts from here. */
  creation_timestamp: Timestamp,
  /** The last request that used it (real time): the idle expiry counts from here. */
  last_seen_timestamp: Timestamp
}) {}

export class PartnerPassword extends Class<PartnerPassword>("PartnerPassword")({
  partner_id: PartnerId,
  /** `Crypto.hashPassword` of the password. */
  password_hash: Schema.String,
  updated_timestamp: Timestamp
}) {}

export class WebSessionRepository extends Context.Tag("@cobro/core/WebSessionRepository")<
  WebSessionRepository,
  {
    /** Stores a new session (its hash is new: 32 random bytes). */
    readonly insertSession: (session: WebSession) => Effect.Effect<void>
    /** The session of `hash`, if any. */
    readonly findSession: (hash: string) => Effect.Effect<Option.Option<WebSession>>
    /** Moves the session's `last_seen_timestamp` (nothing when it is gone). */
    readonly touchSession: (hash: string, lastSeen: DateTime.Utc) => Effect.Effect<void>
    /** Forgets the session (nothing when it is gone). */
    readonly deleteSession: (hash: string) => Effect.Effect<void>
    /** Forgets every session of a merchant (`kind` "user") or a partner ("partner"), e.g. on a new password. */
    readonly deleteSessionsOf: (kind: SessionKind, id: string) => Effect.Effect<void>
    /**
     * Forgets every session last used at or before `idleBefore` or opened at or before
     * `createdBefore` (the ones no request can use any more): returns how many.
     */
    readonly deleteExpired: (idleBefore: DateTime.Utc, createdBefore: DateTime.Utc) => Effect.Effect<number>
    /** The partner's dashboard password, if it has one. */
    readonly findPartnerPassword: (partner: PartnerId) => Effect.Effect<Option.Option<PartnerPassword>>
    /** Stores the partner's password, replacing the one there. */
    readonly putPartnerPassword: (password: PartnerPassword) => Effect.Effect<void>
  }
>() {}

interface Tables {
  readonly sessions: HashMap.HashMap<string, WebSession>
  readonly partnerPasswords: HashMap.HashMap<string, PartnerPassword>
}

const ownerOf = (s: WebSession) => (s.kind === "user" ? s.user_id : s.partner_id)

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({ sessions: HashMap.empty(), partnerPasswords: HashMap.empty() })
  return WebSessionRepository.of({
    insertSession: (session) =>
      tables.update((t) => ({ ...t, sessions: HashMap.set(t.sessions, session.session_hash, session) })),
    findSession: (hash) => Effect.map(tables.get, (t) => HashMap.get(t.sessions, hash)),
    touchSession: (hash, lastSeen) =>
      tables.update((t) => ({
        ...t,
        sessions: HashMap.modify(
          t.sessions,
          hash,
          (s) => new WebSession({ ...s, last_seen_timestamp: lastSeen })
        )
      })),
    deleteSession: (hash) => tables.update((t) => ({ ...t, sessions: HashMap.remove(t.sessions, hash) })),
    deleteSessionsOf: (kind, id) =>
      tables.update((t) => ({
        ...t,
        sessions: HashMap.filter(t.sessions, (s) => !(s.kind === kind && ownerOf(s) === id))
      })),
    deleteExpired: (idleBefore, createdBefore) =>
      tables.modify((t) => {
        const expired = (s: WebSession) =>
          DateTime.lessThanOrEqualTo(s.last_seen_timestamp, idleBefore) ||
          DateTime.lessThanOrEqualTo(s.creation_timestamp, createdBefore)
        const kept = HashMap.filter(t.sessions, (s) => !expired(s))
        return [HashMap.size(t.sessions) - HashMap.size(kept), { ...t, sessions: kept }] as const
      }),
    findPartnerPassword: (partner) => Effect.map(tables.get, (t) => HashMap.get(t.partnerPasswords, partner)),
    putPartnerPassword: (password) =>
      tables.update((t) => ({
        ...t,
        partnerPasswords: HashMap.set(t.partnerPasswords, password.partner_id, password)
      }))
  })
})

/** The sessions and partners' passwords in memory (one process), in the memory store's units of work. */
export const layerMemory: Layer.Layer<WebSessionRepository, never, MemoryDb> = Layer.effect(
  WebSessionRepository,
  makeMemory
)
