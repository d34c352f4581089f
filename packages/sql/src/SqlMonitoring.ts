/**
 * What a monitor reads from the database rather than counts in a process: the webhook backlog and
 * the outgoing transfers not final yet. Every instance sharing the database reads the same values
 * (a scrape of any one is the whole picture). Three aggregate queries, each over an index or a
 * small set of rows; meant for a scrape every few seconds, not for a request path.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Schema } from "effect"

export interface Snapshot {
  /** Webhook deliveries waiting for an attempt (new or retrying). */
  readonly webhooksPending: number
  /** When the oldest pending delivery's event was written (epoch ms, engine time); none pending: null. */
  readonly webhooksOldestPendingMs: number | null
  /** Deliveries that exhausted their retries (or whose URL is refused), until replayed. */
  readonly webhooksDead: number
  /** Payout schedule payouts sent to the bank whose outcome is not known yet. */
  readonly payoutsInFlight: number
  /** Split payouts of instructions being executed (PROCESSING) not final yet. */
  readonly splitPayoutsInFlight: number
}

/** A count or a time as either dialect answers it (Postgres: text for BIGINT aggregates). */
const Num = Schema.Union(Schema.Number, Schema.NumberFromString)

const Row = Schema.Struct({ n: Num, oldest: Schema.NullOr(Num) })

/** Reads the `Snapshot` now. */
export const read: Effect.Effect<Snapshot, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const one = (query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    SqlSchema.single({ Request: Schema.Void, Result: Row, execute: () => query })(undefined).pipe(
      // An aggregate answers one row of numbers: anything else is a defect, not a storage error.
      Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
    )
  const [pending, dead, payouts, splits] = yield* Effect.all([
    one(
      sql`SELECT COUNT(*) AS n, MIN(created_ms) AS oldest FROM cobro_webhook_deliveries WHERE status = 'pending'`
    ),
    one(sql`SELECT COUNT(*) AS n, NULL AS oldest FROM cobro_webhook_deliveries WHERE status = 'dead'`),
    one(sql`SELECT COUNT(*) AS n, NULL AS oldest FROM cobro_payouts WHERE payout_status = 'PENDING'`),
    one(sql`SELECT COUNT(*) AS n, NULL AS oldest FROM cobro_split_payouts p
      JOIN cobro_split_payments s ON s.split_payment_id = p.split_payment_id
      WHERE p.status = 'PENDING' AND s.payout_status = 'PROCESSING'`)
  ])
  return {
    webhooksPending: pending.n,
    webhooksOldestPendingMs: pending.oldest,
    webhooksDead: dead.n,
    payoutsInFlight: payouts.n,
    splitPayoutsInFlight: splits.n
  }
})

/** A connection pool's counts at one moment (this process's pool, not the database's). */
export interface PoolStats {
  /** Connections open, in use or idle. */
  readonly total: number
  /** Open connections no query holds. */
  readonly idle: number
  /** Queries and transactions waiting for a connection (the pool is at `max`). */
  readonly waiting: number
  /** The most connections the pool opens. */
  readonly max: number
}

/**
 * The storage's connection pool, read at each call. Provided by storages that keep a pool of
 * their own (Postgres); absent otherwise (SQLite has one connection), so a host reads it with
 * `Effect.serviceOption`.
 */
export class ConnectionPool extends Context.Tag("@cobro/sql/SqlMonitoring/ConnectionPool")<
  ConnectionPool,
  { readonly stats: Effect.Effect<PoolStats> }
>() {}
