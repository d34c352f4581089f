/**
 * `CustomerRepository` over `SqlClient`: one implementation for Postgres and SQLite. The unique
 * keys (user + customer id, bank alias, CVU) are the table's constraints; when one refuses a
 * write, the `Conflict` is chosen as the memory adapter does (the customer id first, then the
 * alias, then the CVU), by looking at which rows hold the values.
 */
import { SqlClient } from "@effect/sql"
import { Customer as C, Money } from "@cobro/core"
import { CustomerRepository as Port, CvuDirectory } from "@cobro/core/ports"
import { isCvuTaken } from "./SqlCvuDirectory.js"
import { Effect, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/customer.js"
import {
  BigIntText,
  Doc,
  DocOnly,
  Millis,
  findAll,
  findByKey,
  findOne,
  forUpdate,
  isUniqueViolation as isUnique,
  orDie,
  recoverable
} from "./internal/sql.js"

/** A row of `cobro_customers` as written. */
const CustomerRow = Schema.Struct({
  user_id: Schema.String,
  customer_id: Schema.String,
  alias: Schema.String,
  cvu: Schema.String,
  balance_minor: Schema.BigIntFromSelf,
  created_ms: Millis,
  doc: Doc(Documents.Customer)
})

/**
 * A customer as read: the balance lives in its column only (the document holds zero; a JSON
 * number cannot carry every bigint), selected as text (SQLite answers INTEGER as a JS number).
 */
const Stored = Schema.transform(
  Schema.Struct({ doc: Doc(Documents.Customer), balance_minor: BigIntText }),
  Schema.typeSchema(C.Customer),
  {
    strict: true,
    decode: (r) => new C.Customer({ ...r.doc, balance: Money.make(r.balance_minor, "ARS") }),
    encode: (c) => ({ doc: c, balance_minor: c.balance.minor })
  }
)

const row = (c: C.Customer): typeof CustomerRow.Type => ({
  user_id: c.user_id,
  customer_id: c.customer_id,
  alias: c.bank_info.alias,
  cvu: c.bank_info.cvu,
  balance_minor: c.balance.minor,
  created_ms: c.creation_timestamp,
  doc: new C.Customer({ ...c, balance: C.zeroBalance })
})

/** A row of `cobro_customer_transactions` as written. */
const TransactionRow = Schema.Struct({
  transaction_id: Schema.String,
  bank_transaction_id: Schema.String,
  user_id: Schema.String,
  customer_id: Schema.String,
  amount_minor: Schema.BigIntFromSelf,
  created_ms: Millis,
  doc: Doc(Documents.CustomerTransaction)
})

/** A customer's columns as read. */
const columns = "doc, CAST(balance_minor AS TEXT) AS balance_minor"
const Key = Schema.Struct({ owner: Schema.String, id: Schema.String })
const encodeRow = Schema.encode(CustomerRow)
const encodeTransaction = Schema.encode(TransactionRow)

export const make: Effect.Effect<Port.CustomerRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const locked = forUpdate(sql)
    const select = sql`SELECT ${sql.literal(columns)} FROM cobro_customers`

    /** Whether a customer other than `c`'s row holds `column = value`. */
    const heldByAnother = (c: C.Customer, column: "alias" | "cvu", value: string) =>
      sql`SELECT user_id FROM cobro_customers WHERE ${sql(column)} = ${value}
        AND NOT (user_id = ${c.user_id} AND customer_id = ${c.customer_id})`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    /** The `Conflict` a refused write of `c` is, in the memory adapter's order of checks. */
    const conflictOf = (c: C.Customer, checkKey: boolean) =>
      Effect.gen(function* () {
        if (checkKey) {
          const existing = yield* sql`SELECT 1 AS found FROM cobro_customers
            WHERE user_id = ${c.user_id} AND customer_id = ${c.customer_id}`
          if (existing.length > 0) return Port.conflicts.exists(c.customer_id)
        }
        if (yield* heldByAnother(c, "alias", c.bank_info.alias))
          return Port.conflicts.aliasTaken(c.bank_info.alias)
        if (yield* heldByAnother(c, "cvu", c.bank_info.cvu)) return Port.conflicts.cvuTaken(c.bank_info.cvu)
        return yield* Effect.dieMessage(
          `customer ${c.customer_id}: a unique key refused the write but no row holds it`
        )
      }).pipe(orDie, Effect.flatMap(Effect.fail))

    const byKey = (lock: boolean) =>
      findOne({
        Request: Key,
        Result: Stored,
        execute: ({ id, owner }) =>
          sql`${select} WHERE user_id = ${owner} AND customer_id = ${id}${lock ? locked : sql``}`
      })
    const byId = byKey(false)
    const byIdLocked = byKey(true)
    const byColumn = (column: "cvu" | "alias") =>
      findByKey(sql, "cobro_customers", column, Stored, columns)(false)
    const listByUser = findAll({
      Request: Schema.Struct({
        owner: Schema.String,
        after: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: Stored,
      execute: ({ after, limit, owner }) => {
        const conditions = [
          sql`user_id = ${owner}`,
          ...(after === undefined ? [] : [sql`(created_ms, customer_id) > (${after.created}, ${after.id})`])
        ]
        return sql`${select} WHERE ${sql.and(conditions)} ORDER BY created_ms, customer_id LIMIT ${limit}`
      }
    })
    const findTransaction = findOne({
      Request: Schema.Struct({ owner: Schema.String, customer: Schema.String, id: Schema.String }),
      Result: DocOnly(Documents.CustomerTransaction),
      execute: ({ customer, id, owner }) => sql`SELECT doc FROM cobro_customer_transactions
        WHERE transaction_id = ${id} AND user_id = ${owner} AND customer_id = ${customer}`
    })

    const listTransactions = findAll({
      Request: Schema.Struct({
        owner: Schema.String,
        customer: Schema.String,
        before: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: DocOnly(Documents.CustomerTransaction),
      execute: ({ before, customer, limit, owner }) => {
        const conditions = [
          sql`user_id = ${owner}`,
          sql`customer_id = ${customer}`,
          ...(before === undefined
            ? []
            : [sql`(created_ms, transaction_id) < (${before.created}, ${before.id})`])
        ]
        return sql`SELECT doc FROM cobro_customer_transactions WHERE ${sql.and(conditions)}
          ORDER BY created_ms DESC, transaction_id DESC LIMIT ${limit}`
      }
    })

    return Port.CustomerRepository.of({
      insert: (customer) =>
        encodeRow(row(customer)).pipe(
          Effect.flatMap(
            (r) => sql`INSERT INTO cobro_customers ${sql.insert(r)} ON CONFLICT DO NOTHING RETURNING user_id`
          ),
          Effect.catchIf(
            (e) => e._tag === "SqlError" && isCvuTaken(e),
            () => Effect.die(new CvuDirectory.CvuTaken({ cvu: customer.bank_info.cvu }))
          ),
          orDie,
          Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : conflictOf(customer, true)))
        ),
      update: (customer) =>
        encodeRow(row(customer)).pipe(
          orDie,
          Effect.flatMap(({ customer_id: _c, user_id: _u, ...fields }) =>
            recoverable(sql)(
              sql`UPDATE cobro_customers SET ${sql.update(fields)}
                WHERE user_id = ${customer.user_id} AND customer_id = ${customer.customer_id} RETURNING user_id`
            )
          ),
          Effect.catchTag("SqlError", (e) =>
            isCvuTaken(e)
              ? Effect.die(new CvuDirectory.CvuTaken({ cvu: customer.bank_info.cvu }))
              : isUnique(e)
                ? conflictOf(customer, false)
                : Effect.die(e)
          ),
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(Port.conflicts.notFound(customer.customer_id)) : Effect.void
          )
        ),
      findById: (owner, id) => byId({ owner, id }),
      findByIdForUpdate: (owner, id) => byIdLocked({ owner, id }),
      findByCvu: byColumn("cvu"),
      findByAlias: byColumn("alias"),
      listByUser: (owner, cursor, limit) =>
        listByUser({
          owner,
          after: Option.getOrUndefined(
            Option.map(cursor, (c) => ({ created: c.creation_timestamp, id: c.customer_id }))
          ),
          limit
        }),
      insertTransaction: (transaction) =>
        encodeTransaction({
          transaction_id: transaction.transaction_id,
          bank_transaction_id: transaction.bank_transaction_id,
          user_id: transaction.user_id,
          customer_id: transaction.customer_id,
          amount_minor: transaction.amount.minor,
          created_ms: transaction.creation_timestamp,
          doc: transaction
        }).pipe(
          Effect.flatMap(
            (r) =>
              sql`INSERT INTO cobro_customer_transactions ${sql.insert(r)}
                ON CONFLICT DO NOTHING RETURNING transaction_id`
          ),
          orDie,
          Effect.flatMap((rows) =>
            rows.length === 1
              ? Effect.void
              : Effect.fail(Port.conflicts.transactionExists(transaction.transaction_id))
          )
        ),
      findTransaction: (owner, customer, id) => findTransaction({ owner, customer, id }),
      listTransactions: (owner, customer, before, limit) =>
        listTransactions({
          owner,
          customer,
          before: Option.getOrUndefined(
            Option.map(before, (c) => ({ created: c.creation_timestamp, id: c.id }))
          ),
          limit
        })
    })
  }
)

export const layer: Layer.Layer<Port.CustomerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.CustomerRepository,
  make
)
