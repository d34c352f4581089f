/**
 * The schema of both dialects, as one list of migrations run by `@effect/sql`'s Migrator
 * (dialect differences are branched inside each migration).
 */
import { Migrator } from "@effect/sql"
import { Effect } from "effect"
import m0001 from "./migrations/0001_payments.js"
import m0002 from "./migrations/0002_customers.js"
import m0003 from "./migrations/0003_schedules.js"
import m0004 from "./migrations/0004_auth.js"
import m0005 from "./migrations/0005_splits.js"
import m0006 from "./migrations/0006_idempotency.js"
import m0007 from "./migrations/0007_webhooks.js"
import m0008 from "./migrations/0008_sandbox_clock.js"

export const loader = Migrator.fromRecord({
  "0001_payments": m0001,
  "0002_customers": m0002,
  "0003_schedules": m0003,
  "0004_auth": m0004,
  "0005_splits": m0005,
  "0006_idempotency": m0006,
  "0007_webhooks": m0007,
  "0008_sandbox_clock": m0008
})

/** Brings the database up to date; safe to run at every start and from several instances. */
export const run = Migrator.make({})({ loader, table: "cobro_migrations" }).pipe(
  Effect.withSpan("Migrations.run")
)
