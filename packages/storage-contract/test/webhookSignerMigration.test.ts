/**
 * Migration 0010 (who signs a delivery) on a database migrated to 0009 that holds deliveries:
 * afterwards an "Account activated" delivery is signed by the partner that onboarded its account
 * (the user document's `partner_id`), every other delivery by its account, as the worker signed
 * them before.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@cobro/core"
import { WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { Migrations, SqlWebhookDeliveryRepository } from "@cobro/sql"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { barePostgres, bareSqlite, migrateTo, pgAvailable } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* migrateTo(9)
  const user = (user_id: string, partner_id: string | null) =>
    sql`INSERT INTO cobro_users ${sql.insert({
      user_id,
      email: `${user_id}@example.com`,
      alias_prefix: null,
      doc: JSON.stringify({ user_id, partner_id })
    })}`
  const delivery = (event_id: string, type: string, user_id: string) =>
    sql`INSERT INTO cobro_webhook_deliveries ${sql.insert({
      event_id,
      type,
      user_id,
      webhook_url: "https://hooks.example.com/",
      body: "{}",
      status: "pending",
      attempts: 0,
      round_attempts: 0,
      replays: 0,
      next_attempt_ms: 1,
      created_ms: 1
    })}`
  yield* user("u1", "ptn_1")
  yield* user("u2", null)
  yield* delivery("evt_1", "payment.updated", "u1")
  yield* delivery("evt_2", "account.activated", "u1")
  yield* delivery("evt_3", "customer.payment_received", "u2")

  yield* Migrations.run
  const repo = yield* W.WebhookDeliveryRepository
  const signers = yield* Effect.forEach(["evt_1", "evt_2", "evt_3"], (id) =>
    Effect.map(repo.find(Ids.EventId.make(id)), (d) => Option.map(d, (found) => found.signer))
  )
  expect(signers).toEqual([
    Option.some({ kind: "merchant", user_id: "u1" }),
    Option.some({ kind: "partner", partner_id: "ptn_1" }),
    Option.some({ kind: "merchant", user_id: "u2" })
  ])
}).pipe(Effect.provide(SqlWebhookDeliveryRepository.layer))

describe("migration 0010: who signs each stored delivery", () => {
  it.effect("on SQLite", () => Effect.provide(upgrade, bareSqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => Effect.provide(upgrade, barePostgres), 60_000)
})
