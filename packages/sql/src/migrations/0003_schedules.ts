/**
 * Payout schedules and the payouts their runs make. Due schedules and PENDING payouts each have
 * a partial index in the order the jobs read them; a payout's amount is positive integer minor
 * units. Ids that order listings compare byte-wise on both dialects, as the memory adapter does.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  yield* sql.unsafe(`CREATE TABLE cobro_schedules (
    schedule_id ${ordered} PRIMARY KEY,
    user_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    schedule_status TEXT NOT NULL CHECK (schedule_status IN ('active', 'inactive')),
    next_run_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_schedules_user ON cobro_schedules (user_id, created_ms, schedule_id)`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_schedules_due ON cobro_schedules (next_run_ms, schedule_id) WHERE schedule_status = 'active'`
  )

  yield* sql.unsafe(`CREATE TABLE cobro_payouts (
    payout_id ${ordered} PRIMARY KEY,
    schedule_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    payout_status TEXT NOT NULL CHECK (payout_status IN ('PENDING', 'SUCCESS', 'FAILED')),
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    attempted_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL
  )`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_payouts_schedule ON cobro_payouts (schedule_id, created_ms, payout_id)`
  )
  yield* sql.unsafe(
    `CREATE INDEX cobro_payouts_pending ON cobro_payouts (attempted_ms, payout_id) WHERE payout_status = 'PENDING'`
  )
})
