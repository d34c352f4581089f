/**
 * `Idempotency-Key` records (`IdempotencyRepository`). The primary key (scope, key) is what lets
 * only one request own a key, across instances: `begin` is an `INSERT ... ON CONFLICT DO NOTHING`.
 * Times are UTC epoch milliseconds; `locked_until_ms` is also the owner's fencing token. A
 * completed record carries its response, an in-flight one never does.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql.unsafe(`CREATE TABLE cobro_idempotency_keys (
    scope TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
    locked_until_ms BIGINT NOT NULL,
    response_status INTEGER,
    response_body TEXT,
    created_ms BIGINT NOT NULL,
    CONSTRAINT cobro_idempotency_keys_pkey PRIMARY KEY (scope, idempotency_key),
    CONSTRAINT cobro_idempotency_keys_response CHECK (
      (state = 'in_flight' AND response_status IS NULL AND response_body IS NULL)
      OR (state = 'completed' AND response_status IS NOT NULL AND response_body IS NOT NULL)
    )
  )`)
  // For the purge of expired keys.
  yield* sql.unsafe(`CREATE INDEX cobro_idempotency_keys_created ON cobro_idempotency_keys (created_ms)`)
})
