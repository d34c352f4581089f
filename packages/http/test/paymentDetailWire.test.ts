/**
 * GET /payments/{paymentId} is written from the payment's own encoding (core's
 * `PaymentEncoding`), not by the route's schema: its JSON text is the one the schema writes, byte
 * for byte, for payments of every kind of content: pending and bare; with every optional field;
 * paid with fees; overpaid and underpaid (several transfers, `transaction_fields`); with a motive
 * changed; partly and fully refunded.
 */
import { expect, layer } from "@effect/vitest"
import { Accounts, Ids, Money, Payments, PaymentRequest, Refund, Refunds, type Payment } from "@cobro/core"
import { Effect, Schema } from "effect"
import { Api, Envelope } from "../src/index.js"
import { Faucet } from "@cobro/bank-sandbox"
import { call, merchant, serverLayer, tokenFor } from "./support.js"

/** What the route's schema writes for `payment`'s detailed read (the reference). */
const schemaText = (payment: Payment.Payment) =>
  Effect.gen(function* () {
    const user = yield* (yield* Accounts.Accounts).getUser(payment.user_id)
    const refunded = yield* (yield* Refunds.Refunds).ofPayment(payment)
    const detail = {
      ...payment,
      user_info: {
        email: user.email,
        fiat_payments_enabled: true,
        payment_notifications: payment.webhook_url !== null,
        user_id: user.user_id,
        provider: "cobro",
        payment_url: payment.payment_url,
        payment_options: payment.payment_options,
        expiration_timestamp: payment.expiration_timestamp,
        transactions: payment.transactions
      },
      refunds: refunded.refunds.map(Refund.toWire),
      refunded_amount: Money.format(refunded.refunded)
    }
    return JSON.stringify(
      Schema.encodeSync(Envelope.Envelope(Api.PaymentDetail))(Envelope.ok("payment.found", detail))
    )
  })

layer(serverLayer())("GET /payments/{paymentId} written from the payment's encoding", (it) => {
  it.effect("answers the schema's JSON text for payments of every kind of content", () =>
    Effect.gen(function* () {
      const m = yield* merchant("wire_1")
      const token = yield* tokenFor("wire_1", m.client_id, m.client_secret)
      const payments = yield* Payments.Payments
      const faucet = yield* Faucet.Faucet
      const refunds = yield* Refunds.Refunds
      const user = Ids.UserId.make("wire_1")
      const create = (external_id: string, fields: Record<string, unknown> = {}) =>
        payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "wire_1",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            external_id,
            ...fields
          })
        )
      const pay = (p: Payment.Payment, amount: number) =>
        faucet.send(user, p.cvu, new Faucet.FaucetRequest({ amount }))
      const refund = (p: Payment.Payment, body: Record<string, unknown>) =>
        refunds.create(user, p.id, Schema.decodeUnknownSync(Refund.RefundRequest)(body))

      const bare = yield* create("bare")
      const full = yield* create("full", {
        webhook_url: "https://merchant.example.com/hooks",
        redirect_url: "https://merchant.example.com/thanks",
        motive: "Pedido 1",
        team_id: "team-1",
        tags: ["a", "b"],
        client_data: { first_name: "Ana", email: "ana@example.com", dni: "30123456" }
      })
      const paid = yield* create("paid", { webhook_url: "https://merchant.example.com/hooks" })
      yield* pay(paid, 1500)
      const over = yield* create("over", { price: { amount: 10, currency: "USDT" } })
      yield* pay(over, 1)
      yield* pay(over, 50_000)
      const under = yield* create("under")
      yield* pay(under, 700.5)
      const renamed = yield* create("renamed", { motive: "antes" })
      yield* payments.updateMotive(user, renamed.id, "después")
      const partly = yield* create("partly")
      yield* pay(partly, 1500)
      yield* refund(partly, { refund_type: "PARTIAL", amount: "100.25" })
      const fully = yield* create("fully")
      yield* pay(fully, 1500)
      yield* refund(fully, { refund_type: "FULL" })

      for (const created of [bare, full, paid, over, under, renamed, partly, fully]) {
        const payment = yield* payments.get(user, created.id)
        const answer = yield* call("GET", `/payments/${encodeURIComponent(created.id)}`, { token })
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toBe("application/json")
        expect(answer.text).toBe(yield* schemaText(payment))
      }
    })
  )
})
