/**
 * The sandbox's test clocks, one per merchant (`TestClockRepository`): milliseconds each runs
 * ahead of real time, shared by every instance on the database; a merchant without a row is at
 * real time. The server-wide clock of 0008 goes (its offset is not carried over: it moved every
 * merchant at once, and each merchant's clock now starts at real time).
 *
 * The due work of a merchant whose clock moved is found by its own index lookups, by merchant
 * and due time: payments by expiry, active schedules by next run, splits by due time, pending
 * webhook deliveries by next attempt.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_test_clocks (
    user_id TEXT PRIMARY KEY,
    offset_ms BIGINT NOT NULL CHECK (offset_ms >= 0),
    updated_ms BIGINT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_test_clocks_moved ON cobro_test_clocks (user_id) WHERE offset_ms > 0`)
  yield* sql.unsafe(`DROP TABLE cobro_sandbox_clock`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_payments_owner_open ON cobro_payments (user_id, expires_ms, id) WHERE cvu_released = 0`
  )
  yield* sql.unsafe(`CREATE INDEX cobro_schedules_owner_due ON cobro_schedules (user_id, next_run_ms, schedule_id)
    WHERE schedule_status = 'active'`)
  yield* sql.unsafe(`CREATE INDEX cobro_split_payments_owner_due ON cobro_split_payments
    (user_id, due_ms, split_payment_id) WHERE due_ms IS NOT NULL`)
  yield* sql.unsafe(`CREATE INDEX cobro_webhook_deliveries_owner_pending ON cobro_webhook_deliveries
    (user_id, next_attempt_ms, event_id) WHERE status = 'pending'`)
})
