/**
 * The one place cobro reaches past `@effect/sql`'s public API, and its switch. Outside a unit of
 * work, a statement of cobro's repositories runs on the connection its client's acquirer gives
 * (the statement's `acquirer` field, which `@effect/sql` does not document) instead of through
 * `Statement`'s own path, which opens a span and a scope for each statement; inside a unit of work
 * the statement runs on the unit's connection (`SqlClient.TransactionConnection`, public). The
 * statement's text and parameters are its own `compile()`. With tracing on, or with this switch
 * off, every statement runs as `@effect/sql` runs it; if a version of `@effect/sql` drops the
 * field, statements outside a unit of work run that way too (docs/decisions/0078-one-codec-per-table.md).
 *
 *   Effect.provideService(program, DirectStatements, false)   // @effect/sql's path only
 */
import { Context } from "effect"

export class DirectStatements extends Context.Reference<DirectStatements>()("@cobro/sql/DirectStatements", {
  defaultValue: (): boolean => true
}) {}
