/**
 * `Transactor` over `SqlClient.withTransaction`: nested units are SAVEPOINTs; a failure, defect
 * or interruption rolls back. A database error of the transaction itself (begin, commit) is a
 * defect: nothing was written, and the caller's typed errors stay its own.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Transactor as Port } from "@cobro/core/ports"
import { Effect, Layer } from "effect"
import { inTransaction } from "./internal/sql.js"

export const make = Effect.map(SqlClient.SqlClient, (sql) =>
  Port.Transactor.of({
    withTransaction: (effect) =>
      sql
        .withTransaction(effect)
        .pipe(Effect.catchIf((e): e is SqlError => e instanceof SqlError, Effect.die)),
    inTransaction
  })
)

export const layer: Layer.Layer<Port.Transactor, never, SqlClient.SqlClient> = Layer.effect(
  Port.Transactor,
  make
)
