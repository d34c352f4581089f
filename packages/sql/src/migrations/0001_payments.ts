/**
 * Payments, merchants, the transfer log, the ledger and the outbox. Money is integer minor
 * units (BIGINT), times are UTC epoch milliseconds; full domain records are kept as the JSON of
 * their wire form beside the columns the database must index or constrain.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.onDialectOrElse({
    pg: () => "BIGSERIAL PRIMARY KEY",
    orElse: () => "INTEGER PRIMARY KEY AUTOINCREMENT"
  })

  yield* sql.unsafe(`CREATE TABLE cobro_users (
    user_id TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    alias_prefix TEXT,
    doc TEXT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE UNIQUE INDEX cobro_users_email ON cobro_users (lower(email))`)
  yield* sql.unsafe(`CREATE UNIQUE INDEX cobro_users_alias_prefix ON cobro_users (alias_prefix)`)

  yield* sql.unsafe(`CREATE TABLE cobro_payments (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    cvu TEXT NOT NULL,
    team_id TEXT,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    cvu_released SMALLINT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (user_id, external_id),
    UNIQUE (cvu)
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_payments_list ON cobro_payments (user_id, created_ms, id)`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_payments_open ON cobro_payments (expires_ms, id) WHERE cvu_released = 0`
  )

  yield* sql.unsafe(`CREATE TABLE cobro_transfers (
    bank_transaction_id TEXT PRIMARY KEY,
    cvu TEXT NOT NULL,
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    target TEXT NOT NULL,
    target_id TEXT,
    received_ms BIGINT NOT NULL
  )`)

  yield* sql.unsafe(`CREATE TABLE cobro_ledger_entries (
    position ${serial},
    entry_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    reference TEXT NOT NULL,
    created_ms BIGINT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE TABLE cobro_ledger_postings (
    entry_position BIGINT NOT NULL REFERENCES cobro_ledger_entries (position),
    line INTEGER NOT NULL,
    account TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    PRIMARY KEY (entry_position, line)
  )`)
  // Balances owed to someone (credit-normal: a negative signed sum is money owed) never go below zero.
  yield* sql.unsafe(`CREATE TABLE cobro_ledger_balances (
    account TEXT NOT NULL,
    currency TEXT NOT NULL,
    sum_minor BIGINT NOT NULL,
    PRIMARY KEY (account, currency),
    CHECK (
      sum_minor <= 0 OR NOT (
        account LIKE 'merchant:%' OR account LIKE 'customer:%' OR account LIKE 'split:%' OR account LIKE 'suspense:%'
      )
    )
  )`)
  // The journal is append-only.
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql.unsafe(`CREATE FUNCTION cobro_append_only() RETURNS trigger AS $$
          BEGIN RAISE EXCEPTION 'the ledger journal is append-only'; END $$ LANGUAGE plpgsql`)
        for (const table of ["cobro_ledger_entries", "cobro_ledger_postings"]) {
          yield* sql.unsafe(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
            FOR EACH ROW EXECUTE FUNCTION cobro_append_only()`)
        }
      }),
    orElse: () =>
      Effect.gen(function* () {
        for (const table of ["cobro_ledger_entries", "cobro_ledger_postings"]) {
          for (const op of ["UPDATE", "DELETE"]) {
            yield* sql.unsafe(`CREATE TRIGGER ${table}_no_${op.toLowerCase()} BEFORE ${op} ON ${table}
              BEGIN SELECT RAISE(ABORT, 'the ledger journal is append-only'); END`)
          }
        }
      })
  })

  yield* sql.unsafe(`CREATE TABLE cobro_outbox (
    position ${serial},
    event_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    doc TEXT NOT NULL,
    created_ms BIGINT NOT NULL
  )`)
})
