/**
 * The money reads: a customer's transactions, a user's schedule payouts and a user's split
 * payouts, each newest first by (creation time, id) in one index range. Split payouts get the
 * columns that order them (`user_id`, copied from their split; `created_ms`, from their record).
 * On Postgres the ids that break ties compare byte-wise (`COLLATE "C"`), as the memory adapter
 * compares strings.
 */
import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })

  if (isPg) {
    yield* sql.unsafe(
      `ALTER TABLE cobro_customer_transactions ALTER COLUMN transaction_id TYPE TEXT COLLATE "C"`
    )
  }

  yield* sql.unsafe(`CREATE INDEX cobro_payouts_user ON cobro_payouts (user_id, created_ms, payout_id)`)

  yield* sql.unsafe(`ALTER TABLE cobro_split_payouts ADD COLUMN user_id TEXT`)
  yield* sql.unsafe(`ALTER TABLE cobro_split_payouts ADD COLUMN created_ms BIGINT`)
  if (isPg) {
    yield* sql.unsafe(`ALTER TABLE cobro_split_payouts ALTER COLUMN payout_id TYPE TEXT COLLATE "C"`)
  }
  yield* sql.unsafe(`UPDATE cobro_split_payouts SET user_id = (SELECT s.user_id FROM cobro_split_payments s
    WHERE s.split_payment_id = cobro_split_payouts.split_payment_id)`)
  // Each stored record carries its creation time as ISO text (every version of the document).
  const rows = yield* sql<{ payout_id: string; doc: string }>`SELECT payout_id, doc FROM cobro_split_payouts`
  for (const row of rows) {
    const created = (JSON.parse(row.doc) as { readonly creation_timestamp: string }).creation_timestamp
    const ms = DateTime.toEpochMillis(DateTime.unsafeMake(created))
    yield* sql`UPDATE cobro_split_payouts SET created_ms = ${ms} WHERE payout_id = ${row.payout_id}`
  }
  yield* sql.unsafe(
    `CREATE INDEX cobro_split_payouts_user ON cobro_split_payouts (user_id, created_ms, payout_id)`
  )
})
