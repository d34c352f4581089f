/**
 * A reply that does not encode is a fault of the server: `HttpApiBuilder` reports it as the same
 * decode error as a bad request, and it must still be answered 500 (and logged), never a 400
 * that blames the client.
 */
import { describe, expect, layer } from "@effect/vitest"
import { type BankAccount, Payment, PaymentRequest, Payments } from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { Effect, Schema } from "effect"
import { call, merchant, serverLayer } from "./support.js"

layer(serverLayer({ rateLimits: false }))((it) => {
  describe("a reply that does not encode", () => {
    it.effect("is a 500 internal.error, while a request that does not decode stays a 400", () =>
      Effect.gen(function* () {
        yield* merchant("m1")
        const created = yield* (yield* Payments.Payments).create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "m1",
            external_id: "corrupt",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          })
        )
        // A stored payment whose quote holds what is not a CVU (as a bug could leave it).
        const quote = created.quotes[0]!
        const broken = new Payment.Payment(
          {
            ...created,
            quotes: [new Payment.Quote({ ...quote, address: "not-a-cvu" as BankAccount.Cvu }, true)]
          },
          true
        )
        yield* (yield* PaymentRepository.PaymentRepository).update(broken)

        const reply = yield* call("GET", `/payments/${created.id}/public`)
        expect(reply.status).toBe(500)
        expect(reply.body).toMatchObject({ message: "internal.error", error: true, code: 500 })

        const bad = yield* call("POST", "/payments/", { body: { user_id: "m1" } })
        expect(bad.status).toBe(400)
        expect(bad.body).toMatchObject({ message: "request.invalid", error: true, code: 400 })
      })
    )
  })
})
