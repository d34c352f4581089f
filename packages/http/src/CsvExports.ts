/**
 * CSV exports of a merchant's payments, a fixed customer's transactions, its payouts and its
 * refunds, for any host page or route: given an authorized principal (a merchant's own, or a
 * partner's for the merchant its grant names) and an export's filters, the streaming
 * `text/csv` response, or the domain error that refuses it before any byte is sent. The API's
 * `GET …/export.csv` routes are these functions (`Api.Exports`); the filters' schemas are the
 * routes' query parameters, to decode a page's query string with.
 *
 * @since 0.1.0
 */
export { type Export, customerTransactions, payments, payouts, refunds } from "./internal/csv/exports.js"
export {
  PaymentsExportParams,
  PayoutsExportParams,
  RefundsExportParams,
  TransactionsExportParams
} from "./internal/api/exports.js"
