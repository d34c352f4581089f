/**
 * `OutgoingTransferRepository` over `SqlClient` (Postgres and SQLite): one row per transfer in
 * plain columns (the amount in its own, selected as text), read in the memory adapter's order.
 */
import { SqlClient } from "@effect/sql"
import { Ids, LedgerAccount, Money, OutgoingTransfer as T } from "@cobro/core"
import { OutgoingTransferRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import { BigIntText, findAll, findByKey, insertIfAbsent, Millis, updateByKey } from "./internal/sql.js"

/** A row as written and read (the amount read as text). */
const Row = Schema.Struct({
  reference: Schema.String,
  purpose: T.TransferPurpose,
  owner_id: Schema.String,
  destination: Schema.String,
  amount_minor: BigIntText,
  currency: Money.Currency,
  in_transit: LedgerAccount.LedgerAccount,
  return_to: LedgerAccount.LedgerAccount,
  status: T.TransferState,
  bank_transaction_id: Schema.NullOr(Ids.BankTransactionId),
  failure_reason: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  sends: Schema.Union(Schema.Number, Schema.NumberFromString),
  checks: Schema.Union(Schema.Number, Schema.NumberFromString),
  next_check_ms: Millis,
  created_ms: Millis,
  updated_ms: Millis
})

const Stored = Schema.transform(Row, Schema.typeSchema(T.OutgoingTransfer), {
  strict: true,
  decode: ({ amount_minor, currency, next_check_ms, created_ms, updated_ms, ...r }) =>
    new T.OutgoingTransfer({
      ...r,
      amount: Money.make(amount_minor, currency),
      next_check_at: next_check_ms,
      creation_timestamp: created_ms,
      last_modified_timestamp: updated_ms
    }),
  encode: ({ amount, next_check_at, creation_timestamp, last_modified_timestamp, ...t }) => ({
    ...t,
    amount_minor: amount.minor,
    currency: amount.currency,
    next_check_ms: next_check_at,
    created_ms: creation_timestamp,
    updated_ms: last_modified_timestamp
  })
})

const columns = `reference, purpose, owner_id, destination, CAST(amount_minor AS TEXT) AS amount_minor,
  currency, in_transit, return_to, status, bank_transaction_id, failure_reason, last_error, sends, checks,
  next_check_ms, created_ms, updated_ms`

export const make: Effect.Effect<Port.OutgoingTransferRepository["Type"], never, SqlClient.SqlClient> =
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = insertIfAbsent(sql, "cobro_outgoing_transfers", "reference", Stored)
    const update = updateByKey(sql, "cobro_outgoing_transfers", "reference", Stored)
    const byReference = findByKey(sql, "cobro_outgoing_transfers", "reference", Stored, columns)
    const due = findAll({
      Request: Schema.Tuple(Schema.String, Millis, Schema.Number),
      Result: Stored,
      execute: ([purpose, now, limit]) => sql`SELECT ${sql.literal(columns)} FROM cobro_outgoing_transfers
        WHERE purpose = ${purpose} AND status IN ('SENDING', 'PENDING') AND next_check_ms <= ${now}
        ORDER BY next_check_ms, reference LIMIT ${limit}`
    })

    const list = findAll({
      Request: Schema.Struct({
        states: Schema.Array(Schema.String),
        after: Schema.NullOr(Schema.String),
        limit: Schema.Number
      }),
      Result: Stored,
      execute: ({ after, limit, states }) => {
        const cursor =
          after === null
            ? sql`1 = 1`
            : sql`EXISTS (SELECT 1 FROM cobro_outgoing_transfers c WHERE c.reference = ${after}
                AND (t.created_ms > c.created_ms OR (t.created_ms = c.created_ms AND t.reference > c.reference)))`
        return sql`SELECT ${sql.literal(columns)} FROM cobro_outgoing_transfers t
          WHERE ${sql.in("status", states)} AND ${cursor}
          ORDER BY created_ms, reference LIMIT ${limit}`
      }
    })

    return Port.OutgoingTransferRepository.of({
      insert: (transfer) =>
        Effect.flatMap(insert(transfer), (inserted) =>
          inserted ? Effect.void : Effect.fail(Port.referenceTaken())
        ),
      update,
      findByReference: byReference(false),
      findByReferenceForUpdate: byReference(true),
      findDue: (purpose, now, limit) => due([purpose, now, limit]),
      list: ({ after, limit, states }) =>
        states.length === 0 ? Effect.succeed([]) : list({ states, after: Option.getOrNull(after), limit })
    })
  })

export const layer: Layer.Layer<Port.OutgoingTransferRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.OutgoingTransferRepository,
  make
)
