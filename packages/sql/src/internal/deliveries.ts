/**
 * Rows of `cobro_webhook_deliveries`, shared by the delivery repository and the outbox (whose
 * append writes the pending row in the same transaction as the event).
 */
import type { SqlClient } from "@effect/sql"
import { type Outbox, WebhookDeliveryRepository as Port } from "@cobro/core"
import { type DateTime, Effect, Option } from "effect"
import { millis, toDateTime } from "./sql.js"

const nullableMillis = (value: DateTime.Utc | null) => (value === null ? null : millis(value))
const nullableTime = (value: unknown) => (value === null || value === undefined ? null : toDateTime(value))
const nullableInt = (value: unknown) => (value === null || value === undefined ? null : Number(value))

/** The columns a state change may write (everything but the identity and the body). */
export const deliveryState = (d: Port.WebhookDelivery) => ({
  status: d.status,
  attempts: d.attempts,
  round_attempts: d.round_attempts,
  replays: d.replays,
  next_attempt_ms: nullableMillis(d.next_attempt_at),
  lease_owner: d.lease_owner,
  lease_until_ms: nullableMillis(d.lease_until),
  last_attempt_ms: nullableMillis(d.last_attempt_at),
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  finished_ms: nullableMillis(d.finished_at)
})

export const deliveryRow = (d: Port.WebhookDelivery) => ({
  event_id: d.event_id,
  type: d.type,
  user_id: d.user_id,
  webhook_url: d.webhook_url,
  body: d.body,
  created_ms: millis(d.created_at),
  ...deliveryState(d)
})

export interface DeliveryRow {
  readonly event_id: string
  readonly type: string
  readonly user_id: string
  readonly webhook_url: string
  readonly body: string
  readonly status: string
  readonly attempts: unknown
  readonly round_attempts: unknown
  readonly replays: unknown
  readonly next_attempt_ms: unknown
  readonly lease_owner: string | null
  readonly lease_until_ms: unknown
  readonly last_attempt_ms: unknown
  readonly last_status_code: unknown
  readonly last_error: string | null
  readonly created_ms: unknown
  readonly finished_ms: unknown
}

export const fromDeliveryRow = (r: DeliveryRow): Port.WebhookDelivery =>
  new Port.WebhookDelivery({
    event_id: r.event_id as Port.WebhookDelivery["event_id"],
    type: r.type as Port.WebhookDelivery["type"],
    user_id: r.user_id as Port.WebhookDelivery["user_id"],
    webhook_url: r.webhook_url,
    body: r.body,
    status: r.status as Port.DeliveryStatus,
    attempts: Number(r.attempts),
    round_attempts: Number(r.round_attempts),
    replays: Number(r.replays),
    next_attempt_at: nullableTime(r.next_attempt_ms),
    lease_owner: r.lease_owner,
    lease_until: nullableTime(r.lease_until_ms),
    last_attempt_at: nullableTime(r.last_attempt_ms),
    last_status_code: nullableInt(r.last_status_code),
    last_error: r.last_error,
    created_at: toDateTime(r.created_ms),
    finished_at: nullableTime(r.finished_ms)
  })

/** Writes the pending deliveries of `events` (none for an event without a webhook URL). */
export const insertPending = (sql: SqlClient.SqlClient, events: ReadonlyArray<Outbox.OutboxEvent>) => {
  const rows = events.flatMap((event) => Option.toArray(Port.pendingFor(event))).map(deliveryRow)
  return rows.length === 0
    ? Effect.void
    : Effect.asVoid(sql`INSERT INTO cobro_webhook_deliveries ${sql.insert(rows)}`)
}
