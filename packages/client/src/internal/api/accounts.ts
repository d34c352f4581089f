/** The client's routes for partners, accounts and payout schedules: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { RequestBody } from "../routeTypes.js"

export function exchangeCode(
  api: Client<paths>,
  body: RequestBody<"/auth/tokens", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/auth/tokens", { body, ...callInit(options) }))
}

export function getAccount(api: Client<paths>, userId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/users/{user_id}/account", {
      params: { path: { user_id: userId } },
      ...callInit(options)
    })
  )
}

export function updateAccount(
  api: Client<paths>,
  userId: string,
  body: RequestBody<"/users/{user_id}", "patch">,
  options?: CallOptions
) {
  return unwrap(
    api.PATCH("/users/{user_id}", {
      params: { path: { user_id: userId } },
      body,
      ...callInit(options)
    })
  )
}

export function createSchedule(
  api: Client<paths>,
  body: RequestBody<"/transactions/schedules", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/transactions/schedules", { body, ...callInit(options) }))
}

export function listSchedules(api: Client<paths>, options?: CallOptions) {
  return unwrap(api.GET("/transactions/schedules", { ...callInit(options) }))
}

export function getSchedule(api: Client<paths>, scheduleId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/transactions/schedules/{schedule_id}", {
      params: { path: { schedule_id: scheduleId } },
      ...callInit(options)
    })
  )
}

export function updateSchedule(
  api: Client<paths>,
  scheduleId: string,
  body: RequestBody<"/transactions/schedules/{schedule_id}", "patch">,
  options?: CallOptions
) {
  return unwrap(
    api.PATCH("/transactions/schedules/{schedule_id}", {
      params: { path: { schedule_id: scheduleId } },
      body,
      ...callInit(options)
    })
  )
}
