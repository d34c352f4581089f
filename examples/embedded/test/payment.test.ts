import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runPaymentExample } from "../src/payment.js"

it.effect("the embedded example runs a payment end to end", () =>
  Effect.gen(function* () {
    const result = yield* runPaymentExample
    expect(result).toMatchObject({
      id: "VAR-merchant_1-order-1001",
      outcome: "Credited",
      status: "SUCCESS",
      received: "25999.90",
      // 1 % commission (260.00) and 21 % IVA on it (54.60) are kept
      available: "25685.30",
      webhooks: [
        { message: "Payment updated", paymentId: "VAR-merchant_1-order-1001", externalId: "order-1001" }
      ],
      ledgerProblems: []
    })
  })
)
