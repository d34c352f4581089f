/**
 * The transfer log read by time (`TransferRepository.receivedBetween`): reconciliation's other
 * way lists what our books credited in a window, which every run asks for.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(
    `CREATE INDEX cobro_transfers_received ON cobro_transfers (received_ms, bank_transaction_id)`
  )
})
