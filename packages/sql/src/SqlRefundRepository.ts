/**
 * `RefundRepository` over `SqlClient` (Postgres and SQLite): one row per refund in plain columns
 * (the amount in its own, selected as text), read in the memory adapter's orders.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Money, Refund as R } from "@cobro/core"
import { RefundRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import { BigIntText, findAll, findByKey, insertIfAbsent, Millis, updateByKey } from "./internal/sql.js"

/** A row as written and read (the amount read as text). */
const Row = Schema.Struct({
  refund_id: R.RefundId,
  payment_id: Ids.PaymentId,
  user_id: Ids.UserId,
  refund_type: R.RefundType,
  amount_minor: BigIntText,
  currency: Money.Currency,
  status: R.RefundStatus,
  destination: Schema.String,
  destination_cuit: Schema.String,
  destination_name: Schema.String,
  blame_team_id: Schema.NullOr(Schema.String),
  blame_mail: Schema.NullOr(Schema.String),
  has_blame: Schema.Union(Schema.Number, Schema.NumberFromString),
  bank_transaction_id: Schema.NullOr(Ids.BankTransactionId),
  failure_reason: Schema.NullOr(Schema.String),
  created_ms: Millis,
  updated_ms: Millis
})

const Stored = Schema.transform(Row, Schema.typeSchema(R.Refund), {
  strict: true,
  decode: (r) =>
    new R.Refund({
      refund_id: r.refund_id,
      payment_id: r.payment_id,
      user_id: r.user_id,
      refund_type: r.refund_type,
      amount: Money.make(r.amount_minor, r.currency),
      status: r.status,
      destination: new R.RefundDestination({
        address: r.destination,
        cuit: r.destination_cuit,
        name: r.destination_name
      }),
      blame:
        r.has_blame === 0
          ? null
          : new R.Blame({
              ...(r.blame_team_id === null ? {} : { team_id: r.blame_team_id }),
              ...(r.blame_mail === null ? {} : { mail: r.blame_mail })
            }),
      bank_transaction_id: r.bank_transaction_id,
      failure_reason: r.failure_reason,
      creation_timestamp: r.created_ms,
      last_modified_timestamp: r.updated_ms
    }),
  encode: (r) => ({
    refund_id: r.refund_id,
    payment_id: r.payment_id,
    user_id: r.user_id,
    refund_type: r.refund_type,
    amount_minor: r.amount.minor,
    currency: r.amount.currency,
    status: r.status,
    destination: r.destination.address,
    destination_cuit: r.destination.cuit,
    destination_name: r.destination.name,
    blame_team_id: r.blame?.team_id ?? null,
    blame_mail: r.blame?.mail ?? null,
    has_blame: r.blame === null ? 0 : 1,
    bank_transaction_id: r.bank_transaction_id,
    failure_reason: r.failure_reason,
    created_ms: r.creation_timestamp,
    updated_ms: r.last_modified_timestamp
  })
})

const columns = `refund_id, payment_id, user_id, refund_type, CAST(amount_minor AS TEXT) AS amount_minor, currency,
  status, destination, destination_cuit, destination_name, blame_team_id, blame_mail, has_blame,
  bank_transaction_id, failure_reason, created_ms, updated_ms`

export const make: Effect.Effect<Port.RefundRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = insertIfAbsent(sql, "cobro_refunds", "refund_id", Stored)
    const update = updateByKey(sql, "cobro_refunds", "refund_id", Stored)
    const byId = findByKey(sql, "cobro_refunds", "refund_id", Stored, columns)
    const byPayment = findAll({
      Request: Schema.String,
      Result: Stored,
      execute: (payment) => sql`SELECT ${sql.literal(columns)} FROM cobro_refunds
        WHERE payment_id = ${payment} ORDER BY created_ms, refund_id`
    })
    const byUser = findAll({
      Request: Schema.Struct({
        user: Schema.String,
        before: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: Stored,
      execute: ({ before, limit, user }) => {
        const conditions = [
          sql`user_id = ${user}`,
          ...(before === undefined ? [] : [sql`(created_ms, refund_id) < (${before.created}, ${before.id})`])
        ]
        return sql`SELECT ${sql.literal(columns)} FROM cobro_refunds WHERE ${sql.and(conditions)}
          ORDER BY created_ms DESC, refund_id DESC LIMIT ${limit}`
      }
    })

    return Port.RefundRepository.of({
      insert: (refund) =>
        Effect.flatMap(insert(refund), (inserted) => (inserted ? Effect.void : Effect.fail(Port.idTaken()))),
      update,
      findById: byId(false),
      findByIdForUpdate: byId(true),
      listByPayment: byPayment,
      listByUser: (user, before, limit) =>
        byUser({
          user,
          before: Option.getOrUndefined(
            Option.map(before, (c) => ({ created: c.creation_timestamp, id: c.id }))
          ),
          limit
        })
    })
  }
)

export const layer: Layer.Layer<Port.RefundRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.RefundRepository,
  make
)
