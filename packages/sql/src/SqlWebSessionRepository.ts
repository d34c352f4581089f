/**
 * `WebSessionRepository` over `SqlClient`: `cobro_web_sessions` (one row per session, keyed by
 * the hash of its token) and `cobro_partner_passwords` (one row per partner with a dashboard
 * password). Each statement is one row's insert, update, upsert or delete, but for the purge of
 * expired sessions.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Spans } from "@cobro/core"
import { WebSessionRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import { Millis, findAll, findOne, write } from "./internal/sql.js"

const SessionRow = Schema.transform(
  Schema.Struct({
    session_hash: Schema.String,
    kind: Port.SessionKind,
    user_id: Schema.NullOr(Ids.UserId),
    partner_id: Schema.NullOr(Ids.PartnerId),
    created_ms: Millis,
    last_seen_ms: Millis
  }),
  Schema.typeSchema(Port.WebSession),
  {
    strict: true,
    decode: ({ created_ms, last_seen_ms, ...r }) =>
      new Port.WebSession({ ...r, creation_timestamp: created_ms, last_seen_timestamp: last_seen_ms }),
    encode: (s) => ({
      session_hash: s.session_hash,
      kind: s.kind,
      user_id: s.user_id,
      partner_id: s.partner_id,
      created_ms: s.creation_timestamp,
      last_seen_ms: s.last_seen_timestamp
    })
  }
)

const PasswordRow = Schema.transform(
  Schema.Struct({ partner_id: Ids.PartnerId, password_hash: Schema.String, updated_ms: Millis }),
  Schema.typeSchema(Port.PartnerPassword),
  {
    strict: true,
    decode: ({ updated_ms, ...r }) => new Port.PartnerPassword({ ...r, updated_timestamp: updated_ms }),
    encode: (p) => ({
      partner_id: p.partner_id,
      password_hash: p.password_hash,
      updated_ms: p.updated_timestamp
    })
  }
)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertSession = write({
    Request: SessionRow,
    execute: (row) => sql`INSERT INTO cobro_web_sessions ${sql.insert(row)}`
  })
  const findSession = findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (hash) => sql`SELECT * FROM cobro_web_sessions WHERE session_hash = ${hash}`
  })
  const touchSession = write({
    Request: Schema.Struct({ hash: Schema.String, last_seen_ms: Millis }),
    execute: ({ hash, last_seen_ms }) =>
      sql`UPDATE cobro_web_sessions SET last_seen_ms = ${last_seen_ms} WHERE session_hash = ${hash}`
  })
  const deleteSession = write({
    Request: Schema.String,
    execute: (hash) => sql`DELETE FROM cobro_web_sessions WHERE session_hash = ${hash}`
  })
  const deleteSessionsOf = write({
    Request: Schema.Struct({ kind: Port.SessionKind, id: Schema.String }),
    execute: ({ id, kind }) =>
      kind === "user"
        ? sql`DELETE FROM cobro_web_sessions WHERE kind = 'user' AND user_id = ${id}`
        : sql`DELETE FROM cobro_web_sessions WHERE kind = 'partner' AND partner_id = ${id}`
  })
  const deleteExpired = findAll({
    Request: Schema.Struct({ idle_before_ms: Millis, created_before_ms: Millis }),
    Result: Schema.Struct({ session_hash: Schema.String }),
    execute: ({ created_before_ms, idle_before_ms }) =>
      sql`DELETE FROM cobro_web_sessions
        WHERE last_seen_ms <= ${idle_before_ms} OR created_ms <= ${created_before_ms} RETURNING session_hash`
  })
  const findPartnerPassword = findOne({
    Request: Schema.String,
    Result: PasswordRow,
    execute: (partner) => sql`SELECT * FROM cobro_partner_passwords WHERE partner_id = ${partner}`
  })
  const putPartnerPassword = write({
    Request: PasswordRow,
    execute: ({ partner_id, ...fields }) =>
      sql`INSERT INTO cobro_partner_passwords ${sql.insert({ partner_id, ...fields })}
        ON CONFLICT (partner_id) DO UPDATE SET ${sql.update(fields)}`
  })

  return Port.WebSessionRepository.of({
    insertSession: (session) => insertSession(session).pipe(Spans.span("WebSessionRepository.insertSession")),
    findSession: (hash) => findSession(hash).pipe(Spans.span("WebSessionRepository.findSession")),
    touchSession: (hash, lastSeen) =>
      touchSession({ hash, last_seen_ms: lastSeen }).pipe(Spans.span("WebSessionRepository.touchSession")),
    deleteSession: (hash) => deleteSession(hash).pipe(Spans.span("WebSessionRepository.deleteSession")),
    deleteSessionsOf: (kind, id) =>
      deleteSessionsOf({ kind, id }).pipe(Spans.span("WebSessionRepository.deleteSessionsOf")),
    deleteExpired: (idleBefore, createdBefore) =>
      deleteExpired({ idle_before_ms: idleBefore, created_before_ms: createdBefore }).pipe(
        Effect.map((rows) => rows.length),
        Spans.span("WebSessionRepository.deleteExpired")
      ),
    findPartnerPassword: (partner) =>
      findPartnerPassword(partner).pipe(Spans.span("WebSessionRepository.findPartnerPassword")),
    putPartnerPassword: (password) =>
      putPartnerPassword(password).pipe(Spans.span("WebSessionRepository.putPartnerPassword"))
  })
})

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.WebSessionRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.WebSessionRepository,
  make
)
