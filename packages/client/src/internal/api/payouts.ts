/** The client's routes for balance and payouts: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import { paginate } from "../pages.js"
import type { Query } from "../routeTypes.js"

export function getBalance(api: Client<paths>, user_id: string, options?: CallOptions) {
  return unwrap(api.GET("/users/{user_id}/balance", { params: { path: { user_id } }, ...callInit(options) }))
}

export function listPayouts(
  api: Client<paths>,
  query: Query<"/transactions/payouts", "get"> = {},
  options?: CallOptions
) {
  return unwrap(api.GET("/transactions/payouts", { params: { query }, ...callInit(options) }))
}

export function allPayouts(
  api: Client<paths>,
  query: Query<"/transactions/payouts", "get"> = {},
  options?: CallOptions
) {
  return paginate(async (cursor) => {
    const page = await listPayouts(api, { ...query, ...(cursor === undefined ? {} : { cursor }) }, options)
    return { items: page.data.payouts, next: page.data.next_cursor }
  }, query.cursor)
}
