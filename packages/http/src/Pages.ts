/**
 * The hosted pages, served beside the API (the way `HttpApiScalar.layer` adds `/docs`):
 *
 * - `GET /pay/{paymentId}`: the payer's page at `payment_url` (with, in sandbox mode, a badge and
 *   a "Simular transferencia" form posting to `POST /pay/{paymentId}/simulate`);
 * - `GET /authorize?partner_id=…` and `GET /authorize/{partner_id}`: partner onboarding;
 * - `POST /authorize` (and `/authorize/{partner_id}`): its form, `application/x-www-form-urlencoded`,
 *   answered with a 303 to the partner's redirect URL with `code` and `state`.
 *
 * Pages always answer HTML in Spanish, errors included (a payer never sees a JSON envelope), with
 * the security headers of `internal/pages/layout.ts`. They are served by their own router,
 * `PageRouter`, outside the API's boundary (`internal/pages/router.ts` says how to add pages).
 */
import type { Auth, Crypto, Onboarding, Payments } from "@cobro/core"
import type { PaymentRepository } from "@cobro/core/ports"
import { Effect } from "effect"
import type { HttpConfig } from "./HttpConfig.js"
import * as AuthorizeRoutes from "./internal/pages/authorizeRoutes.js"
import * as PayRoutes from "./internal/pages/payRoutes.js"
import * as Shared from "./internal/pages/shared.js"
import { PageRouter } from "./internal/pages/router.js"
import type { Limits } from "./internal/rateLimit.js"

export { PageRouter } from "./internal/pages/router.js"

/** What the pages need from the engine and the HTTP layer. */
export type Requirements =
  | Payments.Payments
  | PaymentRepository.PaymentRepository
  | Onboarding.Onboarding
  | Auth.Auth
  | Crypto.Crypto
  | HttpConfig
  | Limits

export const layer = PageRouter.use((router) =>
  Effect.gen(function* () {
    const kit = yield* Shared.make
    const { guarded } = kit
    const pay = yield* PayRoutes.make(kit)
    const authorize = yield* AuthorizeRoutes.make(kit)
    yield* router.get("/pay/:paymentId", guarded(pay.page))
    yield* router.post("/pay/:paymentId/simulate", guarded(pay.simulate))
    // `/pay/` alone or with more segments: a payer's mistyped link, answered with the same page.
    yield* router.get("/pay", guarded(pay.notFound))
    yield* router.get("/pay/*", guarded(pay.notFound))
    yield* router.get("/authorize", guarded(authorize.show))
    yield* router.get("/authorize/:partnerId", guarded(authorize.show))
    yield* router.post("/authorize", guarded(authorize.submit))
    yield* router.post("/authorize/:partnerId", guarded(authorize.submit))
  })
)
