/**
 * Storage of fixed customers and of the transfers credited to them. A customer is keyed by
 * `(user_id, customer_id)`; its CVU and its bank alias are unique across all users (a SQL
 * adapter backs each rule with a unique index).
 */
import { Context, type DateTime, Effect, Either, HashMap, Layer, Option, Order, RedBlackTree } from "effect"
import type { Alias, Cvu } from "../bank/BankAccount.js"
import type { Customer, CustomerId, CustomerTransaction, CustomerTransactionId } from "./Customer.js"
import { Conflict } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { MemoryCvuTable } from "../bank/memoryCvuTable.js"
import { makeRef, MemoryDb, timeKey } from "../internal/memoryDb.js"
import { CvuEntry } from "../bank/CvuDirectory.js"
import type { Cursor } from "../Page.js"

/** Keyset position in a user's customers, ordered by creation time then customer id. */
export interface CustomerCursor {
  readonly creation_timestamp: DateTime.Utc
  readonly customer_id: CustomerId
}

export class CustomerRepository extends Context.Tag("@cobro/core/CustomerRepository")<
  CustomerRepository,
  {
    /**
     * Fails with `Conflict` `customer.exists` when the user already has this customer id, and
     * `customer.alias.taken` / `customer.cvu.taken` when another customer holds the alias or CVU.
     */
    readonly insert: (customer: Customer) => Effect.Effect<void, Conflict>
    /** Replaces a stored customer; fails with `Conflict` when the new alias or CVU is another's. */
    readonly update: (customer: Customer) => Effect.Effect<void, Conflict>
    readonly findById: (owner: UserId, id: CustomerId) => Effect.Effect<Option.Option<Customer>>
    /** Like `findById`, and inside a transaction the row stays locked until it ends. */
    readonly findByIdForUpdate: (owner: UserId, id: CustomerId) => Effect.Effect<Option.Option<Customer>>
    /** The customer whose current CVU this is (a released CVU belongs to nobody). */
    readonly findByCvu: (cvu: Cvu) => Effect.Effect<Option.Option<Customer>>
    /** The customer whose current bank alias this is, whichever user it belongs to. */
    readonly findByAlias: (alias: Alias) => Effect.Effect<Option.Option<Customer>>
    /** One page of a user's customers after `cursor`, oldest first. */
    readonly listByUser: (
      owner: UserId,
      cursor: Option.Option<CustomerCursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Customer>>
    /** Fails with `Conflict` when the transaction id or its bank transaction id is already stored. */
    readonly insertTransaction: (transaction: CustomerTransaction) => Effect.Effect<void, Conflict>
    readonly findTransaction: (
      owner: UserId,
      customer: CustomerId,
      id: CustomerTransactionId
    ) => Effect.Effect<Option.Option<CustomerTransaction>>
    /**
     * Up to `limit` of a customer's transactions, newest first (creation time, then transaction
     * id, both descending), after `before` (its position: the last item of the previous page).
     */
    readonly listTransactions: (
      owner: UserId,
      customer: CustomerId,
      before: Option.Option<Cursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<CustomerTransaction>>
  }
>() {}

const rowKey = (user: string, id: string) => `${user}\u0000${id}`
const listKey = (user: string, c: CustomerCursor) =>
  `${user}\u0000${timeKey(c.creation_timestamp)}\u0000${c.customer_id}`

interface Tables {
  readonly byKey: HashMap.HashMap<string, Customer>
  readonly byCvu: HashMap.HashMap<string, string>
  readonly byAlias: HashMap.HashMap<string, string>
  readonly byUser: RedBlackTree.RedBlackTree<string, string>
}

interface TransactionTables {
  readonly byId: HashMap.HashMap<string, CustomerTransaction>
  readonly byBankId: HashMap.HashMap<string, string>
  /** Keyed `user, customer, time, id`: a customer's transactions in time order. */
  readonly byCustomer: RedBlackTree.RedBlackTree<string, string>
}

const customerPrefix = (user: string, customer: string) => `${user}\u0000${customer}\u0000`
const transactionKey = (user: string, customer: string, at: DateTime.Utc, id: string) =>
  `${customerPrefix(user, customer)}${timeKey(at)}\u0000${id}`

/** The `Conflict`s the adapters raise (memory and SQL alike), defined once. */
export const conflicts = {
  exists: (id: CustomerId) =>
    new Conflict({ key: "customer.exists", message: `a customer with customer_id ${id} already exists` }),
  aliasTaken: (alias: Alias) =>
    new Conflict({ key: "customer.alias.taken", message: `the alias ${alias} is already in use` }),
  cvuTaken: (cvu: Cvu) =>
    new Conflict({ key: "customer.cvu.taken", message: `the CVU ${cvu} belongs to another customer` }),
  notFound: (id: CustomerId) =>
    new Conflict({ key: "customer.not.found", message: `customer ${id} does not exist` }),
  transactionExists: (id: CustomerTransactionId) =>
    new Conflict({ key: "customer.transaction.exists", message: `transaction ${id} already exists` })
}

/** Whether `customer`'s alias or CVU is held by a customer other than the row at `key`. */
const uniqueness = (t: Tables, key: string, customer: Customer): Either.Either<void, Conflict> => {
  const aliasOwner = HashMap.get(t.byAlias, customer.bank_info.alias)
  if (Option.isSome(aliasOwner) && aliasOwner.value !== key) {
    return Either.left(conflicts.aliasTaken(customer.bank_info.alias))
  }
  const cvuOwner = HashMap.get(t.byCvu, customer.bank_info.cvu)
  if (Option.isSome(cvuOwner) && cvuOwner.value !== key) {
    return Either.left(conflicts.cvuTaken(customer.bank_info.cvu))
  }
  return Either.void
}

export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const cvus = yield* MemoryCvuTable
  const entryOf = (c: Customer) =>
    new CvuEntry({ cvu: c.bank_info.cvu, owner: "customer", owner_id: c.customer_id, user_id: c.user_id })
  const tables = yield* makeRef<Tables>({
    byKey: HashMap.empty(),
    byCvu: HashMap.empty(),
    byAlias: HashMap.empty(),
    byUser: RedBlackTree.empty(Order.string)
  })
  const transactions = yield* makeRef<TransactionTables>({
    byId: HashMap.empty(),
    byBankId: HashMap.empty(),
    byCustomer: RedBlackTree.empty(Order.string)
  })

  const findById = (owner: UserId, id: CustomerId) =>
    Effect.map(tables.get, (t) => HashMap.get(t.byKey, rowKey(owner, id)))
  const byIndex = (pick: (t: Tables) => HashMap.HashMap<string, string>) => (value: string) =>
    Effect.map(tables.get, (t) =>
      Option.flatMap(HashMap.get(pick(t), value), (key) => HashMap.get(t.byKey, key))
    )

  const insertRow = (customer: Customer) =>
    tables.updateOrFail((t) => {
      const key = rowKey(customer.user_id, customer.customer_id)
      if (HashMap.has(t.byKey, key)) return Either.left(conflicts.exists(customer.customer_id))
      return Either.map(uniqueness(t, key, customer), () => ({
        byKey: HashMap.set(t.byKey, key, customer),
        byCvu: HashMap.set(t.byCvu, customer.bank_info.cvu, key),
        byAlias: HashMap.set(t.byAlias, customer.bank_info.alias, key),
        byUser: RedBlackTree.insert(t.byUser, listKey(customer.user_id, customer), key)
      }))
    })
  const updateRow = (customer: Customer) =>
    tables.updateOrFail((t) => {
      const key = rowKey(customer.user_id, customer.customer_id)
      const previous = HashMap.get(t.byKey, key)
      if (Option.isNone(previous)) return Either.left(conflicts.notFound(customer.customer_id))
      const old = previous.value.bank_info
      return Either.map(uniqueness(t, key, customer), () => ({
        ...t,
        byKey: HashMap.set(t.byKey, key, customer),
        byCvu: HashMap.set(HashMap.remove(t.byCvu, old.cvu), customer.bank_info.cvu, key),
        byAlias: HashMap.set(HashMap.remove(t.byAlias, old.alias), customer.bank_info.alias, key)
      }))
    })

  return CustomerRepository.of({
    insert: (customer) =>
      db.transaction(Effect.zipRight(insertRow(customer), cvus.register(entryOf(customer)))),
    update: (customer) =>
      db.transaction(
        Effect.gen(function* () {
          const before = yield* findById(customer.user_id, customer.customer_id)
          yield* updateRow(customer)
          if (Option.isSome(before) && before.value.bank_info.cvu !== customer.bank_info.cvu) {
            yield* cvus.unregister(before.value.bank_info.cvu)
            yield* cvus.register(entryOf(customer))
          }
        })
      ),
    findById,
    findByIdForUpdate: findById,
    findByCvu: byIndex((t) => t.byCvu),
    findByAlias: byIndex((t) => t.byAlias),
    listByUser: (owner, cursor, limit) =>
      Effect.map(tables.get, (t) => {
        const from = Option.match(cursor, {
          onNone: () => `${owner}\u0000`,
          onSome: (c) => listKey(owner, c)
        })
        const out: Array<Customer> = []
        for (const [key, row] of RedBlackTree.greaterThan(t.byUser, from)) {
          if (!key.startsWith(`${owner}\u0000`) || out.length >= limit) break
          out.push(Option.getOrThrow(HashMap.get(t.byKey, row)))
        }
        return out
      }),
    insertTransaction: (transaction) =>
      transactions.updateOrFail((t) =>
        HashMap.has(t.byId, transaction.transaction_id) ||
        HashMap.has(t.byBankId, transaction.bank_transaction_id)
          ? Either.left(conflicts.transactionExists(transaction.transaction_id))
          : Either.right({
              byId: HashMap.set(t.byId, transaction.transaction_id, transaction),
              byBankId: HashMap.set(t.byBankId, transaction.bank_transaction_id, transaction.transaction_id),
              byCustomer: RedBlackTree.insert(
                t.byCustomer,
                transactionKey(
                  transaction.user_id,
                  transaction.customer_id,
                  transaction.creation_timestamp,
                  transaction.transaction_id
                ),
                transaction.transaction_id
              )
            })
      ),
    findTransaction: (owner, customer, id) =>
      Effect.map(transactions.get, (t) =>
        Option.filter(HashMap.get(t.byId, id), (tx) => tx.user_id === owner && tx.customer_id === customer)
      ),
    listTransactions: (owner, customer, before, limit) =>
      Effect.map(transactions.get, (t) => {
        const prefix = customerPrefix(owner, customer)
        // `\uffff` sorts after every key of this customer: the newest first when no cursor.
        const from = Option.match(before, {
          onNone: () => `${prefix}\uffff`,
          onSome: (c) => transactionKey(owner, customer, c.creation_timestamp, c.id)
        })
        const out: Array<CustomerTransaction> = []
        for (const [key, id] of RedBlackTree.lessThanReversed(t.byCustomer, from)) {
          if (!key.startsWith(prefix) || out.length >= limit) break
          out.push(Option.getOrThrow(HashMap.get(t.byId, id)))
        }
        return out
      })
  })
})

export const layerMemory: Layer.Layer<CustomerRepository, never, MemoryDb | MemoryCvuTable> = Layer.effect(
  CustomerRepository,
  makeMemory
)
