/** The `schedules` routes (partner-authenticated): payout schedules (create, list, read, update). */
import { type Idempotency, Schedule, Schedules } from "@cobro/core"
import { Effect } from "effect"
import { success } from "../../Envelope.js"
import { CurrentPrincipal, type PartnerAuthentication } from "../../Security.js"
import { domain, type GroupLive, principalPost, replies, group } from "./shared.js"

export const SchedulesLive: GroupLive<
  "schedules",
  Schedules.Schedules | Idempotency.Idempotency | PartnerAuthentication
> = group("schedules", (handlers) =>
  Effect.gen(function* () {
    const schedules = yield* Schedules.Schedules
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        principalPost({ headers, request }, (principal) => ({
          payload: { schema: Schedule.CreateScheduleRequest, value: payload },
          reply: replies.payoutScheduleWireStatus,
          run: domain(Effect.map(schedules.create(principal, payload), success))
        }))
      )
      .handle("list", () =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.list(principal), (list) => success({ schedules: list })))
        )
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.get(principal, path.schedule_id), success))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          domain(Effect.map(schedules.patch(principal, path.schedule_id, payload), success))
        )
      )
  })
)
