/**
 * Listing streams rows by keyset: memory stays flat while 100,000 payments go by.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Payment, Payments } from "@cobro/core"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema, Stream } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createRequest, seedUser, u1 } from "../src/scenarios/fixtures.js"

const COUNT = 100_000
const available = await Effect.runPromise(pgAvailable)

// A full collection before each sample, so a sample is what the heap retains. Without it a
// sample also counted the garbage not yet collected, which depends on when V8 collects: with the
// suite's other files running beside it, the "late" peak was at times 100 MB above the "early"
// one with nothing retained.
setFlagsFromString("--expose-gc")
const collect = runInNewContext("gc") as () => void

/** Writes COUNT payments of user u1 straight into the table, cloned from one real payment. */
const fill = Effect.gen(function* () {
  yield* seedUser()
  const template = yield* (yield* Payments.Payments).create(createRequest({ motive: "x".repeat(200) }))
  const wire = yield* Schema.encode(Payment.Payment)(template)
  const sql = yield* SqlClient.SqlClient
  const base = Date.UTC(2026, 0, 1)
  for (let start = 0; start < COUNT; start += 1000) {
    const rows = []
    for (let i = start; i < Math.min(COUNT, start + 1000); i++) {
      const cvu = BankAccount.makeCvu("0000003", i.toString().padStart(13, "0"))
      const id = `VAR-u1-bulk-${i}`
      const created = new Date(base + i).toISOString()
      const doc = {
        ...wire,
        id,
        external_id: `bulk-${i}`,
        creation_timestamp: created,
        last_modified_timestamp: created,
        quotes: [{ ...wire.quotes[0]!, address: cvu }]
      }
      rows.push({
        id,
        user_id: u1,
        external_id: `bulk-${i}`,
        cvu,
        team_id: null,
        created_ms: base + i,
        expires_ms: base + i + 432_000_000,
        cvu_released: 0,
        doc: JSON.stringify(doc)
      })
    }
    yield* sql.withTransaction(sql`INSERT INTO cobro_payments ${sql.insert(rows)}`)
  }
})

const listingStaysFlat = (backend: SqlBackend) => {
  const storage = backend.storage()
  return Effect.gen(function* () {
    yield* fill
    const heap: Array<number> = []
    const count = yield* (yield* Payments.Payments).list(u1, { user_id: u1 }).pipe(
      Stream.runFold(0, (n) => {
        if (n % 2000 === 0) {
          collect()
          heap.push(process.memoryUsage().heapUsed)
        }
        return n + 1
      })
    )
    expect(count).toBe(COUNT + 1)
    // Peak retained heap over the last quarter of the stream against the first quarter: reading
    // every payment into memory would add hundreds of megabytes; paging adds nothing that stays.
    const quarter = Math.floor(heap.length / 4)
    const early = Math.max(...heap.slice(0, quarter))
    const late = Math.max(...heap.slice(-quarter))
    const growthMb = (late - early) / 1024 / 1024
    console.log(
      `${backend.name}: listed ${count} payments; heap early ${(early / 1048576).toFixed(0)} MB, late ${(late / 1048576).toFixed(0)} MB`
    )
    expect(growthMb).toBeLessThan(64)
  }).pipe(Effect.provide(Layer.merge(SandboxEngine.layerSandbox(storage), storage)))
}

describe("listing 100,000 payments", () => {
  it.live("on SQLite", () => listingStaysFlat(sqlite), 300_000)
  it.live.skipIf(!available)("on Postgres", () => listingStaysFlat(postgres), 300_000)
})
