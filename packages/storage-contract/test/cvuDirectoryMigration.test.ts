/**
 * Migration 0009 (the CVU directory) on a database migrated to 0008 that holds payments, fixed
 * customers and split payments: afterwards every payment's CVU (a released one too), every
 * customer's current CVU and every split's CVU is in the directory with its owner, so incoming
 * transfers and the faucet route as before; a CVU two tables hold goes to the one routing looked
 * in first (payments, then customers, then splits). The rows are written as 0008's schema holds
 * them: the backfill reads only their columns, never their documents.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids } from "@cobro/core"
import { CvuDirectory } from "@cobro/core/ports"
import { Migrations, SqlCvuDirectory } from "@cobro/sql"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { barePostgres, bareSqlite, migrateTo, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))
const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")

const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* migrateTo(8)
  const payment = (id: string, user: string, n: number, released: number) =>
    sql`INSERT INTO cobro_payments ${sql.insert({
      id,
      user_id: user,
      external_id: id,
      cvu: cvu(n),
      team_id: null,
      created_ms: 1,
      expires_ms: 2,
      cvu_released: released,
      doc: "{}"
    })}`
  const customer = (user: string, id: string, n: number) =>
    sql`INSERT INTO cobro_customers ${sql.insert({
      user_id: user,
      customer_id: id,
      alias: `${user}.${id}`,
      cvu: cvu(n),
      balance_minor: 0,
      created_ms: 1,
      doc: "{}"
    })}`
  const split = (id: string, user: string, n: number) =>
    sql`INSERT INTO cobro_split_payments ${sql.insert({
      split_payment_id: id,
      user_id: user,
      partner_key: "",
      external_id: id,
      cvu: cvu(n),
      alias: `split.${id}`,
      payment_status: "PENDING",
      amount_received_minor: 0,
      amount_credited_minor: 0,
      created_ms: 1,
      doc: "{}"
    })}`
  yield* payment("VAR-u1-open", u1, 1, 0)
  yield* payment("VAR-u1-released", u1, 2, 1)
  yield* customer(u1, "20111111", 3)
  yield* customer(u2, "20111111", 4)
  yield* split("split_1", u2, 5)
  // The same CVU in two tables: routing found the payment first, then the customer.
  yield* payment("VAR-u2-shared", u2, 6, 0)
  yield* customer(u1, "20222222", 6)
  yield* customer(u1, "20333333", 7)
  yield* split("split_2", u1, 7)

  yield* Migrations.run
  const directory = yield* CvuDirectory.CvuDirectory
  const entry = (n: number, owner: CvuDirectory.CvuOwner, owner_id: string, user_id: Ids.UserId) =>
    Option.some(new CvuDirectory.CvuEntry({ cvu: cvu(n), owner, owner_id, user_id }))
  expect(yield* Effect.forEach([1, 2, 3, 4, 5, 6, 7, 8], (n) => directory.find(cvu(n)))).toEqual([
    entry(1, "payment", "VAR-u1-open", u1),
    entry(2, "payment", "VAR-u1-released", u1),
    entry(3, "customer", "20111111", u1),
    entry(4, "customer", "20111111", u2),
    entry(5, "split_payment", "split_1", u2),
    entry(6, "payment", "VAR-u2-shared", u2),
    entry(7, "customer", "20333333", u1),
    Option.none()
  ])
}).pipe(Effect.provide(SqlCvuDirectory.layer))

describe("migration 0009: the CVU directory filled from the stored payments, customers and splits", () => {
  it.effect("on SQLite", () => Effect.provide(upgrade, bareSqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => Effect.provide(upgrade, barePostgres), 60_000)
})
