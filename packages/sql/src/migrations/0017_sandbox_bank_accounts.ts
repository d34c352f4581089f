/**
 * Bank accounts sandbox testers register at the sandbox bank (`SandboxAccountRepository`): one
 * row per account, its number and its alias each unique across the sandbox, found by either, and
 * listed per merchant in the order they were registered.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE cobro_sandbox_bank_accounts (
    cbu TEXT PRIMARY KEY,
    alias TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    holder_name TEXT NOT NULL,
    cuit TEXT NOT NULL,
    created_ms BIGINT NOT NULL
  )`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_sandbox_bank_accounts_user ON cobro_sandbox_bank_accounts (user_id, created_ms, cbu)`
  )
})
