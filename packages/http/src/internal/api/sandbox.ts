/** The `sandbox` route: the faucet. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { BankAccount, Faucet, Wire } from "@cobro/core"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, IdempotencyHeaders, withExample } from "./shared.js"

/** What the sandbox faucet did with the simulated transfer. */
export const FaucetResult = Schema.Struct({
  transaction_id: Schema.String,
  cvu: BankAccount.Cvu,
  amount: Schema.Number,
  currency: Schema.Literal("ARS"),
  sender_cuit: Schema.String,
  /** The sender's CBU or CVU (the body's `cbu`, or a random valid CBU): where a refund would go. */
  sender_account: Schema.String,
  /** `credited` to a payment, customer or split; `bounced` back to the sender; `duplicate`. */
  outcome: Schema.Literal("credited", "bounced", "duplicate"),
  target: Wire.Omittable(Schema.String),
  target_id: Wire.Omittable(Schema.String),
  reason: Wire.Omittable(Schema.String)
})

export class Sandbox extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("faucet", "/cvu/:cvu/faucet")
      .annotateContext(
        OpenApi.annotations({
          summary: "Simulate an incoming transfer (sandbox)",
          description:
            "Sends `amount` pesos to one of your CVUs (a payment's, a fixed customer's or a split payment's) as a payer's bank would, from `cuit` and the account `cbu` if given (a random valid CBU otherwise: where a refund would go): the transfer is credited, or bounced to the sender when the CVU is closed. Only in sandbox mode."
        })
      )
      .setPath(Schema.Struct({ cvu: BankAccount.Cvu }))
      .setPayload(withExample(Faucet.FaucetRequest, { amount: 1500 }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(FaucetResult))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(OpenApi.Description, "Sandbox only: simulates an incoming transfer to one of your CVUs.") {}
