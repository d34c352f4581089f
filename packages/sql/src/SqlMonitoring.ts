/**
 * What a monitor reads from the database rather than counts in a process: the webhook backlog and
 * the outgoing transfers not final yet. Every instance sharing the database reads the same values
 * (a scrape of any one is the whole picture). Four aggregate queries, each over an index or a
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
  /**
   * Outgoing transfers not final yet (`cobro_outgoing_transfers`), by purpose and state: SENDING
   * (recorded, the bank's answer unknown or not sent yet) or PENDING (accepted by the bank). Only
   * the pairs that have any are listed.
   */
  readonly transfersInFlight: ReadonlyArray<{
    readonly purpose: string
    readonly status: string
    readonly count: number
  }>
  /** When the oldest transfer in flight was recorded (epoch ms, engine time); none in flight: null. */
  readonly transfersOldestInFlightMs: number | null
}

/** A count or a time as either dialect answers it (Postgres: text for BIGINT aggregates). */
const Num = Schema.Union(Schema.Number, Schema.NumberFromString)

const Row = Schema.Struct({ n: Num, oldest: Schema.NullOr(Num) })

const ByState = Schema.Array(Schema.Struct({ purpose: Schema.String, status: Schema.String, n: Num }))

/** Reads the `Snapshot` now. */
export const read: Effect.Effect<Snapshot, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const one = (query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    SqlSchema.single({ Request: Schema.Void, Result: Row, execute: () => query })(undefined).pipe(
      // An aggregate answers one row of numbers: anything else is a defect, not a storage error.
      Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
    )
  const [pending, dead, inFlight, oldest] = yield* Effect.all([
    one(
      sql`SELECT COUNT(*) AS n, MIN(created_ms) AS oldest FROM cobro_webhook_deliveries WHERE status = 'pending'`
    ),
    one(sql`SELECT COUNT(*) AS n, NULL AS oldest FROM cobro_webhook_deliveries WHERE status = 'dead'`),
    // Both over the partial index of transfers in flight.
    sql`SELECT purpose, status, COUNT(*) AS n FROM cobro_outgoing_transfers
      WHERE status IN ('SENDING', 'PENDING') GROUP BY purpose, status`.pipe(
      Effect.flatMap(Schema.decodeUnknown(ByState)),
      Effect.catchTag("ParseError", Effect.die)
    ),
    one(sql`SELECT COUNT(*) AS n, MIN(created_ms) AS oldest FROM cobro_outgoing_transfers
      WHERE status IN ('SENDING', 'PENDING')`)
  ])
  return {
    webhooksPending: pending.n,
    webhooksOldestPendingMs: pending.oldest,
    webhooksDead: dead.n,
    transfersInFlight: inFlight.map((r) => ({ purpose: r.purpose, status: r.status, count: r.n })),
    transfersOldestInFlightMs: oldest.oldest
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
