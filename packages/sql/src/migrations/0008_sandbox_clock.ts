/**
 * The sandbox test clock's offset (`ClockOffsetRepository`): one row, milliseconds ahead of real
 * time, shared by every instance on the database. The CHECK on `id` keeps it a single row.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_sandbox_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    offset_ms BIGINT NOT NULL CHECK (offset_ms >= 0)
  )`)
})
