/** The client's routes for split payments and payout accounts: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { RequestBody } from "../routeTypes.js"

export function createSplitPayment(
  api: Client<paths>,
  body: RequestBody<"/split/payments", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/split/payments", { body, ...callInit(options) }))
}

export function getSplitPayment(api: Client<paths>, splitPaymentId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/split/payments/{split_payment_id}", {
      params: { path: { split_payment_id: splitPaymentId } },
      ...callInit(options)
    })
  )
}

export function instructPayouts(
  api: Client<paths>,
  splitPaymentId: string,
  body: RequestBody<"/split/payments/{split_payment_id}/payouts", "post">,
  options?: CallOptions
) {
  return unwrap(
    api.POST("/split/payments/{split_payment_id}/payouts", {
      params: { path: { split_payment_id: splitPaymentId } },
      body,
      ...callInit(options)
    })
  )
}

export function createPayoutAccounts(
  api: Client<paths>,
  body: RequestBody<"/split/accounts", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/split/accounts", { body, ...callInit(options) }))
}

export function listPayoutAccounts(api: Client<paths>, options?: CallOptions) {
  return unwrap(api.GET("/split/accounts", { ...callInit(options) }))
}

export function verifyPayoutAccounts(
  api: Client<paths>,
  body: RequestBody<"/split/accounts/verify", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/split/accounts/verify", { body, ...callInit(options) }))
}

export function disablePayoutAccount(api: Client<paths>, accountId: string, options?: CallOptions) {
  return unwrap(
    api.POST("/split/accounts/{account_id}/disable", {
      params: { path: { account_id: accountId } },
      ...callInit(options)
    })
  )
}
