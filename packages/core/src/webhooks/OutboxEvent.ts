/**
 * The events the engine reports as webhooks: what happened, to whose account, where it is
 * delivered and, for events addressed to a partner, which partner (whose secret signs them).
 */
import { DateTime, Effect, Option, Schema } from "effect"
import { EventId, PartnerId, UserId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import { Class } from "../internal/schemaClass.js"
import { Timestamp } from "../Wire.js"

export const EventType = Schema.Literal(
  "payment.updated",
  "customer.payment_received",
  "account.activated",
  "split.funds_received",
  "split.payouts_result",
  "payout.failed"
)
export type EventType = typeof EventType.Type

export class OutboxEvent extends Class<OutboxEvent>("OutboxEvent")({
  event_id: EventId,
  type: EventType,
  /** The account the event is about. */
  user_id: UserId,
  /**
   * The partner the event is addressed to (`account.activated`: the partner that onboarded the
   * account); null for the account's own events. Absent in events stored before it existed.
   */
  partner_id: Schema.optionalToRequired(
    Schema.NullOr(PartnerId),
    Schema.NullOr(Schema.typeSchema(PartnerId)),
    {
      decode: Option.getOrElse(() => null),
      encode: Option.some
    }
  ),
  /** Where to deliver; null when the resource has no webhook URL (kept for the record). */
  webhook_url: Schema.NullOr(Schema.String),
  /** The body, exactly as SPEC's Events table. */
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Timestamp
}) {}

/** SPEC's fixed text of "Payment updated" events. */
export const paymentUpdatedMessage = "Payment updated"

/** Builds an event stamped with a fresh id and the current time. */
export const makeEvent = (input: {
  readonly type: EventType
  readonly user_id: UserId
  /** For an event addressed to a partner; absent: the account's own event. */
  readonly partner_id?: PartnerId | null
  readonly webhook_url: string | null
  readonly payload: Record<string, unknown>
}) =>
  Effect.gen(function* () {
    // Typed values (the id checked by its brand): the class does not check them again.
    return new OutboxEvent(
      {
        ...input,
        partner_id: input.partner_id ?? null,
        event_id: EventId.make(yield* newId("evt")),
        created_at: yield* DateTime.now
      },
      true
    )
  })
