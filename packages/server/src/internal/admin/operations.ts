/** What an operator reads and replays: webhook deliveries, any payment, the sandbox's 2FA codes. */
import { Errors, type Payment, RealTime, SecondFactor, Spans } from "@cobro/core"
import { PaymentRepository, WebhookDeliveryRepository } from "@cobro/core/ports"
import { Webhooks } from "@cobro/webhooks"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { eventIdFrom, paymentIdFrom, userIdFrom } from "./input.js"

export interface ListWebhooksInput {
  readonly status?: string | undefined
  readonly user_id?: string | undefined
  readonly after?: string | undefined
  readonly limit?: number | undefined
}

export const listWebhooks = Spans.fn("Admin.listWebhooks")(function* (input: ListWebhooksInput) {
  const webhooks = yield* Webhooks.Webhooks
  const status =
    input.status === undefined
      ? undefined
      : yield* Schema.decodeUnknown(WebhookDeliveryRepository.DeliveryStatus)(
          input.status.toLowerCase()
        ).pipe(
          Effect.mapError(() =>
            Errors.InvalidInput.of(
              "status",
              `must be one of ${WebhookDeliveryRepository.DeliveryStatus.literals.join(", ")}, got "${input.status}"`
            )
          )
        )
  return yield* webhooks.list({
    ...(status === undefined ? {} : { status }),
    ...(input.user_id === undefined ? {} : { user_id: yield* userIdFrom(input.user_id) }),
    ...(input.after === undefined ? {} : { after: yield* eventIdFrom(input.after) }),
    ...(input.limit === undefined ? {} : { limit: input.limit })
  })
})

export const replayWebhook = Spans.fn("Admin.replayWebhook")(function* (eventId: string) {
  const webhooks = yield* Webhooks.Webhooks
  return yield* webhooks.replay(yield* eventIdFrom(eventId))
})

/** Any merchant's payment, by id (the operator sees every merchant's). */
export const showPayment = Spans.fn("Admin.showPayment")(function* (paymentId: string) {
  const payments = yield* PaymentRepository.PaymentRepository
  const id = yield* paymentIdFrom(paymentId)
  const payment = yield* payments.findById(id)
  if (Option.isNone(payment)) return yield* Errors.NotFound.of("payment", id)
  const found: Payment.Payment = payment.value
  return found
})

export interface SandboxCode {
  readonly request_id: string
  readonly user_id: string
  readonly code: string
  readonly expires_at: string
}

/**
 * The 2FA codes of the payout-account verifications still open (pending and not expired),
 * oldest first. The sandbox's `SecondFactor` derives each code from its request id, so any
 * process can show them; only a sandbox ever does. Codes expire on real time (`RealTime`).
 */
export const sandboxCodes = Spans.fn("Admin.sandboxCodes")(function* (userId?: string) {
  const sql = yield* SqlClient.SqlClient
  const now = DateTime.toEpochMillis(yield* RealTime.now)
  const rows = yield* sql<{
    readonly request_id: string
    readonly user_id: string
    readonly exp_ms: unknown
  }>`SELECT request_id, user_id, exp_ms FROM cobro_verification_requests
      WHERE status = 'PENDING' AND exp_ms > ${now}
      ${userId === undefined ? sql`` : sql`AND user_id = ${userId}`}
      ORDER BY created_ms, request_id`.pipe(Effect.orDie)
  return rows.map((r): SandboxCode => ({
    request_id: r.request_id,
    user_id: r.user_id,
    code: SecondFactor.sandboxCode(r.request_id),
    expires_at: DateTime.formatIso(DateTime.unsafeMake(Number(r.exp_ms)))
  }))
})
