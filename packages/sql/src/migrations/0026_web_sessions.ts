/**
 * The dashboard's web sessions (`WebSessionRepository`): one row per session, keyed by the
 * SHA-256 of its token (the token, the session cookie, is never stored). A session acts for a
 * merchant (`kind` 'user', `user_id`) or a partner ('partner', `partner_id`). Times are real time,
 * UTC epoch milliseconds: sign-in (the absolute expiry counts from it) and the last use (the idle
 * expiry counts from it).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_web_sessions (
    session_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('user', 'partner')),
    user_id TEXT REFERENCES cobro_users (user_id),
    partner_id TEXT REFERENCES cobro_partners (partner_id),
    created_ms BIGINT NOT NULL,
    last_seen_ms BIGINT NOT NULL,
    CHECK ((kind = 'user' AND user_id IS NOT NULL AND partner_id IS NULL)
      OR (kind = 'partner' AND partner_id IS NOT NULL AND user_id IS NULL))
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_web_sessions_user ON cobro_web_sessions (user_id)`)
  yield* sql.unsafe(`CREATE INDEX cobro_web_sessions_partner ON cobro_web_sessions (partner_id)`)
})
