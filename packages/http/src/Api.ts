/**
 * The HTTP contract: every route of SPEC (plus DESIGN's extra split routes) with exactly the
 * request and response shapes SPEC gives. Each group is declared in `internal/api/`; handlers live
 * in `internal/handlers/` (put together in `Http.ts`); this module is what the OpenAPI document
 * and the typed client are made from.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import * as OpenApiFix from "./internal/openApi.js"
import { PartnerTokens, UserAccounts, UserTokens } from "./internal/api/accounts.js"
import { Customers } from "./internal/api/customers.js"
import { Exports } from "./internal/api/exports.js"
import { Money } from "./internal/api/money.js"
import { Payments, PublicPayments } from "./internal/api/payments.js"
import { Sandbox } from "./internal/api/sandbox.js"
import { Schedules } from "./internal/api/schedules.js"
import { SecondFactor } from "./internal/api/secondFactor.js"
import { Splits } from "./internal/api/splits.js"
import { WebhookDeliveryRoutes } from "./internal/api/webhooks.js"

export * from "./internal/api/accounts.js"
export * from "./internal/api/customers.js"
export * from "./internal/api/exports.js"
export * from "./internal/api/money.js"
export * from "./internal/api/payments.js"
export * from "./internal/api/sandbox.js"
export * from "./internal/api/schedules.js"
export * from "./internal/api/secondFactor.js"
export * from "./internal/api/shared.js"
export * from "./internal/api/splits.js"
export * from "./internal/api/webhooks.js"

/** The whole API. */
export class CobroApi extends HttpApi.make("cobro")
  .add(PublicPayments)
  .add(Payments)
  .add(Customers)
  .add(UserTokens)
  .add(PartnerTokens)
  .add(UserAccounts)
  .add(Schedules)
  .add(Splits)
  .add(SecondFactor)
  .add(Money)
  .add(Sandbox)
  .add(WebhookDeliveryRoutes)
  .add(Exports)
  .annotate(OpenApi.Title, "cobro")
  .annotate(OpenApi.Version, "1.0.0")
  // Every error leaves as an `ApiError` envelope: drop HttpApi's default decode-error body.
  .annotate(OpenApi.Transform, OpenApiFix.transform)
  .annotate(
    OpenApi.Description,
    "Bank-transfer payments for Argentina: one-off payments with their own CVU and alias, fixed customers, partner onboarding, payout schedules and split payments."
  ) {}
