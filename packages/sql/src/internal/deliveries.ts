/**
 * Rows of `cobro_webhook_deliveries`, shared by the delivery repository and the outbox (whose
 * append stores the rows core's `deliveriesOf` decides, in the same transaction as the events).
 */
import type { SqlClient } from "@effect/sql"
import { Ids, Outbox } from "@cobro/core"
import { TrustedCodec, WebhookDeliveryRepository as Port } from "@cobro/core/ports"
import { Effect, Schema, Struct } from "effect"
import { execute, Millis, NullableMillis, orDie } from "./sql.js"

/** An INTEGER column (a number on both dialects; text if ever read as BIGINT on Postgres). */
const Int = Schema.Union(Schema.Number, Schema.NumberFromString)

const DeliveryColumns = Schema.Struct({
  event_id: Ids.EventId,
  type: Outbox.EventType,
  user_id: Ids.UserId,
  /** The signer: `merchant` (`signer_id` a user id) or `partner` (a partner id). */
  signer_kind: Schema.Literal("merchant", "partner"),
  signer_id: Schema.String,
  webhook_url: Schema.String,
  body: Schema.String,
  status: Port.DeliveryStatus,
  attempts: Int,
  round_attempts: Int,
  replays: Int,
  next_attempt_ms: NullableMillis,
  lease_owner: Schema.NullOr(Schema.String),
  lease_until_ms: NullableMillis,
  last_attempt_ms: NullableMillis,
  last_status_code: Schema.NullOr(Int),
  last_error: Schema.NullOr(Schema.String),
  created_ms: Millis,
  finished_ms: NullableMillis
})

/** The columns of `d`, instants still instants: the row schema's encoding. */
const columnsOf = (d: Port.WebhookDelivery): typeof DeliveryColumns.Type => ({
  event_id: d.event_id,
  type: d.type,
  user_id: d.user_id,
  signer_kind: d.signer.kind,
  signer_id: d.signer.kind === "merchant" ? d.signer.user_id : d.signer.partner_id,
  webhook_url: d.webhook_url,
  body: d.body,
  status: d.status,
  attempts: d.attempts,
  round_attempts: d.round_attempts,
  replays: d.replays,
  next_attempt_ms: d.next_attempt_at,
  lease_owner: d.lease_owner,
  lease_until_ms: d.lease_until,
  last_attempt_ms: d.last_attempt_at,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  created_ms: d.created_at,
  finished_ms: d.finished_at
})

/** A delivery row as the `WebhookDelivery` it stores. */
export const DeliveryRow = Schema.transform(DeliveryColumns, Schema.typeSchema(Port.WebhookDelivery), {
  strict: true,
  decode: (r) =>
    new Port.WebhookDelivery({
      event_id: r.event_id,
      type: r.type,
      user_id: r.user_id,
      signer:
        r.signer_kind === "merchant"
          ? { kind: "merchant", user_id: Ids.UserId.make(r.signer_id) }
          : { kind: "partner", partner_id: Ids.PartnerId.make(r.signer_id) },
      webhook_url: r.webhook_url,
      body: r.body,
      status: r.status,
      attempts: r.attempts,
      round_attempts: r.round_attempts,
      replays: r.replays,
      next_attempt_at: r.next_attempt_ms,
      lease_owner: r.lease_owner,
      lease_until: r.lease_until_ms,
      last_attempt_at: r.last_attempt_ms,
      last_status_code: r.last_status_code,
      last_error: r.last_error,
      created_at: r.created_ms,
      finished_at: r.finished_ms
    }),
  encode: columnsOf
})

/**
 * The row of `d` as `DeliveryRow` encodes it, by the schema compiled without its checks (core's
 * `TrustedCodec`): every credited payment with a webhook URL writes one and every attempt
 * rewrites its state. The delivery is a `WebhookDelivery`, checked when it was made.
 */
export const encodedDelivery: (d: Port.WebhookDelivery) => typeof DeliveryRow.Encoded =
  TrustedCodec.encoder(DeliveryRow)

/** The columns a state change may write (everything but the identity, the signer and the body). */
export const deliveryState = (d: Port.WebhookDelivery) =>
  Struct.omit(
    encodedDelivery(d),
    "event_id",
    "type",
    "user_id",
    "signer_kind",
    "signer_id",
    "webhook_url",
    "body",
    "created_ms"
  )

/** Stores delivery rows as decided (`WebhookDeliveryRepository.deliveriesOf`), in one statement. */
export const insertDeliveries =
  (sql: SqlClient.SqlClient) => (deliveries: ReadonlyArray<Port.WebhookDelivery>) =>
    deliveries.length === 0
      ? Effect.void
      : orDie(
          execute(sql`INSERT INTO cobro_webhook_deliveries ${sql.insert(deliveries.map(encodedDelivery))}`)
        )
