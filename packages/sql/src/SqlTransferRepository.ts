/**
 * `TransferRepository` over `SqlClient`: the primary key on the bank transaction id is what
 * makes a repeated notification impossible to credit twice, even across instances.
 */
import { SqlClient } from "@effect/sql"
import { BankAccount, Ids, Money, TransferRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { millis, toBigInt, toDateTime } from "./internal/sql.js"

interface Row {
  readonly bank_transaction_id: string
  readonly cvu: string
  readonly amount_minor: unknown
  readonly currency: string
  readonly target: string
  readonly target_id: string | null
  readonly received_ms: unknown
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const fromRow = (r: Row) =>
    new Port.TransferRecord({
      bank_transaction_id: Ids.BankTransactionId.make(r.bank_transaction_id),
      cvu: r.cvu as BankAccount.Cvu,
      amount: Money.make(toBigInt(r.amount_minor), r.currency as Money.Currency),
      target: r.target as Port.TransferTarget,
      target_id: r.target_id,
      received_at: toDateTime(r.received_ms)
    })

  /**
   * One statement; rows are sent in id order, so two units of work recording overlapping
   * batches on Postgres wait on the log's key in one order and cannot deadlock on it.
   */
  const insertAll = (records: ReadonlyArray<Port.TransferRecord>) =>
    records.length === 0
      ? Effect.succeed([])
      : sql<{ bank_transaction_id: string }>`INSERT INTO cobro_transfers ${sql.insert(
          [...records]
            .sort((a, b) => (a.bank_transaction_id < b.bank_transaction_id ? -1 : 1))
            .map((record) => ({
              bank_transaction_id: record.bank_transaction_id,
              cvu: record.cvu,
              amount_minor: record.amount.minor,
              currency: record.amount.currency,
              target: record.target,
              target_id: record.target_id,
              received_ms: millis(record.received_at)
            }))
        )} ON CONFLICT (bank_transaction_id) DO NOTHING RETURNING bank_transaction_id`.pipe(
          Effect.map((rows) => rows.map((r) => Ids.BankTransactionId.make(r.bank_transaction_id))),
          Effect.orDie
        )

  return Port.TransferRepository.of({
    insert: (record) => Effect.map(insertAll([record]), (recorded) => recorded.length === 1),
    insertAll,
    findById: (id) =>
      sql<Row>`SELECT bank_transaction_id, cvu, CAST(amount_minor AS TEXT) AS amount_minor, currency, target,
          target_id, received_ms
        FROM cobro_transfers WHERE bank_transaction_id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.TransferRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.TransferRepository,
  make
)
