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
import type { SqlError } from "@effect/sql/SqlError"
import { Errors, Ids, Partner as P, PartnerRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { decodeJson, encodeJson, isUniqueViolation, millis, recoverable, toDateTime } from "./internal/sql.js"

interface ConsentRow {
  readonly partner_id: string
  readonly user_id: string
  readonly granted_ms: unknown
}

interface CodeRow {
  readonly code_hash: string
  readonly partner_id: string
  readonly user_id: string
  readonly referred_user_id: string | null
  readonly state: string | null
  readonly created_ms: unknown
  readonly expires_ms: unknown
  readonly used_ms: unknown
}

const fromCodeRow = (r: CodeRow) =>
  new P.AuthorizationCode({
    code_hash: r.code_hash,
    partner_id: Ids.PartnerId.make(r.partner_id),
    user_id: Ids.UserId.make(r.user_id),
    referred_user_id: r.referred_user_id,
    state: r.state,
    creation_timestamp: toDateTime(r.created_ms),
    expires_at: toDateTime(r.expires_ms),
    used_at: r.used_ms === null ? null : toDateTime(r.used_ms)
  })

const codeRow = (c: P.AuthorizationCode) => ({
  code_hash: c.code_hash,
  partner_id: c.partner_id,
  user_id: c.user_id,
  referred_user_id: c.referred_user_id,
  state: c.state,
  created_ms: millis(c.creation_timestamp),
  expires_ms: millis(c.expires_at),
  used_ms: c.used_at === null ? null : millis(c.used_at)
})

const codeConflict = (e: SqlError): Effect.Effect<never, Errors.Conflict> =>
  isUniqueViolation(e)
    ? Effect.fail(new Errors.Conflict({ key: "code.taken", message: "code collision" }))
    : Effect.die(e)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(P.Partner)
  const decode = decodeJson(P.Partner)
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })
  const onePartner = (rows: ReadonlyArray<{ doc: unknown }>) =>
    Option.map(Option.fromNullable(rows[0]), (r) => decode(r.doc))
  const partnerRow = (p: P.Partner) => ({
    partner_id: p.partner_id,
    slug: p.slug,
    client_id: p.client_id,
    doc: encode(p)
  })

  /**
   * The same `Conflict` keys, with the same precedence, as the memory adapter: the id, then the
   * client id, then the slug (databases differ in which constraint they report first).
   */
  const partnerConflict =
    (partner: P.Partner) =>
    (e: SqlError): Effect.Effect<never, Errors.Conflict> =>
      !isUniqueViolation(e)
        ? Effect.die(e)
        : sql<{ partner_id: string; client_id: string; slug: string }>`SELECT partner_id, client_id, slug
            FROM cobro_partners
            WHERE partner_id = ${partner.partner_id} OR client_id = ${partner.client_id} OR slug = ${partner.slug}`.pipe(
            Effect.orDie,
            Effect.flatMap((rows) =>
              Effect.fail(
                rows.some((r) => r.partner_id === partner.partner_id)
                  ? new Errors.Conflict({ key: "partner.id.taken", message: "a partner with this id exists" })
                  : rows.some((r) => r.client_id === partner.client_id)
                    ? new Errors.Conflict({ key: "client_id.taken", message: "the client id is taken" })
                    : new Errors.Conflict({
                        key: "partner.slug.taken",
                        message: `the slug '${partner.slug}' is used by another partner`
                      })
              )
            )
          )

  /**
   * Marks a code used only if it is still unused; whether a row matched. (Not "or used at the same
   * instant": two racing exchanges may well share a millisecond.)
   */
  const markUsed = (c: P.AuthorizationCode) => {
    const { code_hash: _, ...fields } = codeRow(c)
    return sql<{ code_hash: string }>`UPDATE cobro_authorization_codes SET ${sql.update(fields)}
      WHERE code_hash = ${c.code_hash} AND used_ms IS NULL
      RETURNING code_hash`.pipe(Effect.map((rows) => rows.length > 0))
  }

  return Port.PartnerRepository.of({
    insert: (partner) =>
      recoverable(sql)(sql`INSERT INTO cobro_partners ${sql.insert(partnerRow(partner))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", partnerConflict(partner))
      ),
    update: (partner) => {
      const { partner_id: _, ...fields } = partnerRow(partner)
      return sql`UPDATE cobro_partners SET ${sql.update(fields)} WHERE partner_id = ${partner.partner_id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    },
    findById: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_partners WHERE partner_id = ${id}`.pipe(
        Effect.map(onePartner),
        Effect.orDie
      ),
    findByIdForUpdate: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_partners WHERE partner_id = ${id}${forUpdate}`.pipe(
        Effect.map(onePartner),
        Effect.orDie
      ),
    findByClientId: (clientId) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_partners WHERE client_id = ${clientId}`.pipe(
        Effect.map(onePartner),
        Effect.orDie
      ),
    saveConsent: (consent) =>
      sql`INSERT INTO cobro_partner_consents ${sql.insert({
        partner_id: consent.partner_id,
        user_id: consent.user_id,
        granted_ms: millis(consent.granted_at)
      })} ON CONFLICT (partner_id, user_id) DO UPDATE SET granted_ms = excluded.granted_ms`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    findConsent: (partner, user) =>
      sql<ConsentRow>`SELECT * FROM cobro_partner_consents WHERE partner_id = ${partner} AND user_id = ${user}`.pipe(
        Effect.map((rows) =>
          Option.map(
            Option.fromNullable(rows[0]),
            (r) =>
              new P.Consent({
                partner_id: Ids.PartnerId.make(r.partner_id),
                user_id: Ids.UserId.make(r.user_id),
                granted_at: toDateTime(r.granted_ms)
              })
          )
        ),
        Effect.orDie
      ),
    insertCode: (code) =>
      recoverable(sql)(sql`INSERT INTO cobro_authorization_codes ${sql.insert(codeRow(code))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", codeConflict)
      ),
    findCodeForUpdate: (hash) =>
      sql<CodeRow>`SELECT * FROM cobro_authorization_codes WHERE code_hash = ${hash}${forUpdate}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromCodeRow)),
        Effect.orDie
      ),
    updateCode: (code) =>
      Effect.gen(function* () {
        if (code.used_at === null) {
          const { code_hash: _, ...fields } = codeRow(code)
          yield* sql`UPDATE cobro_authorization_codes SET ${sql.update(fields)} WHERE code_hash = ${code.code_hash}`
          return
        }
        if (yield* markUsed(code)) return
        // Nothing matched: either no such code (a no-op, as in memory) or it was used meanwhile.
        const exists =
          yield* sql`SELECT code_hash FROM cobro_authorization_codes WHERE code_hash = ${code.code_hash}`
        if (exists.length > 0) {
          return yield* Effect.dieMessage("the authorization code was used by a concurrent exchange")
        }
      }).pipe(Effect.orDie)
  })
})

export const layer: Layer.Layer<Port.PartnerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.PartnerRepository,
  make
)
