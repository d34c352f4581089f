/**
 * Outgoing transfers in flight (`OutgoingTransfer`), one row per transfer keyed by our reference
 * (the payout's id). In-flight rows have a partial index in the order the settle job reads them.
 * A schedule payout left PENDING by an engine before this table existed gets its row here, due
 * at once: the settle job asks the bank about it before sending anything. (Split payouts left
 * PENDING get theirs when their split is claimed again after its lease.)
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  yield* sql.unsafe(`CREATE TABLE cobro_outgoing_transfers (
    reference ${ordered} PRIMARY KEY,
    purpose ${ordered} NOT NULL,
    owner_id TEXT NOT NULL,
    destination TEXT NOT NULL,
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    in_transit TEXT NOT NULL,
    return_to TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('SENDING', 'PENDING', 'COMPLETED', 'FAILED')),
    bank_transaction_id TEXT,
    failure_reason TEXT,
    last_error TEXT,
    sends INTEGER NOT NULL,
    checks INTEGER NOT NULL,
    next_check_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX cobro_outgoing_transfers_due ON cobro_outgoing_transfers
    (purpose, next_check_ms, reference) WHERE status IN ('SENDING', 'PENDING')`)

  const address = sql.onDialectOrElse({
    pg: () => `(p.doc::json ->> 'address')`,
    orElse: () => `json_extract(p.doc, '$.address')`
  })
  yield* sql.unsafe(`INSERT INTO cobro_outgoing_transfers (reference, purpose, owner_id, destination,
      amount_minor, currency, in_transit, return_to, status, sends, checks, next_check_ms, created_ms, updated_ms)
    SELECT p.payout_id, 'schedule_payout', p.payout_id, ${address}, p.amount_minor, p.currency,
      'merchant:' || p.user_id || ':in_transit', 'merchant:' || p.user_id || ':available',
      'SENDING', 1, 0, p.attempted_ms, p.created_ms, p.attempted_ms
    FROM cobro_payouts p WHERE p.payout_status = 'PENDING'`)
})
