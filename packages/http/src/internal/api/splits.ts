/** The `splits` routes (closed beta): split payments and payout accounts. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Split } from "@cobro/core"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, IdempotencyHeaders, withExample } from "./shared.js"

const splitPaymentId = Schema.Struct({ split_payment_id: Ids.SplitPaymentId })

export class Splits extends HttpApiGroup.make("splits")
  .add(
    HttpApiEndpoint.post("create", "/split/payments")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a split payment",
          description:
            "Closed beta. A dedicated CVU and alias that receives one or more transfers; the funds are distributed later to verified payout accounts."
        })
      )
      .setPayload(
        withExample(Split.CreateSplitPaymentRequest, {
          external_id: "split-1001",
          webhook_url: "https://example.com/webhooks/cobro"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.get("get", "/split/payments/:split_payment_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a split payment",
          description:
            "Closed beta. Its `payment_status`, the amount credited, `payout_status`, `hold_until` and the state of each payout."
        })
      )
      .setPath(splitPaymentId)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("instructPayouts", "/split/payments/:split_payment_id/payouts")
      .annotateContext(
        OpenApi.annotations({
          summary: "Instruct a split payment's payouts",
          description:
            "Closed beta. The single payouts instruction: amounts to verified, active payout accounts within the received balance. Starts the 12-hour hold (`hold_until`); the payouts run after it and their result is sent by webhook."
        })
      )
      .setPath(splitPaymentId)
      .setPayload(
        withExample(Split.InstructPayoutsRequest, { payouts: [{ account_id: "pa_…", amount: 1000 }] })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.SplitPaymentView))
  )
  .add(
    HttpApiEndpoint.post("createAccounts", "/split/accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create payout accounts",
          description:
            "Closed beta. Always a list, even of one account. Answers a verification request (`request_id`, `exp_timestamp`); one second-factor code verifies every account of the request."
        })
      )
      .setPayload(
        withExample(Split.PayoutAccountList, [{ address: "demo.payouts", label: "Cuenta principal" }])
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.post("verifyAccounts", "/split/accounts/verify")
      .annotateContext(
        OpenApi.annotations({
          summary: "Verify payout accounts",
          description:
            "Closed beta. The second-factor `code` of a verification request activates its accounts."
        })
      )
      .setPayload(withExample(Split.VerifyAccountsRequest, { request_id: "vr_…", code: "123456" }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.VerificationRequestView))
  )
  .add(
    HttpApiEndpoint.get("listAccounts", "/split/accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List payout accounts",
          description: "Closed beta. The account's payout accounts in every state."
        })
      )
      .addSuccess(Envelope(Schema.Struct({ accounts: Schema.Array(Split.PayoutAccount) })))
  )
  .add(
    HttpApiEndpoint.post("disableAccount", "/split/accounts/:account_id/disable")
      .annotateContext(
        OpenApi.annotations({
          summary: "Disable a payout account",
          description:
            "Closed beta. Blocks new payouts to the account; its history stays. To change an address, create and verify a new account."
        })
      )
      .setPath(Schema.Struct({ account_id: Ids.PayoutAccountId }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Split.PayoutAccount))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Splits")
  .annotate(
    OpenApi.Description,
    "Closed beta: split payments, verified payout accounts and the 12-hour hold."
  ) {}
