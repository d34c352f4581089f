/**
 * Migration 0014 on a database that already holds split payouts: each gets its split's user and
 * its creation time from its stored record, so a user's payouts list (newest first, by keyset)
 * shows the payouts written before the upgrade, and those written after, in one order.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids, Page } from "@cobro/core"
import { SplitRepository } from "@cobro/core/ports"
import { Migrations, SqlSplitRepository } from "@cobro/sql"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { barePostgres, bareSqlite, migrateTo, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))
const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")

const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Every migration before 0014 (0011–0013 included where they exist).
  yield* migrateTo(13)
  const split = (id: string, user: string, n: number) =>
    sql`INSERT INTO cobro_split_payments ${sql.insert({
      split_payment_id: id,
      user_id: user,
      partner_key: "",
      external_id: id,
      cvu: cvu(n),
      alias: `split.${id}`,
      payment_status: "RECEIVED",
      amount_received_minor: 100000,
      amount_credited_minor: 98790,
      created_ms: 1,
      doc: "{}"
    })}`
  const payout = (id: string, splitId: string, position: number, created: string) =>
    sql`INSERT INTO cobro_split_payouts ${sql.insert({
      payout_id: id,
      split_payment_id: splitId,
      account_id: "pa_1",
      position,
      amount_minor: 10000,
      status: "PENDING",
      doc: JSON.stringify({
        v: 1,
        payout_id: id,
        split_payment_id: splitId,
        account_id: "pa_1",
        destination: "2850590940090418135201",
        amount: "100.00",
        status: "PENDING",
        bank_transaction_id: null,
        failure_reason: null,
        position,
        creation_timestamp: created,
        executed_timestamp: null
      })
    })}`
  yield* split("split_1", u1, 1)
  yield* split("split_2", u2, 2)
  yield* split("split_3", u1, 3)
  yield* payout("spo_a", "split_1", 0, "2026-01-01T10:00:00.000Z")
  yield* payout("spo_b", "split_1", 1, "2026-01-01T10:00:00.000Z")
  yield* payout("spo_c", "split_2", 0, "2026-01-02T10:00:00.000Z")
  yield* payout("spo_d", "split_3", 0, "2026-01-03T10:00:00.000Z")

  yield* Migrations.run
  const repo = yield* SplitRepository.SplitRepository
  const ids = (rows: ReadonlyArray<{ readonly payout_id: string }>) => rows.map((r) => r.payout_id)
  expect(ids(yield* repo.listPayoutsByUser(u1, Option.none(), 10))).toEqual(["spo_d", "spo_b", "spo_a"])
  expect(ids(yield* repo.listPayoutsByUser(u2, Option.none(), 10))).toEqual(["spo_c"])
  const after: Page.Cursor = {
    creation_timestamp: DateTime.unsafeMake("2026-01-01T10:00:00.000Z"),
    id: "spo_b"
  }
  expect(ids(yield* repo.listPayoutsByUser(u1, Option.some(after), 10))).toEqual(["spo_a"])
  const backfilled = yield* sql<{ payout_id: string; user_id: string; created_ms: unknown }>`
    SELECT payout_id, user_id, created_ms FROM cobro_split_payouts ORDER BY payout_id`
  expect(backfilled.map((r) => [r.payout_id, r.user_id, Number(r.created_ms)])).toEqual([
    ["spo_a", "u1", Date.UTC(2026, 0, 1, 10)],
    ["spo_b", "u1", Date.UTC(2026, 0, 1, 10)],
    ["spo_c", "u2", Date.UTC(2026, 0, 2, 10)],
    ["spo_d", "u1", Date.UTC(2026, 0, 3, 10)]
  ])
}).pipe(Effect.provide(SqlSplitRepository.layer))

describe("migration 0014: split payouts get their user and creation time; a user's payouts list them", () => {
  it.effect("on SQLite", () => Effect.provide(upgrade, bareSqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => Effect.provide(upgrade, barePostgres), 60_000)
})
