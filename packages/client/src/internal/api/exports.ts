/** The client's CSV exports: `Cobro.exportCsv` delegates here, with the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { MerchantQuery, Query } from "../routeTypes.js"

/** Which file: the merchant's payments, payouts or refunds, or a fixed customer's transactions. */
export type ExportRequest =
  | { readonly export: "payments"; readonly query?: MerchantQuery<"/payments/export.csv", "get"> }
  | { readonly export: "payouts"; readonly query?: Query<"/transactions/payouts/export.csv", "get"> }
  | { readonly export: "refunds"; readonly query?: Query<"/refunds/export.csv", "get"> }
  | {
      readonly export: "transactions"
      readonly customerId: string
      readonly query?: Query<"/customers/{customer_id}/transactions/export.csv", "get">
    }

/** The file's bytes as they arrive (`parseAs: "stream"`): a refusal throws `CobroError` first. */
export async function exportCsv(
  api: Client<paths>,
  request: ExportRequest,
  merchant: () => string,
  options?: CallOptions
): Promise<ReadableStream<Uint8Array>> {
  const init = { parseAs: "stream" as const, ...callInit(options) }
  const body =
    request.export === "payments"
      ? await unwrap(
          api.GET("/payments/export.csv", {
            params: { query: { ...request.query, user_id: request.query?.user_id ?? merchant() } },
            ...init
          })
        )
      : request.export === "payouts"
        ? await unwrap(
            api.GET("/transactions/payouts/export.csv", { params: { query: request.query ?? {} }, ...init })
          )
        : request.export === "refunds"
          ? await unwrap(api.GET("/refunds/export.csv", { params: { query: request.query ?? {} }, ...init }))
          : await unwrap(
              api.GET("/customers/{customer_id}/transactions/export.csv", {
                params: { path: { customer_id: request.customerId }, query: request.query ?? {} },
                ...init
              })
            )
  if (body === null || body === undefined) throw new TypeError("the export answered without a body")
  return body as ReadableStream<Uint8Array>
}
