/**
 * The CVU directory: whose CVU this is. Every "whose CVU is this" question (the faucet, the
 * crediting of incoming transfers) is one lookup here.
 *
 * The directory is written by its owners' storage, in the very write that stores the owner: a
 * payment, fixed customer or split payment inserted enters it, and a customer moved to a new CVU
 * leaves its old one (a customer is credited on its current CVU only). The SQL adapters do it
 * with triggers on the owners' tables (migration 0011), so storing a payment stays one statement;
 * the memory adapters in the owners' memory repositories. The port is therefore reads only.
 *
 * A CVU entered twice is a defect (`CvuTaken`) and the owner's write is undone: the bank issues
 * a CVU to one account only, and each owner's own storage refuses a CVU it already holds first.
 */
import { Context, Data, type Effect, type Option, Schema } from "effect"
import { Cvu } from "./BankAccount.js"
import { UserId } from "../Ids.js"
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

/** The defect of storing an owner whose CVU the directory already holds. */
export class CvuTaken extends Data.TaggedError("CvuTaken")<{ readonly cvu: Cvu }> {
  override get message() {
    return `the CVU ${this.cvu} is already registered in the CVU directory`
  }
}

export class CvuDirectory extends Context.Tag("@cobro/core/CvuDirectory")<
  CvuDirectory,
  {
    /** Whose CVU this is, locking the entry for the unit of work (Postgres FOR UPDATE). */
    readonly findForUpdate: (cvu: Cvu) => Effect.Effect<Option.Option<CvuEntry>>
    /** The same for many CVUs in one statement (the batch path); entries in no particular order. */
    readonly findAllForUpdate: (cvus: ReadonlyArray<Cvu>) => Effect.Effect<ReadonlyArray<CvuEntry>>
    /** Plain read, no lock. */
    readonly find: (cvu: Cvu) => Effect.Effect<Option.Option<CvuEntry>>
  }
>() {}
