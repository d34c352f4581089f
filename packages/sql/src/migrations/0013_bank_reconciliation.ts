/**
 * The reconciliation of each collecting account with the bank's statement
 * (`ReconciliationCursor`): the end of the last window read (`cursor_ms`, null before the first
 * run) and the lease of the run reading one now (`lease_owner`, `lease_until_ms`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_bank_reconciliation (
    account TEXT PRIMARY KEY,
    cursor_ms BIGINT,
    lease_owner TEXT,
    lease_until_ms BIGINT
  )`)
})
