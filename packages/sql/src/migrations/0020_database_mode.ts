/**
 * What the database is (`SqlDatabaseMode`): the mode (sandbox or production) and the bank it was
 * first started with, one row, recorded once. A server or a command in another mode or on another
 * bank refuses to open the database; `recorded_by` says how the row came (the first start, an
 * inference from an older database's contents, or `cobro database record`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_database (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    mode TEXT NOT NULL CHECK (mode IN ('sandbox', 'production')),
    bank TEXT NOT NULL,
    recorded_ms BIGINT NOT NULL,
    recorded_by TEXT NOT NULL
  )`)
})
