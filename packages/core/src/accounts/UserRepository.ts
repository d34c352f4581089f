/**
 * Storage of merchants (users) and their account configuration.
 */
import { Context, Effect, Either, HashMap, Layer, Option } from "effect"
import { Conflict } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import type { User } from "./User.js"

export class UserRepository extends Context.Tag("@cobro/core/UserRepository")<
  UserRepository,
  {
    /** Fails with `Conflict` when the id, the email or the alias prefix is taken. */
    readonly insert: (user: User) => Effect.Effect<void, Conflict>
    /** Fails with `Conflict` when the new alias prefix is taken by another user. */
    readonly update: (user: User) => Effect.Effect<void, Conflict>
    readonly findById: (id: UserId) => Effect.Effect<Option.Option<User>>
    /** The same, locking the row for the rest of the unit of work (read-modify-write of the config). */
    readonly findByIdForUpdate: (id: UserId) => Effect.Effect<Option.Option<User>>
    readonly findByEmail: (email: string) => Effect.Effect<Option.Option<User>>
  }
>() {}

/** The `Conflict`s the adapters raise (memory and SQL alike), defined once. */
export const conflicts = {
  idTaken: () => new Conflict({ key: "user.id.taken", message: "a user with this id already exists" }),
  emailTaken: () =>
    new Conflict({ key: "user.email.taken", message: "a user with this email already exists" }),
  aliasPrefixTaken: () =>
    new Conflict({ key: "user.alias_prefix.taken", message: "this alias prefix is used by another account" }),
  notFound: () => new Conflict({ key: "user.not.found", message: "no such user" })
}

const clash = (users: HashMap.HashMap<UserId, User>, user: User): Option.Option<Conflict> => {
  for (const other of HashMap.values(users)) {
    if (other.user_id === user.user_id) continue
    if (other.email.toLowerCase() === user.email.toLowerCase()) {
      return Option.some(conflicts.emailTaken())
    }
    if (user.alias_prefix !== null && other.alias_prefix === user.alias_prefix) {
      return Option.some(conflicts.aliasPrefixTaken())
    }
  }
  return Option.none()
}

export const makeMemory = Effect.gen(function* () {
  const table = yield* makeRef(HashMap.empty<UserId, User>())
  const write = (user: User, mustExist: boolean) =>
    table.updateOrFail((t) => {
      if (HashMap.has(t, user.user_id) !== mustExist) {
        return Either.left(mustExist ? conflicts.notFound() : conflicts.idTaken())
      }
      return Option.match(clash(t, user), {
        onNone: () => Either.right(HashMap.set(t, user.user_id, user)),
        onSome: Either.left
      })
    })
  return UserRepository.of({
    insert: (user) => write(user, false),
    update: (user) => write(user, true),
    findById: (id) => Effect.map(table.get, HashMap.get(id)),
    findByIdForUpdate: (id) => Effect.map(table.get, HashMap.get(id)),
    findByEmail: (email) =>
      Effect.map(table.get, (t) => {
        for (const user of HashMap.values(t))
          if (user.email.toLowerCase() === email.toLowerCase()) return Option.some(user)
        return Option.none()
      })
  })
})

export const layerMemory: Layer.Layer<UserRepository, never, MemoryDb> = Layer.effect(
  UserRepository,
  makeMemory
)
