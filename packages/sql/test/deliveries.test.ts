/**
 * A delivery's row is encoded by its schema compiled without checks (`internal/deliveries.ts`'s
 * `encodedDelivery`, core's `TrustedCodec`): it must be
 * what the row's schema encodes, column by column, for deliveries signed by a merchant and by a
 * partner, pending with a lease, and finished, and read back it must be the delivery.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@cobro/core"
import { WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { DateTime, Schema } from "effect"
import { DeliveryRow, deliveryState, encodedDelivery } from "../src/internal/deliveries.js"
import { at, delivery } from "./rowFixtures.js"

const deliveries: Record<string, W.WebhookDelivery> = {
  "a new delivery, signed by the merchant": delivery({}),
  "signed by a partner": delivery({
    type: "account.activated",
    signer: { kind: "partner", partner_id: Ids.PartnerId.make("partner-1") }
  }),
  "leased, after a failed attempt": delivery({
    attempts: 2,
    round_attempts: 1,
    replays: 1,
    lease_owner: "wkr_1",
    lease_until: at("2026-11-27T13:06:00.000Z"),
    last_attempt_at: at("2026-11-27T13:05:30.001Z"),
    last_status_code: 503,
    last_error: "HTTP 503"
  }),
  "dead, without a status code": delivery({
    status: "dead",
    attempts: 9,
    round_attempts: 9,
    next_attempt_at: null,
    last_attempt_at: at("2026-11-28T01:00:00.000Z"),
    last_error: "getaddrinfo ENOTFOUND merchant.example.com",
    finished_at: at("2026-11-28T01:00:00.250Z")
  }),
  delivered: delivery({
    status: "delivered",
    attempts: 1,
    round_attempts: 1,
    next_attempt_at: null,
    last_attempt_at: at("2026-11-27T13:05:10.000Z"),
    last_status_code: 204,
    finished_at: at("2026-11-27T13:05:10.042Z")
  })
}

describe("a delivery's row written by hand", () => {
  for (const [name, d] of Object.entries(deliveries)) {
    it(`is the row's schema encoding: ${name}`, () => {
      const schemaRow = Schema.encodeSync(DeliveryRow)(d)
      expect(encodedDelivery(d)).toStrictEqual(schemaRow)
      // Read back, it is the delivery.
      expect(Schema.decodeUnknownSync(DeliveryRow)(encodedDelivery(d))).toEqual(d)
    })
  }

  it("writes a state change without the identity, the signer, the body or the creation time", () => {
    const d = deliveries["leased, after a failed attempt"]!
    expect(Object.keys(deliveryState(d)).sort()).toEqual(
      [
        "attempts",
        "finished_ms",
        "last_attempt_ms",
        "last_error",
        "last_status_code",
        "lease_owner",
        "lease_until_ms",
        "next_attempt_ms",
        "replays",
        "round_attempts",
        "status"
      ].sort()
    )
    expect(deliveryState(d).lease_until_ms).toBe(DateTime.toEpochMillis(d.lease_until!))
  })
})
