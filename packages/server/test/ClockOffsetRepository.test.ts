import { describe, expect, it } from "@effect/vitest"
import { ClockOffsetRepository } from "@cobro/core"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Duration, Effect, Exit, type Layer, Redacted } from "effect"
import { Storage } from "../src/index.js"
import { tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres clock offset test is SKIPPED !!!\n`
  )
}

/** The contract of the offset store, over `layer`. */
const contract = <E>(layer: Layer.Layer<ClockOffsetRepository.ClockOffsetRepository, E>) =>
  Effect.gen(function* () {
    const repo = yield* ClockOffsetRepository.ClockOffsetRepository
    expect(Duration.toMillis(yield* repo.get)).toBe(0)
    expect(Duration.toMillis(yield* repo.advance(Duration.seconds(90)))).toBe(90_000)
    // Concurrent advances all count.
    yield* Effect.all(
      Array.from({ length: 10 }, () => repo.advance(Duration.seconds(1))),
      { concurrency: "unbounded" }
    )
    expect(Duration.toMillis(yield* repo.get)).toBe(100_000)
    // Only forward, by a finite amount.
    for (const bad of [Duration.zero, Duration.infinity]) {
      expect(Exit.isFailure(yield* Effect.exit(repo.advance(bad)))).toBe(true)
    }
    expect(Duration.toMillis(yield* repo.get)).toBe(100_000)
  }).pipe(Effect.provide(layer))

describe("ClockOffsetRepository", () => {
  it.effect("memory", () => contract(ClockOffsetRepository.layerMemory))

  it.scoped("SQLite", () =>
    Effect.flatMap(tempDb, (filename) => contract(Storage.layer({ _tag: "Sqlite", filename })))
  )

  it.scoped("SQLite: the offset survives a restart", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb
      const repo = ClockOffsetRepository.ClockOffsetRepository
      yield* Effect.flatMap(repo, (r) => r.advance(Duration.hours(3))).pipe(
        Effect.provide(Storage.layer({ _tag: "Sqlite", filename }))
      )
      const offset = yield* Effect.flatMap(repo, (r) => r.get).pipe(
        Effect.provide(Storage.layer({ _tag: "Sqlite", filename }))
      )
      expect(Duration.toMillis(offset)).toBe(3 * 3_600_000)
    })
  )

  it.scoped.skipIf(!pg)("Postgres", () =>
    Effect.flatMap(freshPgUrl, (url) =>
      contract(Storage.layer({ _tag: "Postgres", url: Redacted.make(url) }))
    )
  )
})
