/**
 * The `webhookDeliveries` routes: a merchant's own deliveries (`WebhookDeliveries` decides what a
 * token sees), and replays counted per account against `RateLimits.replaysPerUser`.
 */
import { type Idempotency, WebhookDeliveries } from "@cobro/core"
import { Effect, Option } from "effect"
import type * as Api from "../../Api.js"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { Limits } from "../rateLimit.js"
import { asPrincipal, type GroupLive, group, idempotent } from "./shared.js"

const toWire = ({
  delivery,
  attempts
}: WebhookDeliveries.DeliveryWithAttempts): typeof Api.WebhookDeliveryWire.Type => ({
  event_id: delivery.event_id,
  type: delivery.type,
  status: delivery.status,
  webhook_url: delivery.webhook_url,
  payload: JSON.parse(delivery.body) as Record<string, unknown>,
  partner_id: delivery.signer.kind === "partner" ? delivery.signer.partner_id : null,
  created_at: delivery.created_at,
  next_attempt_at: delivery.next_attempt_at,
  finished_at: delivery.finished_at,
  replays: delivery.replays,
  attempts: attempts.map((a) => ({
    number: a.number,
    attempted_at: a.attempted_at,
    status_code: a.status_code,
    latency_ms: a.duration_ms,
    error: a.error,
    outcome: a.outcome
  }))
})

export const WebhookDeliveriesLive: GroupLive<
  "webhookDeliveries",
  WebhookDeliveries.WebhookDeliveries | Idempotency.Idempotency | Authentication | Limits
> = group("webhookDeliveries", (handlers) =>
  Effect.gen(function* () {
    const deliveries = yield* WebhookDeliveries.WebhookDeliveries
    const limits = yield* Limits
    return handlers
      .handle("list", ({ urlParams }) =>
        asPrincipal((principal) =>
          Effect.map(deliveries.list(principal, urlParams), (page) =>
            ok("webhook.deliveries.found", {
              deliveries: page.deliveries.map(toWire),
              next_after: Option.getOrNull(page.next_after)
            })
          )
        )
      )
      .handle("get", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(deliveries.get(principal, path.event_id), (d) => ok("webhook.delivery.found", toWire(d)))
        )
      )
      .handle(
        "replay",
        idempotent("webhookDeliveries", "replay", ({ path }) =>
          asPrincipal((principal) =>
            Effect.zipRight(
              limits.replay(principal.user_id),
              Effect.map(deliveries.replay(principal, path.event_id), (d) =>
                ok("webhook.delivery.replayed", toWire(d))
              )
            )
          )
        )
      )
  })
)
