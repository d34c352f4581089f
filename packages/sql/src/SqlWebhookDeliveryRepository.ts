/**
 * `WebhookDeliveryRepository` over `SqlClient`, one implementation for Postgres and SQLite. The
 * pending rows are written by `SqlOutbox.append`. A claim is a single statement that leases the
 * due rows: on Postgres a `FOR UPDATE SKIP LOCKED` CTE feeding an `UPDATE … RETURNING` (two
 * workers never wait on, nor take, each other's rows); on SQLite, whose one connection serialises
 * statements, an `UPDATE … WHERE event_id IN (SELECT … LIMIT n) RETURNING`.
 */
import { SqlClient } from "@effect/sql"
import { Ids, WebhookDeliveryRepository as Port } from "@cobro/core"
import { DateTime, Effect, Layer, Option } from "effect"
import { type DeliveryRow, deliveryState, fromDeliveryRow } from "./internal/deliveries.js"
import { millis, toDateTime } from "./internal/sql.js"

interface AttemptRow {
  readonly attempt_id: string
  readonly event_id: string
  readonly number: unknown
  readonly attempted_ms: unknown
  readonly duration_ms: unknown
  readonly status_code: unknown
  readonly error: string | null
  readonly outcome: string
  readonly worker: string
}

const fromAttemptRow = (r: AttemptRow) =>
  new Port.DeliveryAttempt({
    attempt_id: r.attempt_id,
    event_id: Ids.EventId.make(r.event_id),
    number: Number(r.number),
    attempted_at: toDateTime(r.attempted_ms),
    duration_ms: Number(r.duration_ms),
    status_code: r.status_code === null ? null : Number(r.status_code),
    error: r.error,
    outcome: r.outcome as Port.AttemptOutcome,
    worker: r.worker
  })

const byDue = (a: Port.WebhookDelivery, b: Port.WebhookDelivery) => {
  const due = (d: Port.WebhookDelivery) =>
    d.next_attempt_at === null ? 0 : DateTime.toEpochMillis(d.next_attempt_at)
  return due(a) - due(b) || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0)
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const claimable = (now: DateTime.Utc) =>
    sql`status = 'pending' AND next_attempt_ms <= ${millis(now)}
      AND (lease_until_ms IS NULL OR lease_until_ms <= ${millis(now)})`

  const claimDue = (now: DateTime.Utc, owner: string, leaseUntil: DateTime.Utc, limit: number) =>
    sql
      .onDialectOrElse({
        pg: () => sql<DeliveryRow>`WITH due AS (
            SELECT event_id FROM cobro_webhook_deliveries WHERE ${claimable(now)}
            ORDER BY next_attempt_ms, event_id LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE cobro_webhook_deliveries AS d
          SET lease_owner = ${owner}, lease_until_ms = ${millis(leaseUntil)}
          FROM due WHERE d.event_id = due.event_id
          RETURNING d.*`,
        orElse: () => sql<DeliveryRow>`UPDATE cobro_webhook_deliveries
          SET lease_owner = ${owner}, lease_until_ms = ${millis(leaseUntil)}
          WHERE event_id IN (
            SELECT event_id FROM cobro_webhook_deliveries WHERE ${claimable(now)}
            ORDER BY next_attempt_ms, event_id LIMIT ${limit}
          )
          RETURNING *`
      })
      .pipe(
        Effect.map((rows) => rows.map(fromDeliveryRow).sort(byDue)),
        Effect.orDie
      )

  const find = (eventId: Ids.EventId) =>
    sql<DeliveryRow>`SELECT * FROM cobro_webhook_deliveries WHERE event_id = ${eventId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromDeliveryRow)),
      Effect.orDie
    )

  return Port.WebhookDeliveryRepository.of({
    claimDue: (now, owner, leaseUntil, limit) =>
      limit <= 0 ? Effect.succeed([]) : claimDue(now, owner, leaseUntil, limit),
    complete: (claimed, attempt, next) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO cobro_webhook_attempts ${sql.insert({
              attempt_id: attempt.attempt_id,
              event_id: attempt.event_id,
              number: attempt.number,
              attempted_ms: millis(attempt.attempted_at),
              duration_ms: attempt.duration_ms,
              status_code: attempt.status_code,
              error: attempt.error,
              outcome: attempt.outcome,
              worker: attempt.worker
            })}`
            if (claimed.lease_owner === null || claimed.lease_until === null) return false
            const updated = yield* sql`UPDATE cobro_webhook_deliveries SET ${sql.update(deliveryState(next))}
              WHERE event_id = ${claimed.event_id} AND status = 'pending'
                AND lease_owner = ${claimed.lease_owner} AND lease_until_ms = ${millis(claimed.lease_until)}
              RETURNING event_id`
            return updated.length === 1
          })
        )
        .pipe(Effect.orDie),
    find,
    list: (query) => {
      const conditions = [
        ...(query.status !== undefined ? [sql`status = ${query.status}`] : []),
        ...(query.user_id !== undefined ? [sql`user_id = ${query.user_id}`] : []),
        ...(query.after !== undefined ? [sql`event_id > ${query.after}`] : [])
      ]
      const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`
      return sql<DeliveryRow>`SELECT * FROM cobro_webhook_deliveries ${where}
        ORDER BY event_id LIMIT ${Math.max(0, query.limit)}`.pipe(
        Effect.map((rows) => rows.map(fromDeliveryRow)),
        Effect.orDie
      )
    },
    attemptsOf: (eventId) =>
      sql<AttemptRow>`SELECT * FROM cobro_webhook_attempts WHERE event_id = ${eventId} ORDER BY seq`.pipe(
        Effect.map((rows) => rows.map(fromAttemptRow)),
        Effect.orDie
      ),
    replay: (eventId, now) =>
      sql<DeliveryRow>`UPDATE cobro_webhook_deliveries SET
          status = 'pending', round_attempts = 0, replays = replays + 1,
          next_attempt_ms = ${millis(now)}, lease_owner = NULL, lease_until_ms = NULL, finished_ms = NULL
        WHERE event_id = ${eventId} RETURNING *`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromDeliveryRow)),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.WebhookDeliveryRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.WebhookDeliveryRepository,
  make
)
