/**
 * How an owner of outgoing transfers (schedule payouts, split payouts, refunds) hears their
 * outcome. `outgoing/` knows no owner: each owner declares its `Settlement` (with
 * `ownerSettlement`, the one shared step) and the engine assembles them into the registry,
 * `Settlements.layer(...)`, which the settle step reads by a transfer's purpose.
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { BankTransactionId } from "../Ids.js"
import type { OutgoingTransfer, TransferPurpose } from "./OutgoingTransfer.js"
import { TransferPurpose as Purposes } from "./OutgoingTransfer.js"

/** How a transfer in flight ended. */
export type Outcome =
  | { readonly _tag: "Completed"; readonly bank_transaction_id: BankTransactionId }
  | {
      readonly _tag: "Failed"
      readonly bank_transaction_id: BankTransactionId | null
      readonly reason: string
    }

/** What the owner's step reads of the transfer that settles (its reference, its owner, its sends). */
export type Settling = Pick<OutgoingTransfer, "reference" | "owner_id" | "sends">

/**
 * What an owner plugs into the settle step for its `purpose`: the kinds of its two ledger
 * entries, and `settled`, which records the outcome on its own record (and writes its events)
 * inside the settlement's unit of work, after the ledger move; it answers whether that finished
 * the owner's work (a split's last payout).
 */
export interface Settlement {
  readonly purpose: TransferPurpose
  readonly completedKind: string
  readonly failedKind: string
  readonly settled: (transfer: Settling, outcome: Outcome) => Effect.Effect<boolean>
}

/** An owner's record that waits for one transfer: how to read, settle and store it. */
export interface OwnerRecord<A> {
  readonly purpose: TransferPurpose
  readonly completedKind: string
  readonly failedKind: string
  /** What the record is called in the defect raised when it is not waiting ("refund"). */
  readonly name: string
  /** The record the transfer settles, locked for the unit of work; none when there is none. */
  readonly lock: (transfer: Settling) => Effect.Effect<Option.Option<A>>
  /** Whether the record still waits for its transfer (PENDING). */
  readonly waiting: (record: A) => boolean
  /** The record with the outcome set (SUCCESS or FAILED, the bank's id or its reason). */
  readonly settle: (record: A, outcome: Outcome, transfer: Settling, now: DateTime.Utc) => Effect.Effect<A>
  readonly update: (record: A) => Effect.Effect<void>
  /** The events of the settled record; whether the owner's work is finished. */
  readonly emit: (settled: A, outcome: Outcome, now: DateTime.Utc) => Effect.Effect<boolean>
}

/**
 * The one owner-settlement step: lock the owner's record, require it waiting (a record that is
 * not is a broken invariant: the transfer was in flight), set the outcome, store it, emit.
 */
export const ownerSettlement = <A>(owner: OwnerRecord<A>): Settlement => ({
  purpose: owner.purpose,
  completedKind: owner.completedKind,
  failedKind: owner.failedKind,
  settled: (transfer, outcome) =>
    Effect.gen(function* () {
      const found = yield* owner.lock(transfer)
      if (Option.isNone(found) || !owner.waiting(found.value)) {
        return yield* Effect.dieMessage(
          `${owner.name} ${transfer.reference} is not PENDING while its transfer settles`
        )
      }
      const now = yield* DateTime.now
      const settled = yield* owner.settle(found.value, outcome, transfer, now)
      yield* owner.update(settled)
      return yield* owner.emit(settled, outcome, now)
    })
})

/** The registry: every purpose's settlement. */
export class Settlements extends Context.Tag("@cobro/core/Settlements")<
  Settlements,
  { readonly of: (purpose: TransferPurpose) => Settlement; readonly purposes: ReadonlyArray<TransferPurpose> }
>() {}

/**
 * The registry of the settlements the owners declare; building it dies unless every purpose has
 * exactly one (a transfer whose owner never hears of it would leave money in transit for good).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each owner's own requirements
export const layer = <const Registered extends ReadonlyArray<Effect.Effect<Settlement, never, any>>>(
  ...registered: Registered
): Layer.Layer<Settlements, never, Effect.Effect.Context<Registered[number]>> =>
  Layer.effect(
    Settlements,
    Effect.gen(function* () {
      const byPurpose = new Map<TransferPurpose, Settlement>()
      const all: ReadonlyArray<Effect.Effect<Settlement, never, Effect.Effect.Context<Registered[number]>>> =
        registered
      for (const settlement of yield* Effect.all(all)) {
        if (byPurpose.has(settlement.purpose)) {
          return yield* Effect.dieMessage(`two settlements are registered for "${settlement.purpose}"`)
        }
        byPurpose.set(settlement.purpose, settlement)
      }
      const missing = Purposes.literals.filter((p) => !byPurpose.has(p))
      if (missing.length > 0) {
        return yield* Effect.dieMessage(`no settlement is registered for ${missing.join(", ")}`)
      }
      return { of: (purpose) => byPurpose.get(purpose)!, purposes: Purposes.literals }
    })
  )
