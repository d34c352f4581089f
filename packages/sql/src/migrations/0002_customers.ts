/**
 * Fixed customers and the transfers credited to them. A customer is keyed by (user, customer id);
 * its current bank alias and CVU are unique across every user. The balance is kept as an integer
 * column (minor units, never negative) beside the JSON record; ids that order listings compare
 * byte-wise on both dialects (`COLLATE "C"` on Postgres, SQLite's default BINARY), as the memory
 * adapter compares strings.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  yield* sql.unsafe(`CREATE TABLE cobro_customers (
    user_id TEXT NOT NULL,
    customer_id ${ordered} NOT NULL,
    alias TEXT NOT NULL,
    cvu TEXT NOT NULL,
    balance_minor BIGINT NOT NULL CHECK (balance_minor >= 0),
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_customers_key PRIMARY KEY (user_id, customer_id),
    CONSTRAINT cobro_customers_alias UNIQUE (alias),
    CONSTRAINT cobro_customers_cvu UNIQUE (cvu)
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_customers_list ON cobro_customers (user_id, created_ms, customer_id)`)

  yield* sql.unsafe(`CREATE TABLE cobro_customer_transactions (
    transaction_id TEXT NOT NULL,
    bank_transaction_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_customer_transactions_id PRIMARY KEY (transaction_id),
    CONSTRAINT cobro_customer_transactions_bank_id UNIQUE (bank_transaction_id)
  )`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_customer_transactions_customer ON cobro_customer_transactions (user_id, customer_id, created_ms, transaction_id)`
  )
})
