/**
 * A webhook delivery and the rules that shape it, the same for every storage: which deliveries an
 * event makes (`deliveriesOf`), whose secret signs them (`signerOf`), what a claim may take
 * (`isClaimable`), what fences a write (`holdsLease`) and what a replay stores (`replayOf`).
 * Adapters store what these decide.
 */
import { DateTime, Option, Schema } from "effect"
import { EventId, PartnerId, UserId } from "../Ids.js"
import { Class } from "../internal/schemaClass.js"
import { Timestamp } from "../Wire.js"
import { EventType, type OutboxEvent } from "./OutboxEvent.js"

/**
 * Whose client secret signs a delivery: the merchant's own, or the partner's for an event
 * addressed to a partner. `@cobro/webhooks` reads that secret when it makes the attempt (so a
 * rotated secret takes effect on the next attempt).
 */
export const Signer = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("merchant"), user_id: UserId }),
  Schema.Struct({ kind: Schema.Literal("partner"), partner_id: PartnerId })
)
export type Signer = typeof Signer.Type

/** Who signs `event`: the partner it is addressed to, if any; otherwise the account it is about. */
export const signerOf = (event: Pick<OutboxEvent, "user_id" | "partner_id">): Signer =>
  event.partner_id === null
    ? { kind: "merchant", user_id: event.user_id }
    : { kind: "partner", partner_id: event.partner_id }

export const sameSigner = (a: Signer, b: Signer): boolean =>
  a.kind === "merchant"
    ? b.kind === "merchant" && a.user_id === b.user_id
    : b.kind === "partner" && a.partner_id === b.partner_id

/** pending (due at `next_attempt_at`) → delivered | dead; a replay moves either back to pending. */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "dead")
export type DeliveryStatus = typeof DeliveryStatus.Type

export class WebhookDelivery extends Class<WebhookDelivery>("WebhookDelivery")({
  /** The outbox event; also the `webhook-id` header, the same on every attempt. */
  event_id: EventId,
  type: EventType,
  /** The account the event is about. */
  user_id: UserId,
  /** Whose secret signs it (`signerOf` the event). */
  signer: Signer,
  webhook_url: Schema.String,
  /** The exact request body, fixed when the event is written, so every attempt sends the same bytes. */
  body: Schema.String,
  status: DeliveryStatus,
  /** Attempts made, replays included. */
  attempts: Schema.NonNegativeInt,
  /** Attempts made since the delivery was created or last replayed: its place in the retry schedule. */
  round_attempts: Schema.NonNegativeInt,
  replays: Schema.NonNegativeInt,
  /** When the next attempt is due; null exactly when delivered or dead. */
  next_attempt_at: Schema.NullOr(Timestamp),
  /** The worker holding the delivery, and until when; both null when nobody does. */
  lease_owner: Schema.NullOr(Schema.String),
  lease_until: Schema.NullOr(Timestamp),
  last_attempt_at: Schema.NullOr(Timestamp),
  /** The HTTP status of the last attempt; null when it got no response (or none was made). */
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  /** When it became delivered or dead; null while pending. */
  finished_at: Schema.NullOr(Timestamp)
}) {}

export const AttemptOutcome = Schema.Literal("delivered", "failed")
export type AttemptOutcome = typeof AttemptOutcome.Type

/** One try to deliver an event, as it happened. Attempts are facts: they are never changed. */
export class DeliveryAttempt extends Class<DeliveryAttempt>("DeliveryAttempt")({
  attempt_id: Schema.String,
  event_id: EventId,
  /** 1 for the first attempt of the delivery, counting across replays. */
  number: Schema.Int.pipe(Schema.positive()),
  attempted_at: Timestamp,
  /** Wall time from the start of the request to the receiver's answer (or the failure). */
  duration_ms: Schema.NonNegativeInt,
  status_code: Schema.NullOr(Schema.Int),
  /** Why it failed (timeout, refused address, HTTP 500, redirect not followed…); null on success. */
  error: Schema.NullOr(Schema.String),
  outcome: AttemptOutcome,
  /** The worker that made it. */
  worker: Schema.String
}) {}

/** The pending delivery of a freshly written event, due at once; none when it has no webhook URL. */
export const pendingFor = (event: OutboxEvent): Option.Option<WebhookDelivery> =>
  event.webhook_url === null
    ? Option.none()
    : Option.some(
        new WebhookDelivery(
          {
            event_id: event.event_id,
            type: event.type,
            user_id: event.user_id,
            signer: signerOf(event),
            webhook_url: event.webhook_url,
            body: JSON.stringify(event.payload),
            status: "pending",
            attempts: 0,
            round_attempts: 0,
            replays: 0,
            next_attempt_at: event.created_at,
            lease_owner: null,
            lease_until: null,
            last_attempt_at: null,
            last_status_code: null,
            last_error: null,
            created_at: event.created_at,
            finished_at: null
          },
          // Made of the event's own typed values: not checked again (one per event written).
          true
        )
      )

/**
 * The delivery rows appended events make, in order: what every outbox adapter stores with the
 * events, in the same unit of work.
 */
export const deliveriesOf = (events: ReadonlyArray<OutboxEvent>): ReadonlyArray<WebhookDelivery> =>
  events.flatMap((event) => Option.toArray(pendingFor(event)))

/** The lease a claim gave, as a fence: same owner and the same lease end. */
export const holdsLease = (current: WebhookDelivery, claimed: WebhookDelivery): boolean =>
  current.status === "pending" &&
  claimed.lease_owner !== null &&
  claimed.lease_until !== null &&
  current.lease_owner === claimed.lease_owner &&
  current.lease_until !== null &&
  DateTime.toEpochMillis(current.lease_until) === DateTime.toEpochMillis(claimed.lease_until)

/** Whether `delivery` may be claimed at `now`. */
export const isClaimable = (
  delivery: WebhookDelivery,
  now: DateTime.Utc,
  leaseNow: DateTime.Utc = now
): boolean => {
  const at = DateTime.toEpochMillis(now)
  return (
    delivery.status === "pending" &&
    delivery.next_attempt_at !== null &&
    DateTime.toEpochMillis(delivery.next_attempt_at) <= at &&
    (delivery.lease_until === null ||
      DateTime.toEpochMillis(delivery.lease_until) <= DateTime.toEpochMillis(leaseNow))
  )
}

/** What `replay` stores: pending now, a fresh schedule, no lease. */
export const replayOf = (delivery: WebhookDelivery, now: DateTime.Utc): WebhookDelivery =>
  new WebhookDelivery({
    ...delivery,
    status: "pending",
    round_attempts: 0,
    replays: delivery.replays + 1,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    finished_at: null
  })

/** The order of a claim: oldest due first, then by event id (code-point order, as SQL's `COLLATE "C"`). */
export const claimOrder = (a: WebhookDelivery, b: WebhookDelivery): number => {
  const due = (d: WebhookDelivery) =>
    d.next_attempt_at === null ? Number.MAX_SAFE_INTEGER : DateTime.toEpochMillis(d.next_attempt_at)
  return due(a) - due(b) || byEventId(a, b)
}

/** Listing order: by event id, which sorts by creation time. */
export const byEventId = (a: WebhookDelivery, b: WebhookDelivery): number =>
  a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0
