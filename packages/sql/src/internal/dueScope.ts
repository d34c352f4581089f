/** `DueScope` as a SQL condition on a table's merchant column. */
import type { SqlClient } from "@effect/sql"
import type { DueScope } from "@cobro/core"
import { Schema } from "effect"

/** A `DueScope` as a request field (a schema the queries' requests can carry). */
export const Scope: Schema.Schema<DueScope.DueScope> = Schema.declare(
  (u): u is DueScope.DueScope =>
    typeof u === "object" &&
    u !== null &&
    ((u as DueScope.DueScope)._tag === "Owner" || (u as DueScope.DueScope)._tag === "Everyone")
)

/**
 * ` AND <column> = owner` for one merchant (an index on `(column, due time)` answers it),
 * ` AND <column> NOT IN (…)` for everyone but a few, nothing for everyone.
 */
export const scopeCondition = (sql: SqlClient.SqlClient, scope: DueScope.DueScope, column = "user_id") =>
  scope._tag === "Owner"
    ? sql` AND ${sql(column)} = ${scope.owner}`
    : scope.except.length === 0
      ? sql``
      : sql` AND NOT ${sql.in(column, scope.except)}`
