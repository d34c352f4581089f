/** The `webhookDeliveries` routes: a merchant's own webhook deliveries, their attempts, replays. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Outbox, WebhookDeliveries, Wire } from "@cobro/core"
import { WebhookDeliveryRepository } from "@cobro/core/ports"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, IdempotencyHeaders } from "./shared.js"

/** One try to deliver the event. */
export const DeliveryAttemptWire = Schema.Struct({
  /** 1 for the first attempt, counting across replays. */
  number: Schema.Int,
  attempted_at: Wire.Timestamp,
  /** The receiver's HTTP status; absent when it gave no answer (timeout, refused connection). */
  status_code: Wire.Omittable(Schema.Int),
  /** From sending the request to the receiver's answer (or the failure), in milliseconds. */
  latency_ms: Schema.Int,
  /** Why the attempt failed; absent when it was delivered. */
  error: Wire.Omittable(Schema.String),
  outcome: WebhookDeliveryRepository.AttemptOutcome
}).annotations({ identifier: "WebhookDeliveryAttempt" })

/** A webhook delivery as its merchant reads it. */
export const WebhookDeliveryWire = Schema.Struct({
  /** The event id: the `webhook-id` header of every attempt. */
  event_id: Ids.EventId,
  type: Outbox.EventType,
  /** `pending` (another attempt is due at `next_attempt_at`), `delivered` or `dead` (retries exhausted). */
  status: WebhookDeliveryRepository.DeliveryStatus,
  webhook_url: Schema.String,
  /** The event's body, exactly as each attempt sends it. */
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The partner the event is addressed to (and whose secret signs it); absent for the merchant's own. */
  partner_id: Wire.Omittable(Ids.PartnerId),
  created_at: Wire.Timestamp,
  next_attempt_at: Wire.Omittable(Wire.Timestamp),
  finished_at: Wire.Omittable(Wire.Timestamp),
  replays: Schema.Int,
  attempts: Schema.Array(DeliveryAttemptWire)
}).annotations({ identifier: "WebhookDelivery" })

export const ListDeliveriesParams = Schema.Struct({
  status: Schema.optional(WebhookDeliveryRepository.DeliveryStatus),
  type: Schema.optional(Outbox.EventType),
  after: Schema.optional(Ids.EventId),
  limit: Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, WebhookDeliveries.maxPageSize, {
        message: () => `must be an integer from 1 to ${WebhookDeliveries.maxPageSize}`
      })
    )
  )
})

export const DeliveryPageWire = Schema.Struct({
  deliveries: Schema.Array(WebhookDeliveryWire),
  /** Pass as `after` for the next page; absent on the last page. */
  next_after: Wire.Omittable(Ids.EventId)
})

const eventId = Schema.Struct({ event_id: Ids.EventId })

export class WebhookDeliveryRoutes extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.get("list", "/webhooks/deliveries")
      .annotateContext(
        OpenApi.annotations({
          summary: "List your webhook deliveries",
          description: `Your account's webhook deliveries, oldest first, each with every attempt (status code, latency, error). Filter by \`status\` and event \`type\`; pages of \`limit\` (1–${WebhookDeliveries.maxPageSize}, default ${WebhookDeliveries.defaultPageSize}): pass the answer's \`next_after\` as \`after\` for the next one. A partner token also sees the deliveries addressed to its partner about this account.`
        })
      )
      .setUrlParams(ListDeliveriesParams)
      .addSuccess(Envelope(DeliveryPageWire))
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/deliveries/:event_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a webhook delivery",
          description: "One of your deliveries with every attempt; another account's is 404."
        })
      )
      .setPath(eventId)
      .addSuccess(Envelope(WebhookDeliveryWire))
  )
  .add(
    HttpApiEndpoint.post("replay", "/webhooks/deliveries/:event_id/replay")
      .annotateContext(
        OpenApi.annotations({
          summary: "Replay a webhook delivery",
          description:
            "Sends the event again, with the same event id and body, from the start of the retry schedule, whatever its state (a dead delivery after you fixed your receiver, or a delivered one you lost). Answers at once with the delivery `pending`; the attempt follows within seconds. Rate-limited per account (429 with `retry_after`)."
        })
      )
      .setPath(eventId)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(WebhookDeliveryWire))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Your webhook deliveries: what was sent, every attempt and its answer, and replays."
  ) {}
