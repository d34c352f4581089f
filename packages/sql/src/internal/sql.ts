/**
 * Small helpers shared by the repositories: value conversions between the domain and rows that
 * both Postgres and SQLite return (Postgres gives BIGINT as text, SQLite as a number).
 */
import { Spans } from "@cobro/core"
import { SqlClient, SqlSchema, Statement } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { type Cause, Context, DateTime, Effect, Option, Schema, type Scope } from "effect"
import type { ParseError } from "effect/ParseResult"
import { DirectStatements } from "../SqlDirectStatements.js"

/**
 * BIGINT/INTEGER column → bigint. SQLite answers an INTEGER as a JavaScript number, which is not
 * exact beyond 2^53, so money columns are selected as text (`CAST(amount_minor AS TEXT)`); a
 * number past 2^53 here is such a column read without the cast, and dies rather than read wrong.
 */
export const toBigInt = (value: unknown): bigint => {
  if (typeof value === "bigint") return value
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    throw new RangeError(`an integer column was read as the inexact number ${value}: select it as text`)
  }
  return BigInt(value as string | number)
}

/** Epoch-millisecond column → DateTime.Utc. */
export const toDateTime = (value: unknown): DateTime.Utc => DateTime.unsafeMake(Number(value))

export const millis = (dt: DateTime.Utc): number => DateTime.toEpochMillis(dt)

/** Stores a domain value as the JSON text of its encoded (wire) form. */
export const encodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  return (value: A): string => JSON.stringify(encode(value))
}

/** Reads a domain value back from its JSON text; a row that does not decode is a defect. */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownSync(schema)
  return (text: unknown): A => decode(typeof text === "string" ? JSON.parse(text) : text)
}

/**
 * The storage policy, in one place: SQL errors are infrastructure faults and a stored row that
 * does not decode (or a statement that must answer a row and answers none) is a broken store,
 * neither a domain outcome. The ports promise neither, so both become defects (the unit of work
 * rolls back and the caller sees a 500-class failure at the edge, never a half-written record).
 */
export const orDie = <A, R>(
  effect: Effect.Effect<A, SqlError | ParseError | Cause.NoSuchElementException, R>
): Effect.Effect<A, never, R> => Effect.orDie(effect)

/**
 * Whether each statement is a round trip to a database server (Postgres), so that statements read
 * or written together pay; on SQLite a statement is a call within the process. Postgres is the
 * only such dialect cobro runs on, so statements behind it may use Postgres's own SQL.
 */
export const statementsAreRoundTrips = (sql: SqlClient.SqlClient): boolean =>
  sql.onDialectOrElse({ pg: () => true, orElse: () => false })

/** `FOR UPDATE` on Postgres; nothing on SQLite (one writer at a time, no row locks). */
export const forUpdate = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })

/** `FOR UPDATE SKIP LOCKED` on Postgres; nothing on SQLite. */
export const forUpdateSkipLocked = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({ pg: () => sql` FOR UPDATE SKIP LOCKED`, orElse: () => sql`` })

/**
 * A statement of `@effect/sql` run on its connection directly when no span is recorded and
 * `DirectStatements` is on: on the unit of work's connection (`TransactionConnection`), or on the
 * one the client's own acquirer gives (the statement's, as `Statement` itself does: on SQLite it
 * waits for a unit of work in progress to finish, on Postgres it is the pool), skipping the span
 * and the scope `Statement` opens for each statement. cobro's clients transform neither column
 * names nor rows, so the compiled text and the rows are the same.
 */
export const execute = <A, E, R>(statement: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Statement.isFragment(statement)
    ? Effect.withFiberRuntime((fiber) => {
        if (Spans.isRecording(fiber) || !Context.get(fiber.currentContext, DirectStatements)) return statement
        const compiled = statement as unknown as Statement.Statement<unknown> & {
          readonly acquirer?: Effect.Effect<Connection, SqlError, Scope.Scope>
        }
        const unit = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
        if (Option.isSome(unit)) {
          const [text, params] = compiled.compile()
          return unit.value[0].execute(text, params, undefined) as Effect.Effect<never>
        }
        const acquirer = compiled.acquirer
        if (acquirer === undefined) return statement
        const [text, params] = compiled.compile()
        return Effect.scoped(
          Effect.flatMap(acquirer, (connection) => connection.execute(text, params, undefined))
        ) as Effect.Effect<never>
      })
    : statement

/** `options` with its statement run by `execute`. */
const directly = <
  O extends { readonly execute: (request: never) => Effect.Effect<unknown, unknown, unknown> }
>(
  options: O
): O => ({ ...options, execute: (request: never) => execute(options.execute(request)) })

interface Query<IA, II, A, AI, E, R> {
  readonly Request: Schema.Schema<IA, II>
  readonly Result: Schema.Schema<A, AI>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}

/** `SqlSchema.findOne` under the storage policy: the row decoded by `Result`, if any. */
export const findOne = <IA, II, A, AI, R>(
  options: Query<IA, II, A, AI, SqlError, R>
): ((request: IA) => Effect.Effect<Option.Option<A>, never, R>) => {
  const run = SqlSchema.findOne(directly(options))
  return (request) => orDie(run(request))
}

/** `SqlSchema.findAll` under the storage policy: every row decoded by `Result`. */
export const findAll = <IA, II, A, AI, R>(
  options: Query<IA, II, A, AI, SqlError, R>
): ((request: IA) => Effect.Effect<ReadonlyArray<A>, never, R>) => {
  const run = SqlSchema.findAll(directly(options))
  return (request) => orDie(run(request))
}

/** `SqlSchema.single` under the storage policy: the one row a statement answers (none is a defect). */
export const single = <IA, II, A, AI, R>(
  options: Query<IA, II, A, AI, SqlError, R>
): ((request: IA) => Effect.Effect<A, never, R>) => {
  const run = SqlSchema.single(directly(options))
  return (request) => orDie(run(request))
}

/** `SqlSchema.void` under the storage policy: a statement whose request `Request` encodes. */
export const write = <IA, II, R>(options: {
  readonly Request: Schema.Schema<IA, II>
  readonly execute: (request: II) => Effect.Effect<unknown, SqlError, R>
}): ((request: IA) => Effect.Effect<void, never, R>) => {
  const run = SqlSchema.void(directly(options))
  return (request) => orDie(run(request))
}

/**
 * `SqlSchema.void` for a statement a unique constraint may refuse, the refusal being a domain
 * outcome: run `recoverable`-ly (a savepoint inside a unit of work), a unique violation becomes
 * `onViolation`'s failure, anything else a defect.
 */
export const writeUnique = <IA, II, R>(
  sql: SqlClient.SqlClient,
  options: {
    readonly Request: Schema.Schema<IA, II>
    readonly execute: (request: II) => Effect.Effect<unknown, SqlError, R>
  }
) => {
  const run = SqlSchema.void(directly(options))
  return <E, R2>(
    request: IA,
    onViolation: (error: SqlError) => Effect.Effect<never, E, R2>
  ): Effect.Effect<void, E, R | R2> =>
    recoverable(sql)(run(request)).pipe(
      Effect.catchAll((e) => (e._tag === "SqlError" && isUniqueViolation(e) ? onViolation(e) : Effect.die(e)))
    )
}

/**
 * Reads one record of `table` by the value of its unique `column` (`columns`: the `doc` column
 * unless told), locked for the rest of the unit of work (`FOR UPDATE`) or not.
 */
export const findByKey =
  <A, I>(
    sql: SqlClient.SqlClient,
    table: string,
    column: string,
    Result: Schema.Schema<A, I>,
    columns = "doc"
  ) =>
  (lock: boolean) =>
    findOne({
      Request: Schema.String,
      Result,
      execute: (key) =>
        sql`SELECT ${sql.literal(columns)} FROM ${sql(table)} WHERE ${sql(column)} = ${key}${lock ? forUpdate(sql) : sql``}`
    })

/** Inserts a row of `table` encoded by `Row`; a unique violation is the caller's to answer (`writeUnique`). */
export const insertUnique = <A, I extends Record<string, unknown>>(
  sql: SqlClient.SqlClient,
  table: string,
  Row: Schema.Schema<A, I>
) => writeUnique(sql, { Request: Row, execute: (row) => sql`INSERT INTO ${sql(table)} ${sql.insert(row)}` })

/**
 * Inserts the row `Row` encodes unless `table` has one with its `key` already; whether it was
 * inserted (the caller answers a taken key).
 */
export const insertIfAbsent = <A, I>(
  sql: SqlClient.SqlClient,
  table: string,
  key: string,
  Row: Schema.Schema<A, I>
) => {
  const encode = Schema.encode(Row)
  return (value: A): Effect.Effect<boolean> =>
    encode(value).pipe(
      Effect.flatMap((row) =>
        execute(
          sql`INSERT INTO ${sql(table)} ${sql.insert(row as Record<string, unknown>)}
            ON CONFLICT (${sql(key)}) DO NOTHING RETURNING ${sql(key)}`
        )
      ),
      orDie,
      Effect.map((rows) => rows.length === 1)
    )
}

/** Writes the row `Row` encodes over the row of `table` with the same `key`. */
export const updateByKey = <A, I>(
  sql: SqlClient.SqlClient,
  table: string,
  key: string,
  Row: Schema.Schema<A, I>
) =>
  write({
    Request: Row,
    execute: (row) => {
      const { [key]: id, ...fields } = row as Record<string, unknown>
      return sql`UPDATE ${sql(table)} SET ${sql.update(fields)} WHERE ${sql(key)} = ${id}`
    }
  })

/**
 * A column of epoch milliseconds (Postgres answers BIGINT as text, SQLite as a number) as a
 * `DateTime.Utc`; written as a number.
 */
export const Millis = Schema.compose(
  Schema.Union(Schema.Number, Schema.NumberFromString),
  Schema.DateTimeUtcFromNumber
)

/** A nullable epoch-millisecond column. */
export const NullableMillis = Schema.NullOr(Millis)

/** A money or position column selected as text (`CAST(... AS TEXT)`), as an exact bigint. */
export const BigIntText = Schema.Union(Schema.BigInt, Schema.BigIntFromNumber)

/** A boolean kept as 0/1 (SQLite has no boolean; Postgres columns here are INTEGER too). */
export const Flag = Schema.transform(Schema.Union(Schema.Number, Schema.NumberFromString), Schema.Boolean, {
  strict: true,
  decode: (n) => n !== 0,
  encode: (b) => (b ? 1 : 0)
})

/** A `doc` column: the JSON text of a document, decoded by the document's storage codec. */
export const Doc = <A, I>(storage: Schema.Schema<A, I>) => Schema.parseJson(storage)

/** A row read for its `doc` column alone, as the document. */
export const DocOnly = <A, I>(storage: Schema.Schema<A, I>) =>
  Schema.Struct({ doc: Doc(storage) }).pipe(Schema.pluck("doc"))

/** Whether a SQL error is a unique-constraint violation (Postgres 23505, SQLite UNIQUE). */
export const isUniqueViolation = (error: SqlError): boolean => {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  return (
    cause?.code === "23505" ||
    cause?.code === "SQLITE_CONSTRAINT_UNIQUE" ||
    cause?.code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    (typeof cause?.message === "string" && cause.message.includes("UNIQUE constraint failed"))
  )
}

/** The text naming the violated constraint (Postgres constraint name, SQLite message). */
export const violationText = (error: SqlError): string => {
  const cause = error.cause as { constraint?: unknown; message?: unknown } | undefined
  return `${String(cause?.constraint ?? "")} ${String(cause?.message ?? "")}`
}

/** Whether the calling fiber is inside a unit of work (a transaction of `SqlClient`). */
export const inTransaction: Effect.Effect<boolean> = Effect.map(
  Effect.serviceOption(SqlClient.TransactionConnection),
  Option.isSome
)

/**
 * Runs one statement whose failure the caller turns into a domain error (a unique or check
 * violation) so that the failure leaves an enclosing unit of work usable: inside one, in a
 * SAVEPOINT (a failed statement aborts a whole Postgres transaction); outside, alone, as one
 * statement is atomic by itself (no BEGIN and COMMIT around it).
 */
export const recoverable =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(statement: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(inTransaction, (inside) => (inside ? sql.withTransaction(statement) : statement))

/**
 * Runs statements that must all be written or none, and whose failures are defects: inside a
 * unit of work, in it (a defect rolls the whole unit back; a SAVEPOINT would add two statements
 * for nothing); outside, in a transaction of their own.
 */
export const together =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(statements: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(inTransaction, (inside) => (inside ? statements : sql.withTransaction(statements)))
