/**
 * Merchants read by id and access tokens read by hash outside a unit of work come from a short
 * cache (`internal/rowCache.ts` of `@cobro/sql`), on SQLite and on Postgres: a change written by
 * another instance (here: a statement of its own) reaches cached reads within a second; one
 * written through this instance (a merchant's update, a token's revocation) is seen at once; a
 * unit of work always reads the row; what does not exist is not remembered as missing.
 */
import { describe, expect, it } from "@effect/vitest"
import { User } from "@cobro/core"
import { CredentialRepository, UserRepository } from "@cobro/core/ports"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Option } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { token } from "../src/scenarios/auth/helpers.js"
import { seedUser, u1 } from "../src/scenarios/fixtures.js"

const available = await Effect.runPromise(pgAvailable)

/** Past the cache's time to live (real time: the cache does not follow the engine's clock). */
const pastTtl = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_100)))

const merchants = (backend: SqlBackend) => {
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
  }).pipe(Effect.provide(Layer.merge(SandboxEngine.layerSandbox(storage), storage)))
}

const tokens = (backend: SqlBackend) => {
  const storage = backend.storage()
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const credentials = yield* CredentialRepository.CredentialRepository
    yield* seedUser()
    const now = yield* DateTime.now
    const revokedAt = (hash: string) =>
      Effect.map(credentials.findToken(hash), (t) => Option.getOrThrow(t).revoked_at !== null)
    /** Another instance's revocation: the row changed underneath this one. */
    const revokeElsewhere = (hash: string) =>
      sql`UPDATE cobro_access_tokens SET revoked_ms = ${DateTime.toEpochMillis(now)} WHERE token_hash = ${hash}`

    // An unknown hash is not remembered: the token issued a moment later is found at once.
    expect(Option.isNone(yield* credentials.findToken("h1"))).toBe(true)
    yield* credentials.insertToken(token("h1"))
    expect(yield* revokedAt("h1")).toBe(false)

    // Revoked by another instance: cached outside a unit of work, the row itself inside one, and
    // the revocation seen by every read within the cache's second.
    yield* revokeElsewhere("h1")
    expect(yield* revokedAt("h1")).toBe(false)
    expect(yield* sql.withTransaction(revokedAt("h1"))).toBe(true)
    yield* pastTtl
    expect(yield* revokedAt("h1")).toBe(true)

    // Revoked through this instance, one token or all of a user's: seen at once.
    yield* credentials.insertToken(token("h2"))
    expect(yield* revokedAt("h2")).toBe(false)
    expect(yield* credentials.revokeToken("h2", now)).toBe(true)
    expect(yield* revokedAt("h2")).toBe(true)
    yield* credentials.insertToken(token("h3"))
    yield* credentials.insertToken(token("h4"))
    expect(yield* revokedAt("h3")).toBe(false)
    expect(yield* revokedAt("h4")).toBe(false)
    expect(yield* credentials.revokeUserTokens(u1, now)).toBe(2)
    expect(yield* revokedAt("h3")).toBe(true)
    expect(yield* revokedAt("h4")).toBe(true)
  }).pipe(Effect.provide(Layer.merge(SandboxEngine.layerSandbox(storage), storage)))
}

describe("merchants read by id outside a unit of work (a short cache)", () => {
  it.live("on SQLite", () => merchants(sqlite), 60_000)
  it.live.skipIf(!available)("on Postgres", () => merchants(postgres), 60_000)
})

describe("access tokens read by hash outside a unit of work (a short cache)", () => {
  it.live("on SQLite", () => tokens(sqlite), 60_000)
  it.live.skipIf(!available)("on Postgres", () => tokens(postgres), 60_000)
})
