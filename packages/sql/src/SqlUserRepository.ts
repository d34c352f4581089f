/**
 * `UserRepository` over `SqlClient`. Reads by id outside a unit of work are served from a short
 * cache (`RowCache`): a merchant's row is read on every creation and detailed read of a payment.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Errors, User } from "@cobro/core"
import { UserRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/account.js"
import * as RowCache from "./internal/rowCache.js"
import {
  Doc,
  DocOnly,
  findByKey,
  findOne,
  inTransaction,
  isUniqueViolation,
  orDie,
  recoverable,
  violationText,
  insertUnique
} from "./internal/sql.js"

/** A row of `cobro_users` as written. */
const UserRow = Schema.Struct({
  user_id: Schema.String,
  email: Schema.String,
  alias_prefix: Schema.NullOr(Schema.String),
  doc: Doc(Documents.User)
})
const row = (u: User.User): typeof UserRow.Type => ({
  user_id: u.user_id,
  email: u.email,
  alias_prefix: u.alias_prefix,
  doc: u
})

/** The `Conflict` a unique violation is, by the constraint it names. */
const conflictOf = (e: SqlError): Effect.Effect<never, Errors.Conflict> => {
  const text = violationText(e)
  return Effect.fail(
    text.includes("alias_prefix")
      ? Port.conflicts.aliasPrefixTaken()
      : text.includes("email")
        ? Port.conflicts.emailTaken()
        : Port.conflicts.idTaken()
  )
}

const encodeRow = Schema.encode(UserRow)

export const make: Effect.Effect<Port.UserRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = insertUnique(sql, "cobro_users", UserRow)
    const byId = findByKey(sql, "cobro_users", "user_id", DocOnly(Documents.User))
    const cache = RowCache.make<User.User>()
    const read = byId(false)
    const byEmail = findOne({
      Request: Schema.String,
      Result: DocOnly(Documents.User),
      execute: (lower) => sql`SELECT doc FROM cobro_users WHERE lower(email) = ${lower}`
    })

    return Port.UserRepository.of({
      insert: (user) => insert(row(user), conflictOf),
      update: (user) =>
        encodeRow(row(user)).pipe(
          Effect.tap(() => cache.forget(user.user_id)),
          orDie,
          Effect.flatMap(({ user_id, ...fields }) =>
            recoverable(sql)(
              sql`UPDATE cobro_users SET ${sql.update(fields)} WHERE user_id = ${user_id} RETURNING user_id`
            )
          ),
          Effect.catchTag("SqlError", (e) => (isUniqueViolation(e) ? conflictOf(e) : Effect.die(e))),
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(Port.conflicts.notFound()) : Effect.void
          ),
          Effect.ensuring(cache.forget(user.user_id))
        ),
      // Inside a unit of work, always the row itself (what the unit of work reads is what it
      // writes with); outside, the cached user if it is fresh. A missing user is not cached.
      findById: (id) =>
        Effect.flatMap(inTransaction, (inside) =>
          inside
            ? read(id)
            : cache.get(id, Effect.map(read(id), Option.getOrUndefined)).pipe(Effect.map(Option.fromNullable))
        ),
      findByIdForUpdate: byId(true),
      findByEmail: (email) => byEmail(email.toLowerCase())
    })
  }
)

export const layer: Layer.Layer<Port.UserRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.UserRepository,
  make
)
