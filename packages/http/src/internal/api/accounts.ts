/** The token routes (`userTokens`, `partnerTokens`) and a partner's view of an account (`accounts`). */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Accounts, Auth, Ids } from "@cobro/core"
import { Schema } from "effect"
import { Envelope, StatusEnvelope } from "../../Envelope.js"
import { PartnerAuthentication } from "../../Security.js"
import { PartnerTokenRateLimit, TokenRateLimit } from "../rateLimit.js"
import { EnvelopeErrors, StatusErrors, withExample } from "./shared.js"

export class UserTokens extends HttpApiGroup.make("userTokens")
  .add(
    HttpApiEndpoint.post("issue", "/users/:id/tokens")
      .annotateContext(
        OpenApi.annotations({
          summary: "Issue a user token",
          description:
            "Exchanges the merchant's `client_id` and `client_secret` for a bearer token (1 hour). Public: no Authorization header."
        })
      )
      .setPath(Schema.Struct({ id: Ids.UserId }))
      .setPayload(withExample(Auth.TokenRequest, { client_id: "cli_…", client_secret: "cs_…" }))
      .addSuccess(Envelope(Auth.UserToken))
      .middleware(TokenRateLimit)
  )
  .addError(EnvelopeErrors)
  .annotate(OpenApi.Title, "Authentication")
  .annotate(
    OpenApi.Description,
    "Bearer tokens: a merchant's (`USR-`) from its `client_id` and `client_secret`, a partner's (`PAR-`) from an onboarding code (public routes); and the merchant's second factor, TOTP or e-mail codes (with its user token)."
  ) {}

export class PartnerTokens extends HttpApiGroup.make("partnerTokens")
  .add(
    HttpApiEndpoint.post("exchange", "/auth/tokens")
      .annotateContext(
        OpenApi.annotations({
          summary: "Exchange an onboarding code for a partner token",
          description:
            "The partner exchanges the single-use `code` (valid 5 minutes) it received at its redirect URL, with its own `client_id` and `client_secret`, for a `PAR-` token bound to the onboarded user."
        })
      )
      .setPayload(withExample(Auth.CodeExchangeRequest, { code: "…", client_id: "…", client_secret: "…" }))
      .addSuccess(StatusEnvelope(Auth.PartnerGrant))
      .middleware(PartnerTokenRateLimit)
  )
  .addError(StatusErrors)
  .annotate(OpenApi.Title, "Authentication") {}

const userId = Schema.Struct({ user_id: Ids.UserId })

export class UserAccounts extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("get", "/users/:user_id/account")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read an account's configuration",
          description:
            "Needs a partner token for that user (a user token is 403): status, alias prefix, cancellation periods, tolerance, payout schedule and the partner's commission."
        })
      )
      .setPath(userId)
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .add(
    HttpApiEndpoint.patch("update", "/users/:user_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change an account's configuration",
          description:
            "Needs a partner token. Only the fields sent change: `alias_prefix`, `cancellation_period` (hours, 1\u2013200), `cancellation_period_minutes` (5\u201320160, takes priority), `automatic_cancellation`. The account need not be active."
        })
      )
      .setPath(userId)
      .setPayload(
        withExample(Accounts.AccountPatch, {
          alias_prefix: "tienda",
          cancellation_period: 48,
          automatic_cancellation: true
        })
      )
      .addSuccess(StatusEnvelope(Accounts.Account))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication)
  .annotate(OpenApi.Title, "Accounts")
  .annotate(OpenApi.Description, "An onboarded merchant's account configuration, with a partner token.") {}
