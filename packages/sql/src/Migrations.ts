/**
 * The schema of both dialects, as one list of migrations run by `@effect/sql`'s Migrator
 * (dialect differences are branched inside each migration).
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"
import m0001 from "./migrations/0001_payments.js"
import m0002 from "./migrations/0002_customers.js"
import m0003 from "./migrations/0003_schedules.js"
import m0004 from "./migrations/0004_auth.js"
import m0005 from "./migrations/0005_splits.js"
import m0006 from "./migrations/0006_idempotency.js"
import m0007 from "./migrations/0007_webhooks.js"
import m0008 from "./migrations/0008_sandbox_clock.js"
import m0009 from "./migrations/0009_cvu_directory.js"
import m0010 from "./migrations/0010_webhook_signer.js"
import m0011 from "./migrations/0011_cvu_directory_triggers.js"
import m0012 from "./migrations/0012_outgoing_transfers.js"
import m0013 from "./migrations/0013_bank_reconciliation.js"
import m0014 from "./migrations/0014_money_reads.js"
import m0015 from "./migrations/0015_refunds.js"
import m0017 from "./migrations/0017_sandbox_bank_accounts.js"
import { Spans } from "@cobro/core"
import m0018 from "./migrations/0018_test_clocks.js"
import m0019 from "./migrations/0019_second_factor.js"
import m0020 from "./migrations/0020_database_mode.js"
import m0021 from "./migrations/0021_rate_limits.js"
import m0024 from "./migrations/0024_transfers_received.js"
import m0025 from "./migrations/0025_bank_quarantine.js"
import m0026 from "./migrations/0026_web_sessions.js"
import m0027 from "./migrations/0027_partner_passwords.js"

export const loader = Migrator.fromRecord({
  "0001_payments": m0001,
  "0002_customers": m0002,
  "0003_schedules": m0003,
  "0004_auth": m0004,
  "0005_splits": m0005,
  "0006_idempotency": m0006,
  "0007_webhooks": m0007,
  "0008_sandbox_clock": m0008,
  "0009_cvu_directory": m0009,
  "0010_webhook_signer": m0010,
  "0011_cvu_directory_triggers": m0011,
  "0012_outgoing_transfers": m0012,
  "0013_bank_reconciliation": m0013,
  "0014_money_reads": m0014,
  "0015_refunds": m0015,
  "0017_sandbox_bank_accounts": m0017,
  "0018_test_clocks": m0018,
  "0019_second_factor": m0019,
  "0020_database_mode": m0020,
  "0021_rate_limits": m0021,
  "0024_transfers_received": m0024,
  "0025_bank_quarantine": m0025,
  "0026_web_sessions": m0026,
  "0027_partner_passwords": m0027
})

const migrate = Migrator.make({})({ loader, table: "cobro_migrations" })

/** The id of the newest migration this code has: the schema version it needs (`0008_…` is 8). */
export const latest: Effect.Effect<number> = loader.pipe(
  Effect.map((migrations) => Math.max(0, ...migrations.map(([id]) => id))),
  Effect.orDie
)

/** The key of the Postgres advisory lock the migrations run under (any fixed number). */
const MIGRATION_LOCK = 7_310_001

/**
 * Brings the database up to date; safe to run at every start and from several instances. On
 * Postgres the whole run holds a transaction-scoped advisory lock: instances starting together
 * over a fresh database would otherwise race on creating the migrations table itself (the
 * Migrator's own table lock only serialises runs once that table exists).
 */
export const run = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
          // The Migrator's own table, as it would create it; made here so that its probe of the
          // table (a failing statement when missing) does not abort this transaction.
          yield* sql`CREATE TABLE IF NOT EXISTS cobro_migrations (
            migration_id integer primary key,
            created_at timestamp with time zone not null default now(),
            name text not null
          )`
          return yield* migrate
        })
      ),
    orElse: () => migrate
  })
).pipe(Spans.span("Migrations.run"))
