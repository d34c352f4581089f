/**
 * Makes a unit of work atomic: the state change, its ledger entry and its outbox event commit
 * together or not at all. Nested calls are savepoints.
 */
import { Context, Effect, Layer } from "effect"
import { MemoryDb } from "./internal/memoryDb.js"

export class Transactor extends Context.Tag("@cobro/core/Transactor")<
  Transactor,
  {
    readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** Whether the calling fiber is inside a unit of work of this store. */
    readonly inTransaction: Effect.Effect<boolean>
  }
>() {}

/** Runs `effect` as one unit of work. */
export const transactionally = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Transactor> => Effect.flatMap(Transactor, (t) => t.withTransaction(effect))

export const layerMemory: Layer.Layer<Transactor, never, MemoryDb> = Layer.effect(
  Transactor,
  Effect.map(MemoryDb, (db) => ({ withTransaction: db.transaction, inTransaction: db.inTransaction }))
)
