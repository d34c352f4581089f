/**
 * `CustomerRepository` over `SqlClient`: one implementation for Postgres and SQLite. The unique
 * keys (user + customer id, bank alias, CVU) are the table's constraints; when one refuses a
 * write, the `Conflict` key is chosen as the memory adapter does (the customer id first, then
 * the alias, then the CVU), by looking at which rows hold the values.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Customer as C, CustomerRepository as Port, Errors, Money } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { decodeJson, encodeJson, isUniqueViolation, millis, recoverable, toBigInt } from "./internal/sql.js"

interface CustomerRow {
  readonly doc: unknown
  readonly balance_minor: unknown
}

const conflict = (key: string, message: string) => new Errors.Conflict({ key, message })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(C.Customer)
  const decode = decodeJson(C.Customer)
  const encodeTransaction = encodeJson(C.CustomerTransaction)
  const decodeTransaction = decodeJson(C.CustomerTransaction)
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })

  /**
   * The balance lives in its column only (the JSON holds zero): a JSON number cannot carry every
   * bigint. It is read back as text because SQLite returns INTEGER columns as JS numbers.
   */
  const fromRow = (r: CustomerRow) =>
    new C.Customer({ ...decode(r.doc), balance: Money.make(toBigInt(r.balance_minor), "ARS") })
  const one = (rows: ReadonlyArray<CustomerRow>) => Option.map(Option.fromNullable(rows[0]), fromRow)
  const select = sql`SELECT doc, CAST(balance_minor AS TEXT) AS balance_minor FROM cobro_customers`

  const row = (c: C.Customer) => ({
    user_id: c.user_id,
    customer_id: c.customer_id,
    alias: c.bank_info.alias,
    cvu: c.bank_info.cvu,
    balance_minor: c.balance.minor,
    created_ms: millis(c.creation_timestamp),
    doc: encode(new C.Customer({ ...c, balance: C.zeroBalance }))
  })

  /** Whether a customer other than `c`'s row holds `column = value`. */
  const heldByAnother = (c: C.Customer, column: "alias" | "cvu", value: string) =>
    sql<{ user_id: string }>`SELECT user_id FROM cobro_customers WHERE ${sql(column)} = ${value}
      AND NOT (user_id = ${c.user_id} AND customer_id = ${c.customer_id})`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  /** The `Conflict` a refused write of `c` is, in the memory adapter's order of checks. */
  const conflictOf = (c: C.Customer, checkKey: boolean) =>
    Effect.gen(function* () {
      if (checkKey) {
        const existing = yield* sql`SELECT 1 AS found FROM cobro_customers
          WHERE user_id = ${c.user_id} AND customer_id = ${c.customer_id}`
        if (existing.length > 0) {
          return conflict("customer.exists", `a customer with customer_id ${c.customer_id} already exists`)
        }
      }
      if (yield* heldByAnother(c, "alias", c.bank_info.alias)) {
        return conflict("customer.alias.taken", `the alias ${c.bank_info.alias} is already in use`)
      }
      if (yield* heldByAnother(c, "cvu", c.bank_info.cvu)) {
        return conflict("customer.cvu.taken", `the CVU ${c.bank_info.cvu} belongs to another customer`)
      }
      return yield* Effect.dieMessage(
        `customer ${c.customer_id}: a unique key refused the write but no row holds it`
      )
    }).pipe(Effect.orDie, Effect.flatMap(Effect.fail))

  return Port.CustomerRepository.of({
    insert: (customer) =>
      sql`INSERT INTO cobro_customers ${sql.insert(row(customer))} ON CONFLICT DO NOTHING RETURNING user_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : conflictOf(customer, true)))
      ),
    update: (customer) => {
      const { user_id: _u, customer_id: _c, ...fields } = row(customer)
      return recoverable(sql)(
        sql`UPDATE cobro_customers SET ${sql.update(fields)}
            WHERE user_id = ${customer.user_id} AND customer_id = ${customer.customer_id} RETURNING user_id`
      ).pipe(
        Effect.catchTag("SqlError", (e: SqlError) =>
          isUniqueViolation(e) ? conflictOf(customer, false) : Effect.die(e)
        ),
        Effect.flatMap((rows) =>
          rows.length === 0
            ? Effect.fail(conflict("customer.not.found", `customer ${customer.customer_id} does not exist`))
            : Effect.void
        )
      )
    },
    findById: (owner, id) =>
      sql<CustomerRow>`${select} WHERE user_id = ${owner} AND customer_id = ${id}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByIdForUpdate: (owner, id) =>
      sql<CustomerRow>`${select} WHERE user_id = ${owner} AND customer_id = ${id}${forUpdate}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByCvu: (cvu) => sql<CustomerRow>`${select} WHERE cvu = ${cvu}`.pipe(Effect.map(one), Effect.orDie),
    findByAlias: (alias) =>
      sql<CustomerRow>`${select} WHERE alias = ${alias}`.pipe(Effect.map(one), Effect.orDie),
    listByUser: (owner, cursor, limit) => {
      const after = Option.match(cursor, {
        onNone: () => [],
        onSome: (c) => {
          const ms = millis(c.creation_timestamp)
          return [sql`(created_ms, customer_id) > (${ms}, ${c.customer_id})`]
        }
      })
      return sql<CustomerRow>`${select} WHERE ${sql.and([sql`user_id = ${owner}`, ...after])}
        ORDER BY created_ms, customer_id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.orDie
      )
    },
    insertTransaction: (transaction) =>
      sql`INSERT INTO cobro_customer_transactions ${sql.insert({
        transaction_id: transaction.transaction_id,
        bank_transaction_id: transaction.bank_transaction_id,
        user_id: transaction.user_id,
        customer_id: transaction.customer_id,
        amount_minor: transaction.amount.minor,
        created_ms: millis(transaction.creation_timestamp),
        doc: encodeTransaction(transaction)
      })} ON CONFLICT DO NOTHING RETURNING transaction_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows.length === 1
            ? Effect.void
            : Effect.fail(
                conflict(
                  "customer.transaction.exists",
                  `transaction ${transaction.transaction_id} already exists`
                )
              )
        )
      ),
    findTransaction: (owner, customer, id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_customer_transactions
        WHERE transaction_id = ${id} AND user_id = ${owner} AND customer_id = ${customer}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => decodeTransaction(r.doc))),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.CustomerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.CustomerRepository,
  make
)
