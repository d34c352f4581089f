/**
 * Storage of outgoing transfers in flight (`OutgoingTransfer`).
 */
import { Context, DateTime, Effect, HashMap, Layer, Option, Order, RedBlackTree } from "effect"
import { Conflict } from "../Errors.js"
import { makeRef, type MemoryDb, timeKey } from "../internal/memoryDb.js"
import {
  isInFlight,
  type OutgoingTransfer,
  type TransferPurpose,
  type TransferState
} from "./OutgoingTransfer.js"

/** Which transfers `list` reads: in `states`, after the cursor, at most `limit`. */
export interface ListFilter {
  readonly states: ReadonlyArray<TransferState>
  /** The reference of the last transfer of the previous page (none: from the first). */
  readonly after: Option.Option<string>
  readonly limit: number
}

export class OutgoingTransferRepository extends Context.Tag("@cobro/core/OutgoingTransferRepository")<
  OutgoingTransferRepository,
  {
    /** Fails with `Conflict` when the reference is taken. */
    readonly insert: (transfer: OutgoingTransfer) => Effect.Effect<void, Conflict>
    readonly update: (transfer: OutgoingTransfer) => Effect.Effect<void>
    readonly findByReference: (reference: string) => Effect.Effect<Option.Option<OutgoingTransfer>>
    /** Like `findByReference`, and inside a transaction the row stays locked until it ends. */
    readonly findByReferenceForUpdate: (reference: string) => Effect.Effect<Option.Option<OutgoingTransfer>>
    /**
     * Transfers of `purpose` still in flight (SENDING or PENDING) whose `next_check_at <= now`,
     * earliest first (then by reference).
     */
    readonly findDue: (
      purpose: TransferPurpose,
      now: DateTime.Utc,
      limit: number
    ) => Effect.Effect<ReadonlyArray<OutgoingTransfer>>
    /**
     * Transfers in any of `states`, oldest first (by creation, then reference), after the
     * transfer `after` names (none when no transfer has that reference), for operators.
     */
    readonly list: (filter: ListFilter) => Effect.Effect<ReadonlyArray<OutgoingTransfer>>
  }
>() {}

/** `list`'s order: creation, then reference. */
const listOrder: Order.Order<OutgoingTransfer> = Order.combine(
  Order.mapInput(Order.number, (t: OutgoingTransfer) => DateTime.toEpochMillis(t.creation_timestamp)),
  Order.mapInput(Order.string, (t: OutgoingTransfer) => t.reference)
)

/** The `Conflict` the adapters raise when a reference is taken. */
export const referenceTaken = () =>
  new Conflict({
    key: "outgoing_transfer.reference.taken",
    message: "an outgoing transfer with this reference already exists"
  })

const dueKey = (t: OutgoingTransfer) => `${t.purpose}\u0000${timeKey(t.next_check_at)}\u0000${t.reference}`

interface Tables {
  readonly byReference: HashMap.HashMap<string, OutgoingTransfer>
  /** In-flight transfers by purpose and next check. */
  readonly due: RedBlackTree.RedBlackTree<string, string>
}

const withDue = (due: Tables["due"], t: OutgoingTransfer) =>
  isInFlight(t) ? RedBlackTree.insert(due, dueKey(t), t.reference) : due

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({
    byReference: HashMap.empty(),
    due: RedBlackTree.empty(Order.string)
  })
  const findByReference = (reference: string) =>
    Effect.map(tables.get, (t) => HashMap.get(t.byReference, reference))

  return OutgoingTransferRepository.of({
    insert: (transfer) =>
      tables
        .modify((t) =>
          HashMap.has(t.byReference, transfer.reference)
            ? ([false, t] as const)
            : ([
                true,
                {
                  byReference: HashMap.set(t.byReference, transfer.reference, transfer),
                  due: withDue(t.due, transfer)
                }
              ] as const)
        )
        .pipe(Effect.flatMap((inserted) => (inserted ? Effect.void : Effect.fail(referenceTaken())))),
    update: (transfer) =>
      tables.update((t) =>
        Option.match(HashMap.get(t.byReference, transfer.reference), {
          onNone: () => t,
          onSome: (previous) => ({
            byReference: HashMap.set(t.byReference, transfer.reference, transfer),
            due: withDue(RedBlackTree.removeFirst(t.due, dueKey(previous)), transfer)
          })
        })
      ),
    findByReference,
    findByReferenceForUpdate: findByReference,
    findDue: (purpose, now, limit) =>
      Effect.map(tables.get, (t) => {
        const out: Array<OutgoingTransfer> = []
        for (const [key, reference] of RedBlackTree.greaterThanEqual(t.due, `${purpose}\u0000`)) {
          if (out.length >= limit || !key.startsWith(`${purpose}\u0000`)) break
          const transfer = Option.getOrThrow(HashMap.get(t.byReference, reference))
          if (DateTime.greaterThan(transfer.next_check_at, now)) break
          out.push(transfer)
        }
        return out
      }),
    list: ({ after, limit, states }) =>
      Effect.map(tables.get, (t) => {
        const all = Array.from(HashMap.values(t.byReference)).sort(listOrder)
        const start = Option.match(after, {
          onNone: () => 0,
          onSome: (reference) => {
            const i = all.findIndex((x) => x.reference === reference)
            return i < 0 ? all.length : i + 1
          }
        })
        return all
          .slice(start)
          .filter((x) => states.includes(x.status))
          .slice(0, limit)
      })
  })
})

export const layerMemory: Layer.Layer<OutgoingTransferRepository, never, MemoryDb> = Layer.effect(
  OutgoingTransferRepository,
  makeMemory
)
