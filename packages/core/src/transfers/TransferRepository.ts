/**
 * The log of every incoming transfer the bank has notified, keyed by the bank's transaction id.
 * It is what makes ingestion idempotent: a notification seen before is not credited again,
 * whichever payment, customer or split payment it went to.
 */
import { Context, DateTime, Effect, HashMap, Layer, Option, Schema } from "effect"
import { Cvu } from "../bank/BankAccount.js"
import { BankTransactionId } from "../Ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { Money } from "../Money.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export const TransferTarget = Schema.Literal("payment", "customer", "split", "bounced")
export type TransferTarget = typeof TransferTarget.Type

export class TransferRecord extends Class<TransferRecord>("TransferRecord")({
  bank_transaction_id: BankTransactionId,
  cvu: Cvu,
  amount: Schema.typeSchema(Money),
  /** Where the money went; `bounced` transfers were returned to their sender. */
  target: TransferTarget,
  /** The payment, customer or split payment credited (for a bounce, the one the CVU belonged to). */
  target_id: Schema.NullOr(Schema.String),
  received_at: Timestamp
}) {}

export class TransferRepository extends Context.Tag("@cobro/core/TransferRepository")<
  TransferRepository,
  {
    /** Records a transfer; `false` when its bank transaction id was already recorded. */
    readonly insert: (record: TransferRecord) => Effect.Effect<boolean>
    /**
     * Records several transfers at once; answers the ids it recorded, in no particular order.
     * An id already recorded, or repeated in `records`, is recorded once (its first record).
     */
    readonly insertAll: (
      records: ReadonlyArray<TransferRecord>
    ) => Effect.Effect<ReadonlyArray<BankTransactionId>>
    readonly findById: (id: BankTransactionId) => Effect.Effect<Option.Option<TransferRecord>>
    /**
     * The transfers recorded with `from <= received_at < to`, by `received_at` then id
     * (reconciliation's other way: what our books hold that the bank's statement should).
     */
    readonly receivedBetween: (
      from: DateTime.Utc,
      to: DateTime.Utc
    ) => Effect.Effect<ReadonlyArray<TransferRecord>>
  }
>() {}

export const makeMemory = Effect.gen(function* () {
  const table = yield* makeRef(HashMap.empty<BankTransactionId, TransferRecord>())
  const insertAll = (records: ReadonlyArray<TransferRecord>) =>
    table.modify((t) => {
      const recorded: Array<BankTransactionId> = []
      for (const record of records) {
        if (HashMap.has(t, record.bank_transaction_id)) continue
        t = HashMap.set(t, record.bank_transaction_id, record)
        recorded.push(record.bank_transaction_id)
      }
      return [recorded as ReadonlyArray<BankTransactionId>, t] as const
    })
  return TransferRepository.of({
    insert: (record) => Effect.map(insertAll([record]), (recorded) => recorded.length === 1),
    insertAll,
    findById: (id) => Effect.map(table.get, HashMap.get(id)),
    receivedBetween: (from, to) =>
      Effect.map(table.get, (t) =>
        Array.from(HashMap.values(t))
          .filter((r) => !DateTime.lessThan(r.received_at, from) && DateTime.lessThan(r.received_at, to))
          .sort(
            (a, b) =>
              DateTime.toEpochMillis(a.received_at) - DateTime.toEpochMillis(b.received_at) ||
              (a.bank_transaction_id < b.bank_transaction_id ? -1 : 1)
          )
      )
  })
})

export const layerMemory: Layer.Layer<TransferRepository, never, MemoryDb> = Layer.effect(
  TransferRepository,
  makeMemory
)
