/**
 * Migration 0020 (what a database is) and `SqlDatabaseMode`, on both dialects: on a database as
 * older versions left it (migrated to 0013, before the sandbox's tables of 0017/0018, or to 0018)
 * the reads change nothing and tell what it holds; after 0020 nothing is recorded until `record`,
 * which records once (a second record, as another instance's, leaves the first).
 */
import { describe, expect, it } from "@effect/vitest"
import { Migrations, SqlDatabaseMode } from "@cobro/sql"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { barePostgres, bareSqlite, migrateTo, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const user = (user_id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO cobro_users ${sql.insert({
        user_id,
        email: `${user_id}@example.com`,
        alias_prefix: null,
        doc: JSON.stringify({ user_id })
      })}`
  )

const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  expect(yield* SqlDatabaseMode.read).toEqual(Option.none())
  expect(yield* SqlDatabaseMode.evidence).toEqual({
    schema: false,
    accounts: 0,
    realBankAccounts: [],
    movedTestClocks: 0,
    sandboxBankAccounts: 0
  })

  // At 0013: reconciliation cursors, no sandbox tables yet.
  yield* migrateTo(13)
  yield* user("u1")
  yield* sql`INSERT INTO cobro_bank_reconciliation (account, cursor_ms) VALUES ('sandbox', NULL), ('bind:cli_1', 5)`
  expect(yield* SqlDatabaseMode.evidence).toEqual({
    schema: true,
    accounts: 1,
    realBankAccounts: ["bind:cli_1"],
    movedTestClocks: 0,
    sandboxBankAccounts: 0
  })

  // At 0018: the merchants' test clocks (one moved) and the sandbox bank's accounts.
  yield* migrateTo(18)
  yield* sql`INSERT INTO cobro_test_clocks (user_id, offset_ms, updated_ms) VALUES ('u1', 1000, 1)`
  const tables = yield* SqlDatabaseMode.tableExists("cobro_database")
  expect(tables).toBe(false)
  expect(yield* SqlDatabaseMode.evidence).toMatchObject({ movedTestClocks: 1, sandboxBankAccounts: 0 })
  expect(yield* SqlDatabaseMode.read).toEqual(Option.none())

  yield* Migrations.run
  expect(yield* SqlDatabaseMode.read).toEqual(Option.none())
  const at = DateTime.unsafeMake(1_764_374_400_000)
  const first = yield* SqlDatabaseMode.record({ mode: "production", bank: "bind" }, "first start", at)
  expect(first).toEqual({ mode: "production", bank: "bind", recordedAt: at, recordedBy: "first start" })
  const second = yield* SqlDatabaseMode.record(
    { mode: "sandbox", bank: "sandbox" },
    "first start",
    DateTime.unsafeMake(1_764_374_500_000)
  )
  expect(second).toEqual(first)
  expect(yield* SqlDatabaseMode.read).toEqual(Option.some(first))
})

describe("migration 0020: what a database is", () => {
  it.effect("on SQLite", () => Effect.provide(upgrade, bareSqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => Effect.provide(upgrade, barePostgres), 60_000)
})
