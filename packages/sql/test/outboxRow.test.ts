/**
 * An event's row is written by hand (`internal/outboxRow.ts`'s `encodedRow`): it must be what the
 * row's schema encodes, column by column and the document's JSON text byte for byte, for events
 * with and without a partner and a webhook URL, and payloads of every kind of value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids, Outbox } from "@cobro/core"
import { DateTime, Schema } from "effect"
import { encodedRow, OutboxRow, row } from "../src/internal/outboxRow.js"

const event = (fields: Partial<ConstructorParameters<typeof Outbox.OutboxEvent>[0]>) =>
  new Outbox.OutboxEvent({
    event_id: Ids.EventId.make("evt_0001"),
    type: "payment.updated",
    user_id: Ids.UserId.make("merchant-1"),
    partner_id: null,
    webhook_url: "https://merchant.example.com/hooks",
    payload: { message: "Payment updated", data: { id: "pay_1", amount: 1500.5 } },
    created_at: DateTime.unsafeMake("2026-11-27T13:05:09.123Z"),
    ...fields
  })

const events: Record<string, Outbox.OutboxEvent> = {
  "a payment's event": event({}),
  "without a webhook URL": event({ webhook_url: null }),
  "addressed to a partner": event({
    type: "account.activated",
    partner_id: Ids.PartnerId.make("partner-1"),
    payload: { user_id: "merchant-1" }
  }),
  "a payload of every kind of value": event({
    payload: {
      text: 'quotes " and \\ and ñandú \u2028 and \u0001',
      numbers: [0, -1, 1e21, 0.1],
      nested: { empty: {}, list: [], flag: false, nothing: null },
      absent: undefined
    }
  }),
  "an instant at a whole second": event({ created_at: DateTime.unsafeMake("2026-01-01T00:00:00.000Z") })
}

const schemaRow = (e: Outbox.OutboxEvent) => Schema.encodeSync(OutboxRow)(row(e))

describe("an event's row written by hand", () => {
  for (const [name, e] of Object.entries(events)) {
    it(`is the row's schema encoding: ${name}`, () => {
      expect(encodedRow(e)).toStrictEqual(schemaRow(e))
      expect(encodedRow(e).doc).toBe(schemaRow(e).doc)
      // Read back, it is the event (a payload key whose value is undefined is not kept by JSON).
      expect(Schema.decodeUnknownSync(OutboxRow)(encodedRow(e)).doc).toEqual(e)
    })
  }
})
