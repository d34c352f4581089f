/**
 * The routes of the dashboard's customers, payouts, webhooks and sandbox sections, and of the
 * partner's list of merchants, on the dashboard's kit (`kit.ts`: a live session, CSRF on every
 * POST, the shell). A section gets a `Ctx` (`sections.ts`) with the principal the session acts as:
 * a merchant's own, or, for a partner that opened one of its merchants, the partner's for it
 * (`Onboarding.actFor`, checked on every request).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect } from "effect"
import type { Response } from "../pages/shared.js"
import {
  Accounts,
  type Balances,
  type Customers as Customers_,
  Ids,
  Onboarding,
  type Payments,
  type Refunds,
  type WebhookDeliveries,
  type WebSessions
} from "@cobro/core"
import type { Limits } from "../rateLimit.js"
import { Option, Schema } from "effect"
import type { PageRouter } from "../pages/router.js"
import * as Customers from "./customers.js"
import * as Exports from "./exports.js"
import {
  type Acting,
  type DashboardKit,
  type Fields,
  type MerchantSession,
  PATH,
  type Session
} from "./kit.js"
import * as Shell from "./layout.js"
import * as Merchants from "./merchants.js"
import * as Payouts from "./payouts.js"
import * as Sandbox from "./sandbox.js"
import type { Ctx, Outcome } from "./sections.js"
import * as Webhooks from "./webhooks.js"

type Router = Parameters<Parameters<typeof PageRouter.use>[0]>[0]

/**
 * What a partner may act as for a merchant: `Onboarding.actFor` (its consent, as the API's partner
 * access decides), with the merchant's name and e-mail for the bar.
 */
export const acting = Effect.gen(function* () {
  const onboarding = yield* Onboarding.Onboarding
  const accounts = yield* Accounts.Accounts
  const run: Acting = (partnerId, userId) =>
    Effect.gen(function* () {
      const id = Schema.decodeUnknownOption(Ids.UserId)(userId)
      if (Option.isNone(id)) return Option.none()
      const principal = yield* Effect.option(onboarding.actFor(partnerId, id.value))
      if (Option.isNone(principal)) return Option.none()
      const user = yield* Effect.option(accounts.getUser(id.value))
      return Option.map(user, (u) => ({
        merchant: { kind: "user" as const, user_id: u.user_id, name: u.name, email: u.email },
        principal: principal.value
      }))
    })
  return run
})

const noFields: Fields = () => undefined

/** What the sections read (the sandbox's services are read when present). */
export type Requirements =
  | Customers_.Customers
  | Payments.Payments
  | Refunds.Refunds
  | Balances.Balances
  | WebhookDeliveries.WebhookDeliveries
  | Onboarding.Onboarding
  | Limits

export const register = (dash: DashboardKit, router: Router): Effect.Effect<void, never, Requirements> =>
  Effect.gen(function* () {
    const customers = yield* Customers.make
    const payouts = yield* Payouts.make
    const webhooks = yield* Webhooks.make
    const sandbox = yield* Sandbox.make
    const merchants = yield* Merchants.make
    const { guarded } = dash.pages

    const answer = (session: Session, outcome: Outcome) =>
      outcome._tag === "Redirect"
        ? Shell.seeOther(outcome.location)
        : dash.shell(session, {
            title: outcome.title,
            section: outcome.section,
            body: outcome.body,
            status: outcome.status
          })

    const ctxOf = (session: MerchantSession, form: Fields) =>
      Effect.map(HttpRouter.params, (params): Ctx => ({
        principal: session.asPrincipal,
        base: PATH,
        query: new URL(session.request.url, "http://dashboard.invalid").searchParams,
        params,
        csrf: session.csrf,
        form,
        sandbox: dash.settings.sandbox
      }))

    const get = <R>(run: (ctx: Ctx) => Effect.Effect<Outcome, never, R>) =>
      guarded(
        dash.merchantPage((session) =>
          Effect.map(Effect.flatMap(ctxOf(session, noFields), run), (o) => answer(session, o))
        )
      )

    const post = <R>(run: (ctx: Ctx) => Effect.Effect<Outcome, never, R>) =>
      guarded(
        dash.merchantForm((session, fields) =>
          Effect.map(Effect.flatMap(ctxOf(session, fields), run), (o) => answer(session, o))
        )
      )

    // The partner's own pages: its merchants, and opening or leaving one of them.
    const partnerOnly = <R>(
      session: Session,
      run: (
        partner: Extract<WebSessions.SessionPrincipal, { kind: "partner" }>
      ) => Effect.Effect<Response, never, R>
    ) =>
      session.principal.kind === "partner" ? run(session.principal) : Effect.succeed(Shell.seeOther(PATH))
    yield* router.get(
      "/dashboard/partner",
      guarded(
        dash.page((session) =>
          partnerOnly(session, (partner) =>
            Effect.map(merchants.list(partner.partner_id, PATH, session.csrf), (o) => answer(session, o))
          )
        )
      )
    )
    yield* router.post(
      "/dashboard/partner/open",
      guarded(
        dash.form((session, fields) =>
          partnerOnly(session, (partner) =>
            Effect.gen(function* () {
              const userId = Schema.decodeUnknownOption(Ids.UserId)(fields("user_id") ?? "")
              const granted = Option.isNone(userId)
                ? Option.none()
                : yield* Effect.option(merchants.actFor(partner.partner_id, userId.value))
              if (Option.isNone(userId) || Option.isNone(granted)) {
                return dash.message(session, {
                  title: "No encontramos ese comercio",
                  section: "partner",
                  status: 404,
                  text: "No tenés permiso para operar por ese comercio, o no existe."
                })
              }
              return dash.withActingCookie(userId.value)(Shell.seeOther(PATH))
            })
          )
        )
      )
    )
    yield* router.post(
      "/dashboard/partner/close",
      guarded(dash.form(() => Effect.succeed(dash.withoutActingCookie(Shell.seeOther(`${PATH}/partner`)))))
    )

    // CSV downloads of the lists (`exports.ts`).
    const exports = yield* Exports.make(dash)
    yield* router.get("/dashboard/payments/export.csv", guarded(exports.payments))
    yield* router.get(
      "/dashboard/customers/:customerId/transactions/export.csv",
      guarded(exports.customerTransactions)
    )
    yield* router.get("/dashboard/payouts/export.csv", guarded(exports.payouts))
    yield* router.get("/dashboard/payouts/refunds.csv", guarded(exports.refunds))

    yield* router.get("/dashboard/customers", get(customers.list))
    yield* router.get("/dashboard/customers/:customerId", get(customers.detail))
    yield* router.get("/dashboard/payouts", get(payouts.list))
    yield* router.get("/dashboard/webhooks", get(webhooks.list))
    yield* router.get("/dashboard/webhooks/:eventId", get(webhooks.detail))
    yield* router.post("/dashboard/webhooks/:eventId/resend", post(webhooks.resend))
    yield* router.get("/dashboard/sandbox", get(sandbox.show))
    yield* router.post("/dashboard/sandbox/clock", post(sandbox.advance))
    yield* router.post("/dashboard/sandbox/faucet", post(sandbox.pay))
  })
