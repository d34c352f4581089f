/**
 * The CVU directory (`CvuDirectory`): which payment, fixed customer or split payment a CVU
 * belongs to, and its merchant. Filled from the rows already stored, so an upgraded database
 * routes as before: every payment's CVU (open or released: money reaching a closed payment's CVU
 * is returned as the payment's), every customer's current CVU (a replaced one belongs to nobody)
 * and every split payment's CVU. A CVU held by more than one of them goes to the first in that
 * order, the order incoming transfers were routed in.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql.unsafe(`CREATE TABLE cobro_cvu_directory (
    cvu TEXT NOT NULL,
    owner TEXT NOT NULL CHECK (owner IN ('payment', 'customer', 'split_payment')),
    owner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    CONSTRAINT cobro_cvu_directory_pkey PRIMARY KEY (cvu)
  )`)

  // `WHERE true`: SQLite reads the ON CONFLICT of an INSERT … SELECT without a WHERE as a join's ON.
  const backfill = [
    `SELECT cvu, 'payment', id, user_id FROM cobro_payments`,
    `SELECT cvu, 'customer', customer_id, user_id FROM cobro_customers`,
    `SELECT cvu, 'split_payment', split_payment_id, user_id FROM cobro_split_payments`
  ]
  for (const rows of backfill) {
    yield* sql.unsafe(`INSERT INTO cobro_cvu_directory (cvu, owner, owner_id, user_id)
      ${rows} WHERE true ON CONFLICT (cvu) DO NOTHING`)
  }
})
