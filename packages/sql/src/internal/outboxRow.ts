/**
 * An event's row of `cobro_outbox`: its document and the columns it is found by, as the schema
 * declares it and as written by hand.
 */
import { Ids, Outbox } from "@cobro/core"
import { DateTime, Schema } from "effect"
import { Doc, Millis } from "./sql.js"

/** A row of `cobro_outbox` as written. */
export const OutboxRow = Schema.Struct({
  event_id: Ids.EventId,
  type: Outbox.EventType,
  user_id: Ids.UserId,
  doc: Doc(Outbox.OutboxEvent),
  created_ms: Millis
})

/** The row of `event` before encoding: what `OutboxRow` encodes (`encodedRow` is held to it). */
export const row = (event: Outbox.OutboxEvent): typeof OutboxRow.Type => ({
  event_id: event.event_id,
  type: event.type,
  user_id: event.user_id,
  doc: event,
  created_ms: event.created_at
})

/**
 * The row of `event` as `OutboxRow` encodes it, written by hand: every change that notifies
 * writes one (each credited transfer), and the schema's pass over the event (its instant, its
 * payload copied key by key) showed in the profile of a transfer. The document
 * has the event's fields in the class's order, as its encoding does. `outboxRow.test.ts` holds it
 * to the schema's encoding.
 */
export const encodedRow = (event: Outbox.OutboxEvent): typeof OutboxRow.Encoded => ({
  event_id: event.event_id,
  type: event.type,
  user_id: event.user_id,
  doc: JSON.stringify({
    event_id: event.event_id,
    type: event.type,
    user_id: event.user_id,
    partner_id: event.partner_id,
    webhook_url: event.webhook_url,
    payload: event.payload,
    created_at: DateTime.formatIso(event.created_at)
  }),
  created_ms: DateTime.toEpochMillis(event.created_at)
})
