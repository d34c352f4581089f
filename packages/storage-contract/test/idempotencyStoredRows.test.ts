/**
 * `Idempotency-Key` rows written before core recorded a domain outcome (`response_status` 200 and
 * the reply's JSON in `response_body`, inserted here by hand) replay their text byte for byte;
 * rows written now keep `response_status` 200 for a previous version still running. On SQLite
 * and on Postgres.
 */
import { describe, expect, it } from "@effect/vitest"
import { Idempotency } from "@cobro/core"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Ref, Schema } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"

const available = await Effect.runPromise(pgAvailable)

/** A reply as the previous version stored it: spacing and key order of its own. */
const oldBody = '{"id": "VAR-u1-o1", "price":{"currency":"ARS","amount":1500}, "tags":["é"]}'

const Reply = Schema.Struct({ id: Schema.String })

const replays = (backend: SqlBackend) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const idem = yield* Idempotency.Idempotency
    const now = DateTime.toEpochMillis(yield* DateTime.now)
    yield* sql`INSERT INTO cobro_idempotency_keys ${sql.insert({
      scope: "u1",
      idempotency_key: "old",
      fingerprint: "A",
      state: "completed",
      locked_until_ms: now + 60_000,
      response_status: 200,
      response_body: oldBody,
      created_ms: now
    })}`
    const runs = yield* Ref.make(0)
    const operation = Effect.as(
      Ref.update(runs, (n) => n + 1),
      { id: "new" }
    )
    expect(yield* idem.run("u1", "old", "A", Reply, operation)).toEqual({ result: oldBody, replayed: true })
    expect(yield* Ref.get(runs)).toBe(0)

    // A row written now: the result in `response_body`, 200 in `response_status` as before.
    expect(yield* idem.run("u1", "new", "A", Reply, operation)).toEqual({
      result: '{"id":"new"}',
      replayed: false
    })
    const rows = yield* sql<{ readonly response_status: unknown; readonly response_body: string }>`
      SELECT response_status, response_body FROM cobro_idempotency_keys WHERE idempotency_key = 'new'`
    expect(rows.map((r) => [Number(r.response_status), r.response_body])).toEqual([[200, '{"id":"new"}']])
    expect(yield* idem.run("u1", "new", "A", Reply, operation)).toEqual({
      result: '{"id":"new"}',
      replayed: true
    })
    expect(yield* Ref.get(runs)).toBe(1)
  }).pipe(
    Effect.provide(
      // One storage (a layer is built once per provide): the engine over it, and its SqlClient.
      Layer.suspend(() => {
        const storage = backend.storage()
        return Layer.merge(SandboxEngine.layerSandbox(storage), storage)
      })
    )
  )

describe("idempotency rows written before the domain outcome", () => {
  it.effect("on SQLite", () => replays(sqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => replays(postgres), 60_000)
})
