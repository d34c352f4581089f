/**
 * `SqlDirectStatements`: the switch of the one place cobro's repositories reach past
 * `@effect/sql`'s public API. On (the default), a repository's statement runs on its connection
 * without `Statement`'s own path (whose transformer, here a recorder, never sees it); off, every
 * statement runs through that path, inside a unit of work and outside; the answers are the same.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlDirectStatements } from "@cobro/sql"
import { Ids } from "@cobro/core"
import { TransferRepository } from "@cobro/core/ports"
import { SqlClient, Statement } from "@effect/sql"
import { Effect, Option } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const readTransfer = (backend: SqlBackend, direct: boolean) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    const sql = yield* SqlClient.SqlClient
    const transfers = yield* TransferRepository.TransferRepository
    const find = transfers.findById(Ids.BankTransactionId.make("SBX-unknown")).pipe(
      Statement.withTransformer((self) => Effect.sync(() => (seen.push(self.compile()[0]), self))),
      Effect.provideService(SqlDirectStatements.DirectStatements, direct)
    )
    const outside = yield* find
    const inside = yield* sql.withTransaction(find)
    return { found: [Option.isSome(outside), Option.isSome(inside)], seen }
  }).pipe(Effect.provide(backend.storage()))

const cases = (backend: SqlBackend) => {
  it.effect("on: a repository's statement does not pass through Statement's own path", () =>
    Effect.gen(function* () {
      const { found, seen } = yield* readTransfer(backend, true)
      expect(found).toEqual([false, false])
      expect(seen).toEqual([])
    })
  )
  it.effect("off: every statement passes through Statement's own path", () =>
    Effect.gen(function* () {
      const { found, seen } = yield* readTransfer(backend, false)
      expect(found).toEqual([false, false])
      expect(seen).toHaveLength(2)
      expect(seen[0]).toMatch(/FROM cobro_transfers WHERE bank_transaction_id/)
    })
  )
}

describe("SqlDirectStatements on SQLite", () => cases(sqlite))
describe.skipIf(!available)("SqlDirectStatements on Postgres", () => cases(postgres))
