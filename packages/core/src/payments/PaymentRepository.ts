/**
 * Storage of one-off payments.
 */
import { Context, DateTime, Effect, Either, Layer, Option, Order, RedBlackTree, HashMap } from "effect"
import type { Cvu } from "../bank/BankAccount.js"
import { Conflict } from "../Errors.js"
import type { ExternalId, PaymentId, TeamId, UserId } from "../Ids.js"
import { MemoryCvuTable } from "../bank/memoryCvuTable.js"
import { makeRef, MemoryDb, timeKey } from "../internal/memoryDb.js"
import { CvuEntry } from "../bank/CvuDirectory.js"
import type { Payment } from "./Payment.js"
import { type DueScope, everyone, includes } from "../clocks/DueScope.js"

/** Keyset position in a user's payments, ordered by creation time then id. */
export interface PaymentCursor {
  readonly creation_timestamp: DateTime.Utc
  readonly id: PaymentId
}

export interface PaymentQuery {
  readonly user_id: UserId
  readonly team_id?: TeamId | undefined
  /** Inclusive lower bound on creation time. */
  readonly start_date?: DateTime.Utc | undefined
  /** Inclusive upper bound on creation time. */
  readonly end_date?: DateTime.Utc | undefined
}

export class PaymentRepository extends Context.Tag("@cobro/core/PaymentRepository")<
  PaymentRepository,
  {
    /** Fails with `Conflict` when the id, `(user_id, external_id)` or the CVU is taken. */
    readonly insert: (payment: Payment) => Effect.Effect<void, Conflict>
    /**
     * Whether `insertAll` of several costs less than `insert` of each: where a write has a
     * statement and a commit to share (SQL). `Payments.create` stores concurrent creations
     * together only then; in memory it would only add the bookkeeping.
     */
    readonly storesTogether: boolean
    /**
     * Stores payments together, as one unit of work (one statement on SQL): each answers what
     * `insert` of each, in order, would (`Conflict` when its id, `(user_id, external_id)` or CVU
     * is taken, by a stored payment or one before it in the list), and the others are stored.
     * A CVU the directory holds already dies with `CvuTaken` and stores none of them.
     */
    readonly insertAll: (
      payments: ReadonlyArray<Payment>
    ) => Effect.Effect<ReadonlyArray<Either.Either<void, Conflict>>>
    readonly update: (payment: Payment) => Effect.Effect<void>
    /**
     * Writes each payment's new state, as `update` of each in turn would (one statement on SQL:
     * a unit of work crediting several payments writes them together). A payment listed twice
     * is written as its last occurrence.
     */
    readonly updateAll: (payments: ReadonlyArray<Payment>) => Effect.Effect<void>
    readonly findById: (id: PaymentId) => Effect.Effect<Option.Option<Payment>>
    /** Like `findById`, and inside a transaction the row stays locked until it ends. */
    readonly findByIdForUpdate: (id: PaymentId) => Effect.Effect<Option.Option<Payment>>
    readonly findByExternalId: (user: UserId, externalId: ExternalId) => Effect.Effect<Option.Option<Payment>>
    readonly findByCvu: (cvu: Cvu) => Effect.Effect<Option.Option<Payment>>
    /** Like `findByCvu`, and inside a transaction the row stays locked until it ends. */
    readonly findByCvuForUpdate: (cvu: Cvu) => Effect.Effect<Option.Option<Payment>>
    /**
     * The payments of those CVUs that are payments' (CVUs that are not are left out), each row
     * locked like `findByCvuForUpdate`; rows are locked in id order, so two units of work locking
     * overlapping sets wait on each other instead of deadlocking.
     */
    readonly findByCvusForUpdate: (cvus: ReadonlyArray<Cvu>) => Effect.Effect<ReadonlyArray<Payment>>
    /** One page of a user's payments after `cursor`, oldest first. */
    readonly page: (
      query: PaymentQuery,
      cursor: Option.Option<PaymentCursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Payment>>
    /**
     * Inside a transaction: locks the payment if its expiry has come, its CVU is still open and
     * no other unit of work holds it (Postgres: `FOR UPDATE SKIP LOCKED`); `none` otherwise, at
     * once, so concurrent workers share due work instead of queueing on it.
     */
    readonly claimDue: (id: PaymentId, now: DateTime.Utc) => Effect.Effect<Option.Option<Payment>>
    /** Payments whose expiry has come (`expiration_timestamp <= now`) and whose CVU is still open. Only those of `scope` (everyone by default). */
    readonly findDue: (
      now: DateTime.Utc,
      limit: number,
      scope?: DueScope
    ) => Effect.Effect<ReadonlyArray<Payment>>
  }
>() {}

/**
 * The `Conflict` the adapters raise (memory and SQL alike) when an insert's id or external id
 * (`external_id`) or its CVU (`cvu`) is taken.
 */
const takenKey = { external_id: "payment.external_id.taken", cvu: "payment.cvu.taken" } as const
export const taken = (what: keyof typeof takenKey) =>
  new Conflict({ key: takenKey[what], message: "a payment with this id or CVU already exists" })

const listKey = (p: { user_id: string; creation_timestamp: DateTime.Utc; id: string }) =>
  `${p.user_id}\u0000${timeKey(p.creation_timestamp)}\u0000${p.id}`
const dueKey = (p: Payment) => `${timeKey(p.expiration_timestamp)}\u0000${p.id}`

interface Tables {
  readonly byId: HashMap.HashMap<PaymentId, Payment>
  readonly byExternal: HashMap.HashMap<string, PaymentId>
  readonly byCvu: HashMap.HashMap<string, PaymentId>
  readonly byUser: RedBlackTree.RedBlackTree<string, PaymentId>
  /** Payments whose CVU is still open, by expiry. */
  readonly open: RedBlackTree.RedBlackTree<string, PaymentId>
}

export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const cvus = yield* MemoryCvuTable
  const tables = yield* makeRef<Tables>({
    byId: HashMap.empty(),
    byExternal: HashMap.empty(),
    byCvu: HashMap.empty(),
    byUser: RedBlackTree.empty(Order.string),
    open: RedBlackTree.empty(Order.string)
  })
  const externalKey = (user: string, ext: string) => `${user}\u0000${ext}`

  const findById = (id: PaymentId) => Effect.map(tables.get, (t) => HashMap.get(t.byId, id))
  const findByCvu = (cvu: Cvu) =>
    Effect.map(tables.get, (t) => Option.flatMap(HashMap.get(t.byCvu, cvu), (id) => HashMap.get(t.byId, id)))

  const insertRow = (payment: Payment) =>
    tables.updateOrFail((t) => {
      const ext = externalKey(payment.user_id, payment.external_id)
      if (HashMap.has(t.byId, payment.id) || HashMap.has(t.byExternal, ext)) {
        return Either.left(taken("external_id"))
      }
      if (HashMap.has(t.byCvu, payment.cvu)) return Either.left(taken("cvu"))
      return Either.right({
        byId: HashMap.set(t.byId, payment.id, payment),
        byExternal: HashMap.set(t.byExternal, ext, payment.id),
        byCvu: HashMap.set(t.byCvu, payment.cvu, payment.id),
        byUser: RedBlackTree.insert(t.byUser, listKey(payment), payment.id),
        open: payment.cvu_released ? t.open : RedBlackTree.insert(t.open, dueKey(payment), payment.id)
      })
    })

  const insertOne = (payment: Payment) =>
    Effect.zipRight(
      insertRow(payment),
      cvus.register(
        new CvuEntry({
          cvu: payment.cvu,
          owner: "payment",
          owner_id: payment.id,
          user_id: payment.user_id
        })
      )
    )

  const update = (payment: Payment) =>
    tables.update((t) => {
      const previous = HashMap.get(t.byId, payment.id)
      if (Option.isNone(previous)) return t
      let open = RedBlackTree.removeFirst(t.open, dueKey(previous.value))
      if (!payment.cvu_released) open = RedBlackTree.insert(open, dueKey(payment), payment.id)
      return { ...t, byId: HashMap.set(t.byId, payment.id, payment), open }
    })

  return PaymentRepository.of({
    insert: (payment) => db.transaction(insertOne(payment)),
    storesTogether: false,
    insertAll: (payments) => db.transaction(Effect.forEach(payments, (p) => Effect.either(insertOne(p)))),
    update,
    updateAll: (payments) => Effect.forEach(payments, update, { discard: true }),
    findById,
    findByIdForUpdate: findById,
    claimDue: (id, now) =>
      Effect.map(
        findById(id),
        Option.filter((p) => !p.cvu_released && !DateTime.greaterThan(p.expiration_timestamp, now))
      ),
    findByExternalId: (user, ext) =>
      Effect.map(tables.get, (t) =>
        Option.flatMap(HashMap.get(t.byExternal, externalKey(user, ext)), (id) => HashMap.get(t.byId, id))
      ),
    findByCvu,
    findByCvuForUpdate: findByCvu,
    findByCvusForUpdate: (cvus) =>
      Effect.map(tables.get, (t) =>
        [...new Set(cvus)].flatMap((cvu) =>
          Option.toArray(Option.flatMap(HashMap.get(t.byCvu, cvu), (id) => HashMap.get(t.byId, id)))
        )
      ),
    page: (query, cursor, limit) =>
      Effect.map(tables.get, (t) => {
        const from = Option.match(cursor, {
          onNone: () => `${query.user_id}\u0000${query.start_date ? timeKey(query.start_date) : ""}`,
          onSome: (c) => listKey({ user_id: query.user_id, ...c })
        })
        const endMillis = query.end_date ? DateTime.toEpochMillis(query.end_date) : Infinity
        const out: Array<Payment> = []
        for (const [key, id] of RedBlackTree.greaterThan(t.byUser, from)) {
          if (!key.startsWith(`${query.user_id}\u0000`) || out.length >= limit) break
          const payment = Option.getOrThrow(HashMap.get(t.byId, id))
          if (DateTime.toEpochMillis(payment.creation_timestamp) > endMillis) break
          if (query.team_id !== undefined && payment.team_id !== query.team_id) continue
          out.push(payment)
        }
        return out
      }),
    findDue: (now, limit, scope = everyone) =>
      Effect.map(tables.get, (t) => {
        const out: Array<Payment> = []
        for (const [, id] of t.open) {
          const payment = Option.getOrThrow(HashMap.get(t.byId, id))
          if (out.length >= limit || DateTime.greaterThan(payment.expiration_timestamp, now)) break
          if (includes(scope, payment.user_id)) out.push(payment)
        }
        return out
      })
  })
})

export const layerMemory: Layer.Layer<PaymentRepository, never, MemoryDb | MemoryCvuTable> = Layer.effect(
  PaymentRepository,
  makeMemory
)
