/**
 * Small helpers shared by the repositories: value conversions between the domain and rows that
 * both Postgres and SQLite return (Postgres gives BIGINT as text, SQLite as a number).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Option, Schema } from "effect"

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
 * Storage failures are infrastructure faults, not domain outcomes: the ports promise no SQL
 * errors, so they become defects (the unit of work rolls back and the caller sees a 500-class
 * failure at the edge, never a half-written record).
 */
export const orDie = <A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, never, R> =>
  Effect.orDie(effect)

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
