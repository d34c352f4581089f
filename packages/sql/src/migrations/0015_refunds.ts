/**
 * Refunds: one row per refund in plain columns, read by id, by payment (oldest
 * first) and by user (newest first, the merchant's payout list), each in one index range. On
 * Postgres the ids that break ties compare byte-wise (`COLLATE "C"`), as the memory adapter
 * compares strings.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  yield* sql.unsafe(`CREATE TABLE cobro_refunds (
    refund_id ${ordered} PRIMARY KEY,
    payment_id ${ordered} NOT NULL,
    user_id ${ordered} NOT NULL,
    refund_type TEXT NOT NULL CHECK (refund_type IN ('FULL', 'PARTIAL')),
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED')),
    destination TEXT NOT NULL,
    destination_cuit TEXT NOT NULL,
    destination_name TEXT NOT NULL,
    blame_team_id TEXT,
    blame_mail TEXT,
    has_blame INTEGER NOT NULL,
    bank_transaction_id TEXT,
    failure_reason TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_refunds_payment ON cobro_refunds (payment_id, created_ms, refund_id)`)
  yield* sql.unsafe(`CREATE INDEX cobro_refunds_user ON cobro_refunds (user_id, created_ms, refund_id)`)
})
