/**
 * Who may call: users' API credentials, partners, the consents users give them, authorization
 * codes and access tokens. Secrets are stored only sealed (`Crypto.encrypt`) and tokens and codes
 * only as their SHA-256 hashes; the primary keys and UNIQUE constraints are the uniqueness rules
 * of `CredentialRepository` and `PartnerRepository`. Times are UTC epoch milliseconds.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  // One credential per user; the client id identifies it across users.
  yield* sql.unsafe(`CREATE TABLE cobro_credentials (
    user_id TEXT PRIMARY KEY REFERENCES cobro_users (user_id),
    client_id TEXT NOT NULL,
    client_secret_sealed TEXT NOT NULL,
    password_hash TEXT,
    created_ms BIGINT NOT NULL,
    secret_rotated_ms BIGINT NOT NULL,
    CONSTRAINT cobro_credentials_client_id UNIQUE (client_id)
  )`)

  // The partner's commission, URLs and sealed secret live in `doc` (the JSON of its wire form).
  yield* sql.unsafe(`CREATE TABLE cobro_partners (
    partner_id TEXT PRIMARY KEY,
    slug TEXT NOT NULL,
    client_id TEXT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_partners_slug UNIQUE (slug),
    CONSTRAINT cobro_partners_client_id UNIQUE (client_id)
  )`)

  yield* sql.unsafe(`CREATE TABLE cobro_partner_consents (
    partner_id TEXT NOT NULL REFERENCES cobro_partners (partner_id),
    user_id TEXT NOT NULL REFERENCES cobro_users (user_id),
    granted_ms BIGINT NOT NULL,
    PRIMARY KEY (partner_id, user_id)
  )`)

  // Single use: the first exchange sets used_ms (under the row lock of the unit of work).
  yield* sql.unsafe(`CREATE TABLE cobro_authorization_codes (
    code_hash TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES cobro_partners (partner_id),
    user_id TEXT NOT NULL REFERENCES cobro_users (user_id),
    referred_user_id TEXT,
    state TEXT,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms BIGINT
  )`)

  // User and partner tokens; expires_ms null: never expires (revocable only).
  yield* sql.unsafe(`CREATE TABLE cobro_access_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('user', 'partner')),
    user_id TEXT NOT NULL REFERENCES cobro_users (user_id),
    partner_id TEXT REFERENCES cobro_partners (partner_id),
    code_hash TEXT,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    revoked_ms BIGINT
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_access_tokens_user ON cobro_access_tokens (user_id, kind)`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_access_tokens_code ON cobro_access_tokens (code_hash) WHERE code_hash IS NOT NULL`
  )
})
