/** The `exports` routes: CSV files of the principal's payments, transactions, payouts and refunds. */
import type { Balances, Customers, Payments, Refunds } from "@cobro/core"
import * as CsvExports from "../csv/exports.js"
import type { Authentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group } from "./shared.js"
import { Effect } from "effect"

export const ExportsLive: GroupLive<
  "exports",
  Payments.Payments | Customers.Customers | Balances.Balances | Refunds.Refunds | Authentication
> = group("exports", (handlers) =>
  Effect.succeed(
    handlers
      .handle("payments", ({ urlParams }) => asPrincipal((p) => CsvExports.payments(p, urlParams)))
      .handle("customerTransactions", ({ path, urlParams }) =>
        asPrincipal((p) => CsvExports.customerTransactions(p, path.customer_id, urlParams))
      )
      .handle("payouts", ({ urlParams }) => asPrincipal((p) => CsvExports.payouts(p, urlParams)))
      .handle("refunds", ({ urlParams }) => asPrincipal((p) => CsvExports.refunds(p, urlParams)))
  )
)
