/** The client's routes for payments and their refunds: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { MerchantQuery, RequestBody } from "../routeTypes.js"

export function createPayment(
  api: Client<paths>,
  body: RequestBody<"/payments/", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/payments/", { body, ...callInit(options) }))
}

export function listPayments(
  api: Client<paths>,
  user_id: string,
  query: MerchantQuery<"/payments/", "get"> = {},
  options?: CallOptions
) {
  return unwrap(api.GET("/payments/", { params: { query: { ...query, user_id } }, ...callInit(options) }))
}

export function getPayment(api: Client<paths>, paymentId: string, options?: CallOptions) {
  return unwrap(api.GET("/payments/{paymentId}", { params: { path: { paymentId } }, ...callInit(options) }))
}

export function getPublicPayment(api: Client<paths>, paymentId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/payments/{paymentId}/public", { params: { path: { paymentId } }, ...callInit(options) })
  )
}

export function extendPaymentExpiration(
  api: Client<paths>,
  paymentId: string,
  body: RequestBody<"/payments/{paymentId}/expiration", "put">,
  options?: CallOptions
) {
  return unwrap(
    api.PUT("/payments/{paymentId}/expiration", {
      params: { path: { paymentId } },
      body,
      ...callInit(options)
    })
  )
}

export function repricePayment(
  api: Client<paths>,
  paymentId: string,
  body: RequestBody<"/payments/{paymentId}/price", "put">,
  options?: CallOptions
) {
  return unwrap(
    api.PUT("/payments/{paymentId}/price", {
      params: { path: { paymentId } },
      body,
      ...callInit(options)
    })
  )
}

export function updatePaymentMetadata(
  api: Client<paths>,
  paymentId: string,
  body: RequestBody<"/payments/{paymentId}/metadata", "put">,
  options?: CallOptions
) {
  return unwrap(
    api.PUT("/payments/{paymentId}/metadata", {
      params: { path: { paymentId } },
      body,
      ...callInit(options)
    })
  )
}

export function refundPayment(
  api: Client<paths>,
  paymentId: string,
  body: RequestBody<"/payments/{paymentId}/refunds", "post">,
  options?: CallOptions
) {
  return unwrap(
    api.POST("/payments/{paymentId}/refunds", {
      params: { path: { paymentId } },
      body,
      ...callInit(options)
    })
  )
}

export function listRefunds(api: Client<paths>, paymentId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/payments/{paymentId}/refunds", { params: { path: { paymentId } }, ...callInit(options) })
  )
}

export function getRefund(api: Client<paths>, paymentId: string, refundId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/payments/{paymentId}/refunds/{refundId}", {
      params: { path: { paymentId, refundId } },
      ...callInit(options)
    })
  )
}
