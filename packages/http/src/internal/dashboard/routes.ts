/**
 * Every route of the dashboard, on the hosted pages' router. `README.md` in this folder says how
 * to add a page.
 */
import type {
  Accounts,
  Auth,
  Balances,
  Crypto,
  Customers,
  Onboarding,
  Payments,
  Refunds,
  WebhookDeliveries
} from "@cobro/core"
import { WebSessions } from "@cobro/core"
import { Effect, type Layer, Option } from "effect"
import { HttpConfig } from "../../HttpConfig.js"
import { PageRouter } from "../pages/router.js"
import * as Shared from "../pages/shared.js"
import * as Kit from "./kit.js"
import * as Developers from "./developers.js"
import * as Overview from "./overview.js"
import * as PaymentDetail from "./paymentDetail.js"
import * as PaymentList from "./payments.js"
import * as SectionRoutes from "./sectionRoutes.js"
import * as SignIn from "./signIn.js"
import type { Limits } from "../rateLimit.js"

/** What the dashboard's pages need (beside `WebSessions`, read when present). */
export type Requirements =
  | Payments.Payments
  | Refunds.Refunds
  | WebhookDeliveries.WebhookDeliveries
  | Auth.Auth
  | Balances.Balances
  | Crypto.Crypto
  | HttpConfig
  | Limits
  | Customers.Customers
  | Onboarding.Onboarding
  | Accounts.Accounts

export const layer: Layer.Layer<never, never, Requirements> = PageRouter.use((router) =>
  Effect.gen(function* () {
    const config = yield* HttpConfig
    const settings = config.dashboard
    if (settings === undefined) return
    const sessions = yield* Effect.serviceOption(WebSessions.WebSessions)
    if (Option.isNone(sessions)) {
      return yield* Effect.dieMessage(
        "the dashboard needs the engine's WebSessions service (WebSessions.WebSessions.Default over the storage)"
      )
    }
    const pages = yield* Shared.make
    const dash = Kit.make(pages, settings, sessions.value, yield* SectionRoutes.acting)
    const { guarded } = pages
    const signIn = SignIn.make(dash)
    const overview = yield* Overview.make(dash)
    const paymentList = yield* PaymentList.make(dash)
    const payment = yield* PaymentDetail.make(dash)
    const developers = yield* Developers.make(dash)

    yield* router.get("/dashboard/sign-in", guarded(signIn.showMerchant))
    yield* router.post("/dashboard/sign-in", guarded(signIn.submitMerchant))
    yield* router.get("/dashboard/sign-in/partner", guarded(signIn.showPartner))
    yield* router.post("/dashboard/sign-in/partner", guarded(signIn.submitPartner))
    yield* router.post("/dashboard/sign-out", guarded(signIn.signOut))
    yield* router.get("/dashboard", guarded(overview.overview))
    yield* router.get("/dashboard/payments", guarded(paymentList.list))
    yield* router.get("/dashboard/payments/:paymentId", guarded(payment.page))
    yield* router.post("/dashboard/payments/:paymentId/refund", guarded(payment.refund))
    yield* router.get("/dashboard/developers", guarded(developers.page))
    yield* router.post("/dashboard/developers/rotate-secret", guarded(developers.rotate))
    // Customers, payouts, webhooks, sandbox, and the partner's merchants (`sectionRoutes.ts`).
    yield* SectionRoutes.register(dash, router)
  })
)
