/**
 * `TransferRepository` over `SqlClient`: the primary key on the bank transaction id is what
 * makes a repeated notification impossible to credit twice, even across instances.
 */
import { SqlClient } from "@effect/sql"
import { BankAccount, Ids, Money, TransferRepository as Port } from "@cobro/core"
import { Effect, Layer, Schema } from "effect"
import { BigIntText, Millis, findAll, findOne } from "./internal/sql.js"

/** A row of `cobro_transfers` (the amount read as text, written as a bigint). */
const transferRow = <I>(Amount: Schema.Schema<bigint, I>) =>
  Schema.transform(
    Schema.Struct({
      bank_transaction_id: Ids.BankTransactionId,
      cvu: BankAccount.Cvu,
      amount_minor: Amount,
      currency: Money.Currency,
      target: Port.TransferTarget,
      target_id: Schema.NullOr(Schema.String),
      received_ms: Millis
    }),
    Schema.typeSchema(Port.TransferRecord),
    {
      strict: true,
      decode: ({ amount_minor, currency, received_ms, ...r }) =>
        new Port.TransferRecord({
          ...r,
          amount: Money.make(amount_minor, currency),
          received_at: received_ms
        }),
      encode: (t) => ({
        bank_transaction_id: t.bank_transaction_id,
        cvu: t.cvu,
        amount_minor: t.amount.minor,
        currency: t.amount.currency,
        target: t.target,
        target_id: t.target_id,
        received_ms: t.received_at
      })
    }
  )

export const make: Effect.Effect<Port.TransferRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * One statement; rows are sent in id order, so two units of work recording overlapping
     * batches on Postgres wait on the log's key in one order and cannot deadlock on it.
     */
    const insert = findAll({
      Request: Schema.Array(transferRow(Schema.BigIntFromSelf)),
      Result: Schema.Struct({ bank_transaction_id: Ids.BankTransactionId }).pipe(
        Schema.pluck("bank_transaction_id")
      ),
      execute: (rows) =>
        sql`INSERT INTO cobro_transfers ${sql.insert(
          [...rows].sort((a, b) => (a.bank_transaction_id < b.bank_transaction_id ? -1 : 1))
        )} ON CONFLICT (bank_transaction_id) DO NOTHING RETURNING bank_transaction_id`
    })
    const insertAll = (records: ReadonlyArray<Port.TransferRecord>) =>
      records.length === 0 ? Effect.succeed([]) : insert(records)

    return Port.TransferRepository.of({
      insert: (record) => Effect.map(insertAll([record]), (recorded) => recorded.length === 1),
      insertAll,
      findById: findOne({
        Request: Schema.String,
        Result: transferRow(BigIntText),
        execute: (
          id
        ) => sql`SELECT bank_transaction_id, cvu, CAST(amount_minor AS TEXT) AS amount_minor, currency,
            target, target_id, received_ms
          FROM cobro_transfers WHERE bank_transaction_id = ${id}`
      })
    })
  }
)

export const layer: Layer.Layer<Port.TransferRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.TransferRepository,
  make
)
