/** The `schedules` routes: payout schedules, with a partner token. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Schedule } from "@cobro/core"
import { Schema } from "effect"
import { StatusEnvelope } from "../../Envelope.js"
import { PartnerAuthentication } from "../../Security.js"
import { IdempotencyHeaders, StatusErrors, withExample } from "./shared.js"

const scheduleId = Schema.Struct({ schedule_id: Ids.ScheduleId })

export class Schedules extends HttpApiGroup.make("schedules")
  .add(
    HttpApiEndpoint.post("create", "/transactions/schedules")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a payout schedule",
          description:
            "Needs a partner token. Sweeps the merchant's available balance to `payload.address` (a CVU, CBU or alias whose holder is the merchant) `bi_daily`, `daily`, `weekly` or `monthly`, in Buenos Aires time."
        })
      )
      .setPayload(
        withExample(Schedule.CreateScheduleRequest, {
          schedule_type: "payout",
          frequency: "daily",
          payload: { address: "demo.payouts" }
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.get("list", "/transactions/schedules")
      .annotateContext(
        OpenApi.annotations({
          summary: "List payout schedules",
          description:
            "Needs a partner token: the payout schedules the calling partner created for the token's user."
        })
      )
      .addSuccess(StatusEnvelope(Schema.Struct({ schedules: Schema.Array(Schedule.PayoutScheduleWire) })))
  )
  .add(
    HttpApiEndpoint.get("get", "/transactions/schedules/:schedule_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a payout schedule",
          description: "Needs a partner token; only schedules the calling partner created."
        })
      )
      .setPath(scheduleId)
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .add(
    HttpApiEndpoint.patch("update", "/transactions/schedules/:schedule_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a payout schedule",
          description:
            "Needs a partner token. Changes `frequency`, `address` or `schedule_status`; another partner's schedule is 403."
        })
      )
      .setPath(scheduleId)
      .setPayload(withExample(Schedule.PatchScheduleRequest, { frequency: "weekly" }))
      .addSuccess(StatusEnvelope(Schedule.PayoutScheduleWire))
  )
  .addError(StatusErrors)
  .middleware(PartnerAuthentication)
  .annotate(OpenApi.Title, "Schedules")
  .annotate(OpenApi.Description, "Payout schedules that sweep a merchant's balance, with a partner token.") {}
