/**
 * Storage of refunds (`Refund`): by id, by payment (oldest first) and by user (newest first,
 * keyset pages, for the merchant's payout list).
 */
import { Context, Effect, HashMap, Layer, Option, Order, RedBlackTree } from "effect"
import { Conflict } from "../Errors.js"
import type { PaymentId, UserId } from "../Ids.js"
import { makeRef, type MemoryDb, timeKey } from "../internal/memoryDb.js"
import type { Cursor } from "../Page.js"
import type { Refund, RefundId } from "./Refund.js"

export class RefundRepository extends Context.Tag("@cobro/core/RefundRepository")<
  RefundRepository,
  {
    /** Fails with `Conflict` when the id is taken. */
    readonly insert: (refund: Refund) => Effect.Effect<void, Conflict>
    readonly update: (refund: Refund) => Effect.Effect<void>
    readonly findById: (id: RefundId) => Effect.Effect<Option.Option<Refund>>
    /** Like `findById`, and inside a transaction the row stays locked until it ends. */
    readonly findByIdForUpdate: (id: RefundId) => Effect.Effect<Option.Option<Refund>>
    /** The payment's refunds, oldest first (creation time, then id). */
    readonly listByPayment: (payment: PaymentId) => Effect.Effect<ReadonlyArray<Refund>>
    /**
     * Up to `limit` of the user's refunds, newest first (creation time, then id, both
     * descending), after `before` (the last item of the previous page).
     */
    readonly listByUser: (
      user: UserId,
      before: Option.Option<Cursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Refund>>
  }
>() {}

/** The `Conflict` the adapters raise when a refund id is taken. */
export const idTaken = () =>
  new Conflict({ key: "refund.id.taken", message: "a refund with this id already exists" })

const positionKey = (owner: string, at: Refund["creation_timestamp"], id: string) =>
  `${owner}\u0000${timeKey(at)}\u0000${id}`

interface Tables {
  readonly byId: HashMap.HashMap<string, Refund>
  readonly byPayment: RedBlackTree.RedBlackTree<string, string>
  readonly byUser: RedBlackTree.RedBlackTree<string, string>
}

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({
    byId: HashMap.empty(),
    byPayment: RedBlackTree.empty(Order.string),
    byUser: RedBlackTree.empty(Order.string)
  })
  const findById = (id: RefundId) => Effect.map(tables.get, (t) => HashMap.get(t.byId, id))

  return RefundRepository.of({
    insert: (refund) =>
      tables
        .modify((t) =>
          HashMap.has(t.byId, refund.refund_id)
            ? ([false, t] as const)
            : ([
                true,
                {
                  byId: HashMap.set(t.byId, refund.refund_id, refund),
                  byPayment: RedBlackTree.insert(
                    t.byPayment,
                    positionKey(refund.payment_id, refund.creation_timestamp, refund.refund_id),
                    refund.refund_id
                  ),
                  byUser: RedBlackTree.insert(
                    t.byUser,
                    positionKey(refund.user_id, refund.creation_timestamp, refund.refund_id),
                    refund.refund_id
                  )
                }
              ] as const)
        )
        .pipe(Effect.flatMap((inserted) => (inserted ? Effect.void : Effect.fail(idTaken())))),
    update: (refund) =>
      tables.update((t) =>
        HashMap.has(t.byId, refund.refund_id)
          ? { ...t, byId: HashMap.set(t.byId, refund.refund_id, refund) }
          : t
      ),
    findById,
    findByIdForUpdate: findById,
    listByPayment: (payment) =>
      Effect.map(tables.get, (t) => {
        const prefix = `${payment}\u0000`
        const out: Array<Refund> = []
        for (const [key, id] of RedBlackTree.greaterThanEqual(t.byPayment, prefix)) {
          if (!key.startsWith(prefix)) break
          out.push(Option.getOrThrow(HashMap.get(t.byId, id)))
        }
        return out
      }),
    listByUser: (user, before, limit) =>
      Effect.map(tables.get, (t) => {
        const prefix = `${user}\u0000`
        const from = Option.match(before, {
          onNone: () => `${prefix}\uffff`,
          onSome: (c) => positionKey(user, c.creation_timestamp, c.id)
        })
        const out: Array<Refund> = []
        for (const [key, id] of RedBlackTree.lessThanReversed(t.byUser, from)) {
          if (!key.startsWith(prefix) || out.length >= limit) break
          out.push(Option.getOrThrow(HashMap.get(t.byId, id)))
        }
        return out
      })
  })
})

export const layerMemory: Layer.Layer<RefundRepository, never, MemoryDb> = Layer.effect(
  RefundRepository,
  makeMemory
)
