/**
 * The CVU directory: whose CVU this is. Payments, fixed customers and split payments register the
 * CVU they open in the unit of work that stores them; a customer that moves to a new CVU
 * unregisters the one it leaves (a customer is credited on its current CVU only). Every "whose
 * CVU is this" question (the faucet, the crediting of incoming transfers) is one lookup here.
 *
 * A CVU registered twice is a defect (`CvuTaken`): the bank issues a CVU to one account only, and
 * each owner's own storage refuses a CVU it already holds before the directory is asked.
 */
import { Context, Data, Effect, HashMap, Layer, Option, Schema } from "effect"
import { Cvu } from "../bank/BankAccount.js"
import { UserId } from "../Ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { Class } from "../internal/schemaClass.js"

/** What a CVU belongs to. */
export const CvuOwner = Schema.Literal("payment", "customer", "split_payment")
export type CvuOwner = typeof CvuOwner.Type

/**
 * One CVU and its owner: a payment's id, a customer's `customer_id` (unique per `user_id` only)
 * or a split payment's id; `user_id` is the merchant it belongs to.
 */
export class CvuEntry extends Class<CvuEntry>("CvuEntry")({
  cvu: Cvu,
  owner: CvuOwner,
  owner_id: Schema.String,
  user_id: UserId
}) {}

/** The defect of registering a CVU the directory already holds. */
export class CvuTaken extends Data.TaggedError("CvuTaken")<{ readonly cvu: Cvu }> {
  override get message() {
    return `the CVU ${this.cvu} is already registered in the CVU directory`
  }
}

export class CvuDirectory extends Context.Tag("@cobro/core/CvuDirectory")<
  CvuDirectory,
  {
    /** Records the CVU just opened for `owner_id`; runs in the caller's unit of work. Dies with `CvuTaken` when held. */
    readonly register: (entry: CvuEntry) => Effect.Effect<void>
    /** Forgets a CVU its owner left (a customer's replaced CVU), in the caller's unit of work. */
    readonly unregister: (cvu: Cvu) => Effect.Effect<void>
    /** Whose CVU this is, locking the entry for the unit of work (Postgres FOR UPDATE). */
    readonly findForUpdate: (cvu: Cvu) => Effect.Effect<Option.Option<CvuEntry>>
    /** The same for many CVUs in one statement (the batch path); entries in no particular order. */
    readonly findAllForUpdate: (cvus: ReadonlyArray<Cvu>) => Effect.Effect<ReadonlyArray<CvuEntry>>
    /** Plain read, no lock (the faucet's ownership check). */
    readonly find: (cvu: Cvu) => Effect.Effect<Option.Option<CvuEntry>>
  }
>() {}

export const makeMemory = Effect.gen(function* () {
  const entries = yield* makeRef(HashMap.empty<Cvu, CvuEntry>())
  const find = (cvu: Cvu) => Effect.map(entries.get, HashMap.get(cvu))
  return CvuDirectory.of({
    register: (entry) =>
      Effect.flatMap(
        entries.modify((t) =>
          HashMap.has(t, entry.cvu) ? [false, t] : [true, HashMap.set(t, entry.cvu, entry)]
        ),
        (added) => (added ? Effect.void : Effect.die(new CvuTaken({ cvu: entry.cvu })))
      ),
    unregister: (cvu) => entries.update(HashMap.remove(cvu)),
    findForUpdate: find,
    findAllForUpdate: (cvus) =>
      Effect.map(entries.get, (t) =>
        [...new Set(cvus)].flatMap((cvu) => Option.toArray(HashMap.get(t, cvu)))
      ),
    find
  })
})

export const layerMemory: Layer.Layer<CvuDirectory, never, MemoryDb> = Layer.effect(CvuDirectory, makeMemory)
