/**
 * Partners' dashboard passwords (`WebSessionRepository`): one row per partner that has one, its
 * `Crypto.hashPassword` hash (never the password). A partner's API credential stays its client id
 * and secret (`cobro_partners`). Times are UTC epoch milliseconds.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_partner_passwords (
    partner_id TEXT PRIMARY KEY REFERENCES cobro_partners (partner_id),
    password_hash TEXT NOT NULL,
    updated_ms BIGINT NOT NULL
  )`)
})
