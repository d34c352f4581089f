/**
 * `CvuDirectory` over `SqlClient` (table `cobro_cvu_directory`, migration 0009): one row per CVU,
 * its columns the entry's fields, read through `SqlSchema` with `CvuEntry` as the row schema.
 * The rows are written by triggers on the owners' tables (migration 0011), in the statement that
 * stores the owner; a CVU entered twice fails that statement, which the owners' repositories
 * turn into the `CvuTaken` defect (`dieOnCvuTaken`).
 */
import { SqlClient } from "@effect/sql"
import { BankAccount } from "@cobro/core"
import { CvuDirectory as Port } from "@cobro/core/ports"
import { Effect, Layer, Schema } from "effect"
import type { SqlError } from "@effect/sql/SqlError"
import { findAll, findOne, forUpdate, isUniqueViolation, violationText } from "./internal/sql.js"

const Cvus = Schema.Array(BankAccount.Cvu)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const locking = forUpdate(sql)
  const columns = sql`SELECT cvu, owner, owner_id, user_id FROM cobro_cvu_directory`

  const findEntry = (locked: boolean) =>
    findOne({
      Request: BankAccount.Cvu,
      Result: Port.CvuEntry,
      execute: (cvu) => sql`${columns} WHERE cvu = ${cvu}${locked ? locking : sql``}`
    })
  const find = findEntry(false)
  const findForUpdate = findEntry(true)

  // Rows locked in key order, so two batches locking overlapping CVUs cannot deadlock.
  const findManyForUpdate = findAll({
    Request: Cvus,
    Result: Port.CvuEntry,
    execute: (cvus) => sql`${columns} WHERE ${sql.in("cvu", [...new Set(cvus)])} ORDER BY cvu${locking}`
  })

  return Port.CvuDirectory.of({
    findForUpdate,
    findAllForUpdate: (cvus) => (cvus.length === 0 ? Effect.succeed([]) : findManyForUpdate(cvus)),
    find
  })
})

export const layer: Layer.Layer<Port.CvuDirectory, never, SqlClient.SqlClient> = Layer.effect(
  Port.CvuDirectory,
  make
)

/**
 * Whether a failed write of an owner (payment, customer, split payment) is the directory's
 * trigger finding its CVU held already: the `CvuTaken` defect, not the owner's own conflict.
 */
export const isCvuTaken = (error: SqlError): boolean =>
  isUniqueViolation(error) && violationText(error).includes("cobro_cvu_directory")
