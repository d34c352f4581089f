/**
 * `CvuDirectory` over `SqlClient` (table `cobro_cvu_directory`, migration 0009): one row per CVU,
 * its columns the entry's fields, read and written through `SqlSchema` with `CvuEntry` as the
 * row schema. A CVU registered twice dies with `CvuTaken` (the primary key refuses it).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { BankAccount, CvuDirectory as Port } from "@cobro/core"
import { Effect, Layer, Schema } from "effect"
import { forUpdate, isUniqueViolation, orDie } from "./internal/sql.js"

const Cvus = Schema.Array(BankAccount.Cvu)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const locking = forUpdate(sql)
  const columns = sql`SELECT cvu, owner, owner_id, user_id FROM cobro_cvu_directory`

  const findOne = (locked: boolean) =>
    SqlSchema.findOne({
      Request: BankAccount.Cvu,
      Result: Port.CvuEntry,
      execute: (cvu) => sql`${columns} WHERE cvu = ${cvu}${locked ? locking : sql``}`
    })
  const find = findOne(false)
  const findForUpdate = findOne(true)

  // Rows locked in key order, so two batches locking overlapping CVUs cannot deadlock.
  const findAll = SqlSchema.findAll({
    Request: Cvus,
    Result: Port.CvuEntry,
    execute: (cvus) => sql`${columns} WHERE ${sql.in("cvu", [...new Set(cvus)])} ORDER BY cvu${locking}`
  })

  const insert = SqlSchema.void({
    Request: Port.CvuEntry,
    execute: (entry) => sql`INSERT INTO cobro_cvu_directory ${sql.insert(entry)}`
  })

  const remove = SqlSchema.void({
    Request: BankAccount.Cvu,
    execute: (cvu) => sql`DELETE FROM cobro_cvu_directory WHERE cvu = ${cvu}`
  })

  return Port.CvuDirectory.of({
    register: (entry) =>
      insert(entry).pipe(
        Effect.catchAll((e) =>
          e._tag === "SqlError" && isUniqueViolation(e)
            ? Effect.die(new Port.CvuTaken({ cvu: entry.cvu }))
            : Effect.die(e)
        )
      ),
    unregister: (cvu) => orDie(remove(cvu)),
    findForUpdate: (cvu) => orDie(findForUpdate(cvu)),
    findAllForUpdate: (cvus) => (cvus.length === 0 ? Effect.succeed([]) : orDie(findAll(cvus))),
    find: (cvu) => orDie(find(cvu))
  })
})

export const layer: Layer.Layer<Port.CvuDirectory, never, SqlClient.SqlClient> = Layer.effect(
  Port.CvuDirectory,
  make
)
