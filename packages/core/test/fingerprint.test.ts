/**
 * A create request's fingerprint is stored with its payment (`creation_request`) and compared
 * with later requests of the same external id: written by hand, it must be the text the request's
 * schema gives (its wire form, keys sorted, without the external id), for requests of every shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { canonical, fingerprint } from "../src/payments/fingerprint.js"
import { CreatePaymentRequest } from "../src/payments/PaymentRequest.js"

/** The fingerprint as the schema gives it (how it was computed before it was written by hand). */
const bySchema = (request: CreatePaymentRequest): string => {
  const { external_id: _, ...wire } = Schema.encodeSync(CreatePaymentRequest)(request)
  return JSON.stringify(canonical(wire))
}

const requests: Record<string, unknown> = {
  "the least a request says": {
    user_id: "demo",
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"]
  },
  "every field": {
    user_id: "demo",
    external_id: "order-1",
    price: { amount: 1234.56, currency: "ARS" },
    payment_options: ["transfer", "crypto"],
    webhook_url: "https://merchant.example.com/hooks?x=1",
    redirect_url: "http://localhost:3000/thanks",
    motive: 'Pedido 1001 — ñandú "quoted"',
    team_id: "team-1",
    tags: ["b", "a", ""],
    partner_id: "partner-1",
    client_data: { first_name: "Juan", last_name: "Pérez", email: "juan@example.com", dni: "20123456" }
  },
  "prices of every currency and scale": {
    user_id: "demo",
    price: { amount: 0.000001, currency: "USDT" },
    payment_options: ["transfer"],
    client_data: {}
  },
  "a BNB price and empty lists": {
    user_id: "demo",
    price: { amount: 99999.99999999, currency: "BNB" },
    payment_options: ["transfer"],
    tags: []
  },
  "a BRL price with cents": {
    user_id: "demo",
    price: { amount: 10.1, currency: "BRL" },
    payment_options: ["transfer"]
  }
}

describe("a create request's fingerprint", () => {
  for (const [name, body] of Object.entries(requests)) {
    it(`is the schema's canonical wire form: ${name}`, () => {
      const request = Schema.decodeUnknownSync(CreatePaymentRequest)(body)
      expect(fingerprint(request)).toBe(bySchema(request))
    })
  }

  it("tells requests apart by what they ask, not by their external id", () => {
    const decode = Schema.decodeUnknownSync(CreatePaymentRequest)
    const base = { user_id: "demo", price: { amount: 1500, currency: "ARS" }, payment_options: ["transfer"] }
    expect(fingerprint(decode({ ...base, external_id: "a" }))).toBe(
      fingerprint(decode({ ...base, external_id: "b" }))
    )
    expect(fingerprint(decode(base))).not.toBe(
      fingerprint(decode({ ...base, price: { amount: 1500.01, currency: "ARS" } }))
    )
  })
})
