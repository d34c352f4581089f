/**
 * `PartnerRepository` over `SqlClient`: partners (unique slug and client id), consents and
 * authorization codes by the SHA-256 of their text.
 *
 * A code is single use: the exchange reads it with `findCodeForUpdate` (a row lock on Postgres;
 * SQLite runs one unit of work at a time) and marks it used with `updateCode`, whose UPDATE only
 * matches a row not used yet. Should a second unit of work ever reach it with a stale unused
 * copy, nothing matches and the unit of work dies and rolls back, so no second token can be
 * issued from one code.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Partner as P } from "@cobro/core"
import { PartnerRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import * as Documents from "./internal/documents/account.js"
import {
  Doc,
  DocOnly,
  Millis,
  NullableMillis,
  findAll,
  findByKey,
  findOne,
  orDie,
  write,
  insertUnique
} from "./internal/sql.js"

/** A row of `cobro_partners` as written. */
const PartnerRow = Schema.Struct({
  partner_id: Schema.String,
  slug: Schema.String,
  client_id: Schema.String,
  doc: Doc(Documents.Partner)
})
const partnerRow = (p: P.Partner): typeof PartnerRow.Type => ({
  partner_id: p.partner_id,
  slug: p.slug,
  client_id: p.client_id,
  doc: p
})

/** A row of `cobro_partner_consents`, as the consent it is. */
const ConsentRow = Schema.transform(
  Schema.Struct({ partner_id: Ids.PartnerId, user_id: Ids.UserId, granted_ms: Millis }),
  Schema.typeSchema(P.Consent),
  {
    strict: true,
    decode: (r) => new P.Consent({ partner_id: r.partner_id, user_id: r.user_id, granted_at: r.granted_ms }),
    encode: (c) => ({ partner_id: c.partner_id, user_id: c.user_id, granted_ms: c.granted_at })
  }
)

/** A row of `cobro_authorization_codes`, as the code it is. */
const CodeRow = Schema.transform(
  Schema.Struct({
    code_hash: Schema.String,
    partner_id: Ids.PartnerId,
    user_id: Ids.UserId,
    referred_user_id: Schema.NullOr(Schema.String),
    state: Schema.NullOr(Schema.String),
    created_ms: Millis,
    expires_ms: Millis,
    used_ms: NullableMillis
  }),
  Schema.typeSchema(P.AuthorizationCode),
  {
    strict: true,
    decode: ({ created_ms, expires_ms, used_ms, ...r }) =>
      new P.AuthorizationCode({
        ...r,
        creation_timestamp: created_ms,
        expires_at: expires_ms,
        used_at: used_ms
      }),
    encode: (c) => ({
      code_hash: c.code_hash,
      partner_id: c.partner_id,
      user_id: c.user_id,
      referred_user_id: c.referred_user_id,
      state: c.state,
      created_ms: c.creation_timestamp,
      expires_ms: c.expires_at,
      used_ms: c.used_at
    })
  }
)

const Stored = DocOnly(Documents.Partner)

export const make: Effect.Effect<Port.PartnerRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = insertUnique(sql, "cobro_partners", PartnerRow)
    /**
     * The same `Conflict`s, with the same precedence, as the memory adapter: the id, then the
     * client id, then the slug (databases differ in which constraint they report first).
     */
    const holders = findAll({
      Request: PartnerRow,
      Result: Schema.Struct({ partner_id: Schema.String, client_id: Schema.String }),
      execute: (p) => sql`SELECT partner_id, client_id FROM cobro_partners
        WHERE partner_id = ${p.partner_id} OR client_id = ${p.client_id} OR slug = ${p.slug}`
    })
    const partnerConflict = (partner: P.Partner) =>
      Effect.flatMap(holders(partnerRow(partner)), (rows) =>
        Effect.fail(
          rows.some((r) => r.partner_id === partner.partner_id)
            ? Port.conflicts.idTaken()
            : rows.some((r) => r.client_id === partner.client_id)
              ? Port.conflicts.clientIdTaken()
              : Port.conflicts.slugTaken(partner.slug)
        )
      )
    const update = write({
      Request: PartnerRow,
      execute: ({ partner_id, ...fields }) =>
        sql`UPDATE cobro_partners SET ${sql.update(fields)} WHERE partner_id = ${partner_id}`
    })
    const byId = findByKey(sql, "cobro_partners", "partner_id", Stored)
    const saveConsent = write({
      Request: ConsentRow,
      execute: (r) => sql`INSERT INTO cobro_partner_consents ${sql.insert(r)}
        ON CONFLICT (partner_id, user_id) DO UPDATE SET granted_ms = excluded.granted_ms`
    })
    const findConsent = findOne({
      Request: Schema.Tuple(Schema.String, Schema.String),
      Result: ConsentRow,
      execute: ([partner, user]) =>
        sql`SELECT * FROM cobro_partner_consents WHERE partner_id = ${partner} AND user_id = ${user}`
    })
    const listConsents = findAll({
      Request: Schema.String,
      Result: ConsentRow,
      // The primary key (partner_id, user_id) serves the filter; a partner's consents are few.
      execute: (partner) => sql`SELECT * FROM cobro_partner_consents WHERE partner_id = ${partner}`
    })
    const insertCode = insertUnique(sql, "cobro_authorization_codes", CodeRow)
    const encodeCode = Schema.encode(CodeRow)

    /**
     * Marks a code used only if it is still unused; whether a row matched. (Not "or used at the
     * same instant": two racing exchanges may well share a millisecond.)
     */
    const updateCode = (code: P.AuthorizationCode) =>
      Effect.gen(function* () {
        const { code_hash: _, ...fields } = yield* encodeCode(code)
        if (code.used_at === null) {
          yield* sql`UPDATE cobro_authorization_codes SET ${sql.update(fields)} WHERE code_hash = ${code.code_hash}`
          return
        }
        const marked = yield* sql`UPDATE cobro_authorization_codes SET ${sql.update(fields)}
          WHERE code_hash = ${code.code_hash} AND used_ms IS NULL RETURNING code_hash`
        if (marked.length > 0) return
        // Nothing matched: either no such code (a no-op, as in memory) or it was used meanwhile.
        const exists =
          yield* sql`SELECT code_hash FROM cobro_authorization_codes WHERE code_hash = ${code.code_hash}`
        if (exists.length > 0) {
          return yield* Effect.dieMessage("the authorization code was used by a concurrent exchange")
        }
      }).pipe(orDie)

    return Port.PartnerRepository.of({
      insert: (partner) => insert(partnerRow(partner), () => partnerConflict(partner)),
      update: (partner) => update(partnerRow(partner)),
      findById: byId(false),
      findByIdForUpdate: byId(true),
      findByClientId: findByKey(sql, "cobro_partners", "client_id", Stored)(false),
      saveConsent,
      findConsent: (partner, user) => findConsent([partner, user]),
      // Sorted here, not by the database: text collation differs between dialects.
      listConsents: (partner) =>
        Effect.map(listConsents(partner), (rows) => [...rows].sort(Port.newestConsentFirst)),
      insertCode: (code) => insertCode(code, () => Effect.fail(Port.conflicts.codeTaken())),
      findCodeForUpdate: findByKey(sql, "cobro_authorization_codes", "code_hash", CodeRow, "*")(true),
      updateCode
    })
  }
)

export const layer: Layer.Layer<Port.PartnerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.PartnerRepository,
  make
)
