/**
 * The CVU directory's table in memory. The SQL adapters keep `cobro_cvu_directory` by triggers on
 * the owners' tables, in the statement that stores the owner; here the memory repositories of the
 * owners (payments, customers, split payments) write it in the unit of work of their own write,
 * and `layerDirectory` (the memory `CvuDirectory`) reads it.
 */
import { Context, Effect, HashMap, Layer, Option } from "effect"
import type { Cvu } from "./BankAccount.js"
import { CvuDirectory, type CvuEntry, CvuTaken } from "./CvuDirectory.js"
import { makeRef, type MemoryDb, type TxRef } from "../internal/memoryDb.js"

export class MemoryCvuTable extends Context.Tag("@cobro/core/internal/MemoryCvuTable")<
  MemoryCvuTable,
  {
    readonly entries: TxRef<HashMap.HashMap<Cvu, CvuEntry>>
    /**
     * Enters `entry`; dies with `CvuTaken` when its CVU is held. Run it in the unit of work of
     * the owner's write (`MemoryDb.transaction`), so a defect undoes that write too.
     */
    readonly register: (entry: CvuEntry) => Effect.Effect<void>
    /** Removes the entry of a CVU its owner left. */
    readonly unregister: (cvu: Cvu) => Effect.Effect<void>
  }
>() {}

export const make = Effect.gen(function* () {
  const entries = yield* makeRef(HashMap.empty<Cvu, CvuEntry>())
  return MemoryCvuTable.of({
    entries,
    register: (entry) =>
      Effect.flatMap(
        entries.modify((t) =>
          HashMap.has(t, entry.cvu) ? [false, t] : [true, HashMap.set(t, entry.cvu, entry)]
        ),
        (added) => (added ? Effect.void : Effect.die(new CvuTaken({ cvu: entry.cvu })))
      ),
    unregister: (cvu) => entries.update(HashMap.remove(cvu))
  })
})

export const layer: Layer.Layer<MemoryCvuTable, never, MemoryDb> = Layer.effect(MemoryCvuTable, make)

/** The memory `CvuDirectory`: reads of the table the memory repositories write. */
export const layerDirectory: Layer.Layer<CvuDirectory, never, MemoryCvuTable> = Layer.effect(
  CvuDirectory,
  Effect.map(MemoryCvuTable, ({ entries }) => {
    const find = (cvu: Cvu) => Effect.map(entries.get, HashMap.get(cvu))
    const findAllForUpdate = (cvus: ReadonlyArray<Cvu>) =>
      Effect.map(entries.get, (t) => [...new Set(cvus)].flatMap((cvu) => Option.toArray(HashMap.get(t, cvu))))
    return CvuDirectory.of({ find, findForUpdate: find, findAllForUpdate })
  })
)
