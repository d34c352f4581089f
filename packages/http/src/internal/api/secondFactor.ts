/**
 * The `secondFactor` routes: a merchant's own second factor (TOTP or e-mail codes), which
 * production asks for to verify payout accounts. The merchant's user token, for its own user id.
 * Wrong codes are limited: five in a row lock the enrolled factor for 15 minutes.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, SecondFactors } from "@cobro/core"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, withExample } from "./shared.js"

const userId = Schema.Struct({ user_id: Ids.UserId })

export class SecondFactor extends HttpApiGroup.make("secondFactor")
  .add(
    HttpApiEndpoint.get("state", "/users/:user_id/second-factor")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read the second factor",
          description:
            "The enrolled factor (`totp` or `email`) and an enrolment in progress, each when there is one. In production a payout account is verified only with the enrolled factor's code."
        })
      )
      .setPath(userId)
      .addSuccess(Envelope(SecondFactors.FactorState))
  )
  .add(
    HttpApiEndpoint.post("enrolTotp", "/users/:user_id/second-factor/totp")
      .annotateContext(
        OpenApi.annotations({
          summary: "Start a TOTP enrolment",
          description:
            "Answers the authenticator app's secret, its `otpauth://` URI and that URI as an SVG QR code (shown this once); a code of the app confirms the enrolment (`/confirm`) within 10 minutes. With a factor enrolled, `current_code` (a code of it) is required: the new factor replaces it once confirmed."
        })
      )
      .setPath(userId)
      .setPayload(withExample(SecondFactors.EnrolRequest, {}))
      .addSuccess(Envelope(SecondFactors.TotpEnrolment))
  )
  .add(
    HttpApiEndpoint.post("enrolEmail", "/users/:user_id/second-factor/email")
      .annotateContext(
        OpenApi.annotations({
          summary: "Start an e-mail enrolment",
          description:
            "Sends a 6-digit code to the account's e-mail; the code confirms the enrolment (`/confirm`) within 10 minutes. With a factor enrolled, `current_code` (a code of it) is required."
        })
      )
      .setPath(userId)
      .setPayload(withExample(SecondFactors.EnrolRequest, {}))
      .addSuccess(Envelope(SecondFactors.EmailEnrolment))
  )
  .add(
    HttpApiEndpoint.post("confirm", "/users/:user_id/second-factor/confirm")
      .annotateContext(
        OpenApi.annotations({
          summary: "Confirm the enrolment",
          description:
            "A code of the factor being enrolled (the app's current code, or the e-mailed one) makes it the enrolled factor, replacing any earlier one. Five wrong codes end the enrolment."
        })
      )
      .setPath(userId)
      .setPayload(withExample(SecondFactors.CodeRequest, { code: "123456" }))
      .addSuccess(Envelope(SecondFactors.FactorState))
  )
  .add(
    HttpApiEndpoint.post("sendCode", "/users/:user_id/second-factor/code")
      .annotateContext(
        OpenApi.annotations({
          summary: "E-mail a code of the enrolled factor",
          description:
            "For an enrolled e-mail factor: sends a code that removes or replaces it (`/remove`, or `current_code` of a new enrolment). A TOTP factor's code is the app's (409)."
        })
      )
      .setPath(userId)
      .addSuccess(Envelope(SecondFactors.CodeSent))
  )
  .add(
    HttpApiEndpoint.post("remove", "/users/:user_id/second-factor/remove")
      .annotateContext(
        OpenApi.annotations({
          summary: "Remove the second factor",
          description:
            "A right code of the enrolled factor removes it. In production, payout accounts cannot be verified again until a factor is enrolled."
        })
      )
      .setPath(userId)
      .setPayload(withExample(SecondFactors.CodeRequest, { code: "123456" }))
      .addSuccess(Envelope(SecondFactors.FactorState))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  // Under the tokens' tag: the second factor is the merchant's other credential.
  .annotate(OpenApi.Title, "Authentication") {}
