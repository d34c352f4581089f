/**
 * Merchants' second factors (`SecondFactorRepository`): the enrolled factor and the enrolment in
 * progress of each merchant (one row each, keyed by merchant and status), and the one-time codes
 * sent by e-mail, keyed by what they verify (a verification request, an enrolment, a factor).
 * A TOTP secret is stored only sealed, a code only as a keyed hash. Times are UTC epoch
 * milliseconds.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_second_factors (
    user_id TEXT NOT NULL REFERENCES cobro_users (user_id),
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE')),
    kind TEXT NOT NULL CHECK (kind IN ('totp', 'email')),
    secret_sealed TEXT,
    last_step BIGINT,
    failures INTEGER NOT NULL,
    locked_until_ms BIGINT,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    confirmed_ms BIGINT,
    PRIMARY KEY (user_id, status)
  )`)
  yield* sql.unsafe(`CREATE TABLE cobro_second_factor_codes (
    subject TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES cobro_users (user_id),
    code_hash TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms BIGINT
  )`)
})
