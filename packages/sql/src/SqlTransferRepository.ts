/**
 * `TransferRepository` over `SqlClient`: the primary key on the bank transaction id is what
 * makes a repeated notification impossible to credit twice, even across instances.
 */
import { SqlClient } from "@effect/sql"
import { BankAccount, Ids, Money } from "@cobro/core"
import { TransferRepository as Port, TrustedCodec } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import { BigIntText, execute, millis, Millis, findOne, orDie } from "./internal/sql.js"

/** The columns of `t`, its instant still an instant: the row schema's encoding. */
const columnsOf = (t: Port.TransferRecord) => ({
  bank_transaction_id: t.bank_transaction_id,
  cvu: t.cvu,
  amount_minor: t.amount.minor,
  currency: t.amount.currency,
  target: t.target,
  target_id: t.target_id,
  received_ms: t.received_at
})

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
      encode: columnsOf
    }
  )

/** A row of `cobro_transfers` as written (the amount a bigint). */
export const TransferRowIn = transferRow(Schema.BigIntFromSelf)

/**
 * The row of `t` as `TransferRowIn` encodes it, by the schema compiled without its checks (core's
 * `TrustedCodec`): every transfer credited writes one, and the checking pass (the CVU's check
 * digits validated again) was a measurable part of a faucet transfer (bench/results.md). The
 * record is a `TransferRecord`, checked when it was made.
 */
export const encodedTransfer: (t: Port.TransferRecord) => typeof TransferRowIn.Encoded =
  TrustedCodec.encoder(TransferRowIn)

const decodeRows = Schema.decodeUnknown(Schema.Array(transferRow(BigIntText)))

const RecordedIds = Schema.Array(Schema.Struct({ bank_transaction_id: Ids.BankTransactionId }))
const decodeRecorded = Schema.decodeUnknown(RecordedIds)

export const make: Effect.Effect<Port.TransferRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * One statement; rows are sent in id order, so two units of work recording overlapping
     * batches on Postgres wait on the log's key in one order and cannot deadlock on it.
     */
    const insertAll = (
      records: ReadonlyArray<Port.TransferRecord>
    ): Effect.Effect<ReadonlyArray<Ids.BankTransactionId>> =>
      records.length === 0
        ? Effect.succeed([])
        : orDie(
            Effect.suspend(() =>
              Effect.flatMap(
                execute(
                  sql`INSERT INTO cobro_transfers ${sql.insert(
                    records
                      .map(encodedTransfer)
                      .sort((a, b) => (a.bank_transaction_id < b.bank_transaction_id ? -1 : 1))
                  )} ON CONFLICT (bank_transaction_id) DO NOTHING RETURNING bank_transaction_id`
                ),
                (rows) =>
                  Effect.map(decodeRecorded(rows), (recorded) => recorded.map((r) => r.bank_transaction_id))
              )
            )
          )

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
      }),
      receivedBetween: (from, to) =>
        orDie(
          Effect.flatMap(
            execute(sql`SELECT bank_transaction_id, cvu, CAST(amount_minor AS TEXT) AS amount_minor, currency,
                target, target_id, received_ms
              FROM cobro_transfers WHERE received_ms >= ${millis(from)} AND received_ms < ${millis(to)}
              ORDER BY received_ms, bank_transaction_id`),
            decodeRows
          )
        )
    })
  }
)

export const layer: Layer.Layer<Port.TransferRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.TransferRepository,
  make
)
