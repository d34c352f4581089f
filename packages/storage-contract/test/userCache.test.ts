/**
 * Merchants read by id outside a unit of work come from a short cache (`internal/rowCache.ts`
 * of `@cobro/sql`), on SQLite and on Postgres: a change written by another instance (here: a
 * statement of its own) reaches cached reads within a second; one written through this instance
 * is seen at once; a unit of work always reads the row.
 */
import { describe, expect, it } from "@effect/vitest"
import { Engine, User, UserRepository } from "@cobro/core"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { seedUser, u1 } from "../src/scenarios/fixtures.js"

const available = await Effect.runPromise(pgAvailable)

/** Past the cache's time to live (real time: the cache does not follow the engine's clock). */
const pastTtl = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_100)))

const scenario = (backend: SqlBackend) => {
  const storage = backend.storage()
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const users = yield* UserRepository.UserRepository
    const nameOf = Effect.map(users.findById(u1), (u) => Option.getOrThrow(u).name)
    /** Another instance's write: the row changed underneath this one. */
    const renameElsewhere = (name: string) =>
      Effect.gen(function* () {
        const [row] = yield* sql<{ doc: unknown }>`SELECT doc FROM cobro_users WHERE user_id = ${u1}`
        const doc = typeof row!.doc === "string" ? JSON.parse(row!.doc) : row!.doc
        yield* sql`UPDATE cobro_users SET doc = ${JSON.stringify({ ...doc, name })} WHERE user_id = ${u1}`
      })

    const user = yield* seedUser()
    expect(yield* nameOf).toBe("Tienda Uno")

    yield* renameElsewhere("Tienda Otra")
    // Cached outside a unit of work; the row itself inside one.
    expect(yield* nameOf).toBe("Tienda Uno")
    expect(yield* sql.withTransaction(nameOf)).toBe("Tienda Otra")
    yield* pastTtl
    expect(yield* nameOf).toBe("Tienda Otra")

    // Written through this instance: seen at once, and nothing read just after is kept.
    yield* users.update(new User.User({ ...user, name: "Tienda Dos" }))
    expect(yield* nameOf).toBe("Tienda Dos")
    yield* renameElsewhere("Tienda Tres")
    expect(yield* nameOf).toBe("Tienda Tres")

    // A merchant that does not exist is not remembered as missing.
    const missing = UserRepository.UserRepository.pipe(Effect.flatMap((r) => r.findById(u1)))
    yield* sql`DELETE FROM cobro_users WHERE user_id = ${u1}`
    yield* pastTtl
    expect(Option.isNone(yield* missing)).toBe(true)
    yield* users.insert(user)
    expect(Option.isSome(yield* missing)).toBe(true)
  }).pipe(Effect.provide(Layer.merge(Engine.layerSandbox(storage), storage)))
}

describe("merchants read by id outside a unit of work (a short cache)", () => {
  it.live("on SQLite", () => scenario(sqlite), 60_000)
  it.live.skipIf(!available)("on Postgres", () => scenario(postgres), 60_000)
})
