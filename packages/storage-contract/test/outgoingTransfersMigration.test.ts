/**
 * Migration 0012 (outgoing transfers in flight) on a database migrated to 0010 that holds
 * schedule payouts: a PENDING payout (its outcome unknown to an older engine) gets its transfer
 * in flight, SENDING and due at once, with its money's accounts; a settled payout gets none.
 */
import { describe, expect, it } from "@effect/vitest"
import { LedgerAccount, Money } from "@cobro/core"
import { OutgoingTransferRepository as Port } from "@cobro/core/ports"
import { Migrations, SqlOutgoingTransferRepository } from "@cobro/sql"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { barePostgres, bareSqlite, migrateTo, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)
const big = 9_007_199_254_740_993n

const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* migrateTo(10)
  const payout = (payout_id: string, payout_status: string) =>
    sql`INSERT INTO cobro_payouts ${sql.insert({
      payout_id,
      schedule_id: "sch_1",
      user_id: "u1",
      payout_status,
      amount_minor: big.toString(),
      currency: "ARS",
      attempted_ms: 1_000,
      created_ms: 500,
      doc: JSON.stringify({ v: 1, payout_id, address: "tienda.uno.banco", payout_status })
    })}`
  yield* payout("po_pending", "PENDING")
  yield* payout("po_done", "SUCCESS")

  yield* Migrations.run
  const repo = yield* Port.OutgoingTransferRepository
  const carried = Option.getOrThrow(yield* repo.findByReference("po_pending"))
  expect(carried).toMatchObject({
    reference: "po_pending",
    purpose: "schedule_payout",
    owner_id: "po_pending",
    destination: "tienda.uno.banco",
    amount: Money.make(big, "ARS"),
    in_transit: LedgerAccount.merchantInTransit("u1"),
    return_to: LedgerAccount.merchantAvailable("u1"),
    status: "SENDING",
    bank_transaction_id: null,
    sends: 1,
    checks: 0
  })
  expect(DateTime.toEpochMillis(carried.next_check_at)).toBe(1_000)
  expect(yield* repo.findByReference("po_done")).toEqual(Option.none())
  const due = yield* repo.findDue("schedule_payout", DateTime.unsafeMake(1_000), 10)
  expect(due.map((t) => t.reference)).toEqual(["po_pending"])
}).pipe(Effect.provide(SqlOutgoingTransferRepository.layer))

describe("migration 0012: schedule payouts in flight get their outgoing transfer", () => {
  it.effect("on SQLite", () => Effect.provide(upgrade, bareSqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => Effect.provide(upgrade, barePostgres), 60_000)
})
