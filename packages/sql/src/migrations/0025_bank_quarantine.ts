/**
 * The statement entries reconciliation quarantined (`ReconciliationCursor.quarantine`), kept so
 * that `cobro bank reconcile` lists those of earlier runs too: one row per account and entry
 * (`entry_key`: its id, or its body when the bank gave none).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_bank_quarantine (
    account VARCHAR(255) NOT NULL,
    entry_key VARCHAR(255) NOT NULL,
    bank_transaction_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    body TEXT NOT NULL,
    quarantined_ms BIGINT NOT NULL,
    PRIMARY KEY (account, entry_key)
  )`)
})
