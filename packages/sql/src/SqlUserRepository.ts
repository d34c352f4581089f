/**
 * `UserRepository` over `SqlClient`.
 */
import { SqlClient } from "@effect/sql"
import { Errors, User, UserRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import type { SqlError } from "@effect/sql/SqlError"
import { decodeJson, encodeJson, isUniqueViolation, recoverable, violationText } from "./internal/sql.js"

const conflictOf = (e: SqlError): Effect.Effect<never, Errors.Conflict> => {
  if (!isUniqueViolation(e)) return Effect.die(e)
  const text = violationText(e)
  return Effect.fail(
    text.includes("alias_prefix")
      ? new Errors.Conflict({
          key: "user.alias_prefix.taken",
          message: "this alias prefix is used by another account"
        })
      : text.includes("email")
        ? new Errors.Conflict({ key: "user.email.taken", message: "a user with this email already exists" })
        : new Errors.Conflict({ key: "user.id.taken", message: "a user with this id already exists" })
  )
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encode = encodeJson(User.User)
  const decode = decodeJson(User.User)
  const one = (rows: ReadonlyArray<{ doc: unknown }>) =>
    Option.map(Option.fromNullable(rows[0]), (r) => decode(r.doc))
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })
  const row = (u: User.User) => ({
    user_id: u.user_id,
    email: u.email,
    alias_prefix: u.alias_prefix,
    doc: encode(u)
  })

  return Port.UserRepository.of({
    insert: (user) =>
      recoverable(sql)(sql`INSERT INTO cobro_users ${sql.insert(row(user))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", conflictOf)
      ),
    update: (user) => {
      const { user_id: _, ...fields } = row(user)
      return recoverable(sql)(
        sql<{
          user_id: string
        }>`UPDATE cobro_users SET ${sql.update(fields)} WHERE user_id = ${user.user_id} RETURNING user_id`
      ).pipe(
        Effect.catchTag("SqlError", conflictOf),
        Effect.flatMap((rows) =>
          rows.length === 0
            ? Effect.fail(new Errors.Conflict({ key: "user.not.found", message: "no such user" }))
            : Effect.void
        )
      )
    },
    findById: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_users WHERE user_id = ${id}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByIdForUpdate: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_users WHERE user_id = ${id}${forUpdate}`.pipe(
        Effect.map(one),
        Effect.orDie
      ),
    findByEmail: (email) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_users WHERE lower(email) = ${email.toLowerCase()}`.pipe(
        Effect.map(one),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.UserRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.UserRepository,
  make
)
