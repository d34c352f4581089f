/** The client's routes for webhook deliveries: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import { paginate } from "../pages.js"
import type { Query } from "../routeTypes.js"

export function listWebhookDeliveries(
  api: Client<paths>,
  query: Query<"/webhooks/deliveries", "get"> = {},
  options?: CallOptions
) {
  return unwrap(api.GET("/webhooks/deliveries", { params: { query }, ...callInit(options) }))
}

export function allWebhookDeliveries(
  api: Client<paths>,
  query: Query<"/webhooks/deliveries", "get"> = {},
  options?: CallOptions
) {
  return paginate(async (after) => {
    const page = await listWebhookDeliveries(
      api,
      { ...query, ...(after === undefined ? {} : { after }) },
      options
    )
    return { items: page.data.deliveries, next: page.data.next_after }
  }, query.after)
}

export function getWebhookDelivery(api: Client<paths>, eventId: string, options?: CallOptions) {
  return unwrap(
    api.GET("/webhooks/deliveries/{event_id}", {
      params: { path: { event_id: eventId } },
      ...callInit(options)
    })
  )
}

export function replayWebhookDelivery(api: Client<paths>, eventId: string, options?: CallOptions) {
  return unwrap(
    api.POST("/webhooks/deliveries/{event_id}/replay", {
      params: { path: { event_id: eventId } },
      ...callInit(options)
    })
  )
}
