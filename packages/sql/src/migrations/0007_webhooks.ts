/**
 * Webhook delivery state (`WebhookDeliveryRepository`): one row per outbox event that has a
 * webhook URL, written by the outbox append in the same transaction, and the log of attempts.
 * Times are UTC epoch milliseconds. Events written before this migration get their rows here, so
 * none of them is left undelivered.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.onDialectOrElse({
    pg: () => "BIGSERIAL PRIMARY KEY",
    orElse: () => "INTEGER PRIMARY KEY AUTOINCREMENT"
  })
  // Ordering by event id must match the memory adapter's (code-point order).
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  yield* sql.unsafe(`CREATE TABLE cobro_webhook_deliveries (
    event_id ${ordered} PRIMARY KEY,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    webhook_url TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts INTEGER NOT NULL CHECK (attempts >= 0),
    round_attempts INTEGER NOT NULL CHECK (round_attempts >= 0),
    replays INTEGER NOT NULL CHECK (replays >= 0),
    next_attempt_ms BIGINT,
    lease_owner TEXT,
    lease_until_ms BIGINT,
    last_attempt_ms BIGINT,
    last_status_code INTEGER,
    last_error TEXT,
    created_ms BIGINT NOT NULL,
    finished_ms BIGINT,
    CONSTRAINT cobro_webhook_deliveries_due CHECK ((status = 'pending') = (next_attempt_ms IS NOT NULL)),
    CONSTRAINT cobro_webhook_deliveries_finished CHECK ((status = 'pending') = (finished_ms IS NULL)),
    CONSTRAINT cobro_webhook_deliveries_lease CHECK ((lease_owner IS NULL) = (lease_until_ms IS NULL))
  )`)
  // What the workers' claim scans: the pending rows by due time.
  yield* sql.unsafe(`CREATE INDEX cobro_webhook_deliveries_pending
    ON cobro_webhook_deliveries (next_attempt_ms, event_id) WHERE status = 'pending'`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_webhook_deliveries_user ON cobro_webhook_deliveries (user_id, event_id)`
  )
  yield* sql.unsafe(
    `CREATE INDEX cobro_webhook_deliveries_status ON cobro_webhook_deliveries (status, event_id)`
  )

  yield* sql.unsafe(`CREATE TABLE cobro_webhook_attempts (
    seq ${serial},
    attempt_id TEXT NOT NULL UNIQUE,
    event_id TEXT NOT NULL REFERENCES cobro_webhook_deliveries (event_id),
    number INTEGER NOT NULL CHECK (number > 0),
    attempted_ms BIGINT NOT NULL,
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    status_code INTEGER,
    error TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed')),
    worker TEXT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_webhook_attempts_event ON cobro_webhook_attempts (event_id, seq)`)

  // Events already in the outbox: pending, due at once, with the body the outbox append would
  // have fixed (the payload's JSON text, keys in their written order).
  const [url, payload] = sql.onDialectOrElse({
    pg: () => [`doc::json ->> 'webhook_url'`, `(doc::json -> 'payload')::text`],
    orElse: () => [`json_extract(doc, '$.webhook_url')`, `json_extract(doc, '$.payload')`]
  })
  yield* sql.unsafe(`INSERT INTO cobro_webhook_deliveries
      (event_id, type, user_id, webhook_url, body, status, attempts, round_attempts, replays,
       next_attempt_ms, created_ms)
    SELECT event_id, type, user_id, ${url}, ${payload}, 'pending', 0, 0, 0, created_ms, created_ms
    FROM cobro_outbox WHERE ${url} IS NOT NULL`)
})
