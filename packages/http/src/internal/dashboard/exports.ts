/**
 * The dashboard's CSV downloads: the payments list (with its filters: state, Buenos Aires days,
 * text), a customer's transactions, the payouts (with their kind) and the refunds. Each streams
 * through `CsvExports` (the API's `…/export.csv` routes' functions) with the principal the
 * session acts as, so a merchant exports only its own and a partner only a merchant that
 * consented; a refusal (another's customer, a bad filter) is a page, before any CSV.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import {
  type Balances,
  Customer,
  type Customers,
  type Errors,
  MerchantClocks,
  type Payments,
  type Refunds
} from "@cobro/core"
import { DateTime, Effect, Option, Schema } from "effect"
import * as CsvExports from "../../CsvExports.js"
import type { Response } from "../pages/shared.js"
import type { DashboardKit, Handled, MerchantSession } from "./kit.js"
import { dayStart, filtersOf, matchesText } from "./payments.js"
import { kindOf } from "./payouts.js"

const searchOf = (request: HttpServerRequest.HttpServerRequest) =>
  new URL(request.url, "http://dashboard.invalid").searchParams

export interface ExportRoutes {
  readonly payments: Handled<never>
  readonly customerTransactions: Handled<HttpRouter.RouteContext>
  readonly payouts: Handled<never>
  readonly refunds: Handled<never>
}

type Services = Payments.Payments | Customers.Customers | Balances.Balances | Refunds.Refunds

/** The download handlers, with the services they call (read once, as every page's). */
export const make = (dash: DashboardKit): Effect.Effect<ExportRoutes, never, Services> =>
  Effect.map(Effect.context<Services>(), (services) => {
    const routes = handlers(dash)
    return {
      payments: Effect.provide(routes.payments, services),
      customerTransactions: Effect.provide(routes.customerTransactions, services),
      payouts: Effect.provide(routes.payouts, services),
      refunds: Effect.provide(routes.refunds, services)
    }
  })

const handlers = (dash: DashboardKit) => {
  /** The export on the merchant's clock; a refusal before any byte as a page. */
  const download = <R>(
    session: MerchantSession,
    file: CsvExports.Export<R>
  ): Effect.Effect<Response, never, R | HttpServerRequest.HttpServerRequest> =>
    MerchantClocks.run(session.principal.user_id)(
      Effect.catchAll(file, (error: Errors.DomainError) =>
        Effect.succeed(
          dash.message(session, {
            title:
              error._tag === "NotFound" ? "No encontramos lo que querés exportar" : "No pudimos exportar",
            status: error._tag === "NotFound" ? 404 : 400,
            text: `${error.message} (${error.key})`
          })
        )
      )
    )

  const payments = dash.merchantPage((session) => {
    const filters = filtersOf(searchOf(session.request))
    const start = dayStart(filters.from)
    const end = Option.map(dayStart(filters.to), (d) =>
      DateTime.subtract(DateTime.add(d, { days: 1 }), { millis: 1 })
    )
    const q = filters.q
    return download(
      session,
      CsvExports.payments(
        session.asPrincipal,
        {
          user_id: session.principal.user_id,
          ...(filters.status === undefined ? {} : { payment_status: filters.status }),
          ...(Option.isSome(start) ? { start_date: start.value } : {}),
          ...(Option.isSome(end) ? { end_date: end.value } : {})
        },
        q === undefined ? undefined : (p) => matchesText(p, q)
      )
    )
  })

  const customerTransactions = dash.merchantPage((session) =>
    Effect.flatMap(HttpRouter.params, (params) => {
      const id = Schema.decodeUnknownOption(Customer.CustomerId)(params["customerId"])
      return Option.isNone(id)
        ? Effect.succeed(
            dash.message(session, {
              title: "No encontramos lo que querés exportar",
              section: "customers",
              status: 404,
              text: "No tenés un cliente con ese identificador."
            })
          )
        : download(session, CsvExports.customerTransactions(session.asPrincipal, id.value, {}))
    })
  )

  const payouts = dash.merchantPage((session) => {
    const kind = kindOf(searchOf(session.request).get("tipo") ?? undefined)
    return download(
      session,
      CsvExports.payouts(session.asPrincipal, Option.isSome(kind) ? { kind: kind.value } : {})
    )
  })

  const refunds = dash.merchantPage((session) =>
    download(session, CsvExports.refunds(session.asPrincipal, {}))
  )

  return { payments, customerTransactions, payouts, refunds }
}
