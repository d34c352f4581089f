/**
 * The `exports` routes: a merchant's payments, a fixed customer's transactions, its payouts and
 * its refunds as CSV files (RFC 4180, UTF-8, a header row), streamed, with the merchant's token
 * or a partner token for it. `docs/decisions/csv-exports.md` records the choices.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Customer, Ids, MerchantMoney, Payment, Wire } from "@cobro/core"
import { Schema } from "effect"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors } from "./shared.js"

/** A CSV file (the 200 of every export). */
export const CsvFile = HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
  description:
    'RFC 4180 CSV in UTF-8 (no byte order mark): a header row, then one record per item; records end in CRLF; a field holding a comma, a quote, CR or LF is quoted, its quotes doubled. Amounts are decimal text with a dot ("1500.00"), dates ISO 8601 in UTC. Free text that starts with =, +, -, @, tab or CR is prefixed with \' (spreadsheet formula injection).'
})

const dateRange = {
  /** Inclusive lower bound on creation time. */
  start_date: Schema.optional(Wire.Timestamp),
  /** Inclusive upper bound on creation time. */
  end_date: Schema.optional(Wire.Timestamp)
}

/** GET /payments/export.csv: GET /payments/'s filters. */
export const PaymentsExportParams = Schema.Struct({
  user_id: Ids.UserId,
  team_id: Schema.optional(Ids.TeamId),
  /** Only payments in this state. */
  payment_status: Schema.optional(Payment.PaymentStatus),
  ...dateRange
})

/** GET /customers/{customer_id}/transactions/export.csv. */
export const TransactionsExportParams = Schema.Struct({ ...dateRange })

/** GET /transactions/payouts/export.csv: GET /transactions/payouts's filters (no paging). */
export const PayoutsExportParams = Schema.Struct({
  /** The token's own user; optional (the token names it). */
  user_id: Schema.optional(Ids.UserId),
  kind: Schema.optional(MerchantMoney.PayoutKind),
  ...dateRange
})

/** GET /refunds/export.csv: every payment's refunds, or one payment's. */
export const RefundsExportParams = Schema.Struct({
  /** The token's own user; optional (the token names it). */
  user_id: Schema.optional(Ids.UserId),
  payment_id: Schema.optional(Ids.PaymentId),
  ...dateRange
})

const common =
  "Streamed: the file is written as storage is read, page by page, whatever its length. A bad filter, another user or another merchant's customer or payment is answered in the usual JSON error envelope before any CSV is sent; a failure after the CSV began (storage gone) cuts the connection, so an incomplete file never arrives as a complete response. `start_date` and `end_date` bound the creation time (inclusive). The file is an attachment named `cobro-<export>-<user_id>-<UTC time>.csv`."

const csvEndpoint = <const Name extends string, const Path extends HttpApiEndpoint.PathSegment>(
  name: Name,
  path: Path,
  summary: string,
  description: string
) =>
  HttpApiEndpoint.get(name, path)
    .annotateContext(OpenApi.annotations({ summary, description: `${description} ${common}` }))
    .addSuccess(CsvFile)

export class Exports extends HttpApiGroup.make("exports")
  .add(
    csvEndpoint(
      "payments",
      "/payments/export.csv",
      "Export a merchant's payments as CSV",
      "The payments GET /payments/ lists, with its filters (`user_id`, the token's own account; `team_id`; `start_date`, `end_date`) and `payment_status`, oldest first: id, external id, status, price, the ARS quote, what was received and credited, CVU and alias, the payers, motive, team and dates."
    ).setUrlParams(PaymentsExportParams)
  )
  .add(
    csvEndpoint(
      "customerTransactions",
      "/customers/:customer_id/transactions/export.csv",
      "Export a fixed customer's transactions as CSV",
      "The transfers GET /customers/{customer_id}/transactions lists, newest first, with their amounts, commission, taxes, what was credited, the sender and the bank's id. Another merchant's customer is 404."
    )
      .setPath(Schema.Struct({ customer_id: Customer.CustomerId }))
      .setUrlParams(TransactionsExportParams)
  )
  .add(
    csvEndpoint(
      "payouts",
      "/transactions/payouts/export.csv",
      "Export a merchant's payouts as CSV",
      "The payouts GET /transactions/payouts lists (`kind`: schedule, split or refund), newest first, with amount, destination, status, the bank's reference, failure reason and dates."
    ).setUrlParams(PayoutsExportParams)
  )
  .add(
    csvEndpoint(
      "refunds",
      "/refunds/export.csv",
      "Export a merchant's refunds as CSV",
      "Every refund of the merchant's payments, or of one (`payment_id`; another merchant's payment is 404), newest first: type, amount, status, destination account and CUIT, the bank's reference, failure reason, who asked for it and dates."
    ).setUrlParams(RefundsExportParams)
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Exports")
  .annotate(
    OpenApi.Description,
    "CSV files of a merchant's payments, a customer's transactions, payouts and refunds, for accounting."
  ) {}
