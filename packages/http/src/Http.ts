/**
 * The handlers of every route in `Api.ts`: each decodes nothing itself (the API did), calls one
 * engine service as the authenticated principal and maps domain errors to `ApiError`. Each group's
 * handlers live in `internal/handlers/` (what they share in `internal/handlers/shared.ts`); this
 * module puts them together.
 */
import type {
  Accounts,
  Auth,
  Balances,
  Customers,
  Idempotency,
  Payments,
  Refunds,
  Schedules,
  Splits,
  WebhookDeliveries
} from "@cobro/core"
import { Layer } from "effect"
import type { HttpConfig } from "./HttpConfig.js"
import type { Limits } from "./internal/rateLimit.js"
import { AccountsLive } from "./internal/handlers/accounts.js"
import { CustomersLive } from "./internal/handlers/customers.js"
import { ExportsLive } from "./internal/handlers/exports.js"
import { MoneyLive } from "./internal/handlers/money.js"
import { PaymentsLive, PublicPaymentsLive } from "./internal/handlers/payments.js"
import { SandboxLive } from "./internal/handlers/sandbox.js"
import { SchedulesLive } from "./internal/handlers/schedules.js"
import { SecondFactorLive } from "./internal/handlers/secondFactor.js"
import { SplitsLive } from "./internal/handlers/splits.js"
import { PartnerTokensLive, UserTokensLive } from "./internal/handlers/tokens.js"
import { WebhookDeliveriesLive } from "./internal/handlers/webhooks.js"

/** Every group's handlers; needs the engine's services (the faucet only in sandbox mode). */
export const handlers = Layer.mergeAll(
  PublicPaymentsLive,
  PaymentsLive,
  SandboxLive,
  CustomersLive,
  UserTokensLive,
  PartnerTokensLive,
  AccountsLive,
  SchedulesLive,
  SplitsLive,
  SecondFactorLive,
  MoneyLive,
  WebhookDeliveriesLive,
  ExportsLive
)

/** The services the handlers use (the faucet is optional: present in sandbox mode). */
export type Requirements =
  | Payments.Payments
  | Refunds.Refunds
  | Accounts.Accounts
  | Customers.Customers
  | Auth.Auth
  | Schedules.Schedules
  | Splits.Splits
  | Balances.Balances
  | WebhookDeliveries.WebhookDeliveries
  | Idempotency.Idempotency
  | HttpConfig
  | Limits
