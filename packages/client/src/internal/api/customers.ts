/** The client's routes for fixed customers and their transfers: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import { paginate } from "../pages.js"
import type { MerchantQuery, Query, RequestBody } from "../routeTypes.js"

export function createCustomer(
  api: Client<paths>,
  body: RequestBody<"/customers/", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/customers/", { body, ...callInit(options) }))
}

export function listCustomers(
  api: Client<paths>,
  user_id: string,
  query: MerchantQuery<"/customers/", "get"> = {},
  options?: CallOptions
) {
  return unwrap(api.GET("/customers/", { params: { query: { ...query, user_id } }, ...callInit(options) }))
}

export function getCustomer(api: Client<paths>, customerId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/customers/{customer_id}", {
      params: { path: { customer_id: customerId } },
      ...callInit(options)
    })
  )
}

export function listCustomerTransactions(
  api: Client<paths>,
  customerId: string,
  query: Query<"/customers/{customer_id}/transactions", "get"> = {},
  options?: CallOptions
) {
  return unwrap(
    api.GET("/customers/{customer_id}/transactions", {
      params: { path: { customer_id: customerId }, query },
      ...callInit(options)
    })
  )
}

export function allCustomerTransactions(
  api: Client<paths>,
  customerId: string,
  query: Query<"/customers/{customer_id}/transactions", "get"> = {},
  options?: CallOptions
) {
  return paginate(async (cursor) => {
    const page = await listCustomerTransactions(
      api,
      customerId,
      { ...query, ...(cursor === undefined ? {} : { cursor }) },
      options
    )
    return { items: page.data.transactions, next: page.data.next_cursor }
  }, query.cursor)
}

export function changeCustomerAlias(
  api: Client<paths>,
  customerId: string,
  body: RequestBody<"/customers/{customer_id}/alias", "patch">,
  options?: CallOptions
) {
  return unwrap(
    api.PATCH("/customers/{customer_id}/alias", {
      params: { path: { customer_id: customerId } },
      body,
      ...callInit(options)
    })
  )
}

export function getCustomerTransaction(
  api: Client<paths>,
  customerId: string,
  transactionId: string,
  options?: CallOptions
) {
  return unwrap(
    api.GET("/customers/{customer_id}/transactions/{transaction_id}", {
      params: { path: { customer_id: customerId, transaction_id: transactionId } },
      ...callInit(options)
    })
  )
}
