/**
 * Access tokens read by hash outside a unit of work come from a short cache
 * (`internal/rowCache.ts` of `@cobro/sql`), on SQLite and on Postgres: a revocation through this
 * instance is seen at once, one written by another instance (here: a statement of its own)
 * within a second; a unit of work always reads the row; an unknown hash is not remembered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, CredentialRepository, Engine } from "@cobro/core"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Option } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { seedUser, u1 } from "../src/scenarios/fixtures.js"

const available = await Effect.runPromise(pgAvailable)

/** Past the cache's time to live (real time: the cache does not follow the engine's clock). */
const pastTtl = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_100)))

const scenario = (backend: SqlBackend) => {
  const storage = backend.storage()
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const credentials = yield* CredentialRepository.CredentialRepository
    yield* seedUser()
    const now = yield* DateTime.now
    const token = (hash: string) =>
      new Credential.AccessToken({
        token_hash: hash,
        kind: "user",
        user_id: u1,
        partner_id: null,
        code_hash: null,
        creation_timestamp: now,
        expires_at: null,
        revoked_at: null
      })
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

    // Revoked through this instance, each way a token is revoked: seen at once.
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
  }).pipe(Effect.provide(Layer.merge(Engine.layerSandbox(storage), storage)))
}

describe("access tokens read by hash outside a unit of work (a short cache)", () => {
  it.live("on SQLite", () => scenario(sqlite), 60_000)
  it.live.skipIf(!available)("on Postgres", () => scenario(postgres), 60_000)
})
