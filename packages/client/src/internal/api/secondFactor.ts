/** The client's routes for the merchant's second factor: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { RequestBody } from "../routeTypes.js"

export function getSecondFactor(api: Client<paths>, user_id: string, options?: CallOptions) {
  return unwrap(
    api.GET("/users/{user_id}/second-factor", { params: { path: { user_id } }, ...callInit(options) })
  )
}

export function enrolTotp(
  api: Client<paths>,
  user_id: string,
  body: RequestBody<"/users/{user_id}/second-factor/totp", "post">,
  options?: CallOptions & { readonly userId?: string }
) {
  return unwrap(
    api.POST("/users/{user_id}/second-factor/totp", {
      params: { path: { user_id } },
      body,
      ...callInit(options)
    })
  )
}

export function enrolEmail(
  api: Client<paths>,
  user_id: string,
  body: RequestBody<"/users/{user_id}/second-factor/email", "post">,
  options?: CallOptions & { readonly userId?: string }
) {
  return unwrap(
    api.POST("/users/{user_id}/second-factor/email", {
      params: { path: { user_id } },
      body,
      ...callInit(options)
    })
  )
}

export function confirmSecondFactor(
  api: Client<paths>,
  user_id: string,
  body: RequestBody<"/users/{user_id}/second-factor/confirm", "post">,
  options?: CallOptions & { readonly userId?: string }
) {
  return unwrap(
    api.POST("/users/{user_id}/second-factor/confirm", {
      params: { path: { user_id } },
      body,
      ...callInit(options)
    })
  )
}

export function sendSecondFactorCode(api: Client<paths>, user_id: string, options?: CallOptions) {
  return unwrap(
    api.POST("/users/{user_id}/second-factor/code", {
      params: { path: { user_id } },
      ...callInit(options)
    })
  )
}

export function removeSecondFactor(
  api: Client<paths>,
  user_id: string,
  body: RequestBody<"/users/{user_id}/second-factor/remove", "post">,
  options?: CallOptions & { readonly userId?: string }
) {
  return unwrap(
    api.POST("/users/{user_id}/second-factor/remove", {
      params: { path: { user_id } },
      body,
      ...callInit(options)
    })
  )
}
