/** The `schedules` routes (partner-authenticated): payout schedules (create, list, read, update). */
import { Idempotency, Schedules } from "@cobro/core"
import { Effect } from "effect"
import { success } from "../../Envelope.js"
import type { PartnerAuthentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group, idempotent } from "./shared.js"

export const SchedulesLive: GroupLive<
  "schedules",
  Schedules.Schedules | Idempotency.Idempotency | PartnerAuthentication
> = group("schedules", (handlers) =>
  Effect.gen(function* () {
    const schedules = yield* Schedules.Schedules
    return handlers
      .handle(
        "create",
        idempotent("schedules", "create", ({ payload }) =>
          asPrincipal((principal) => Idempotency.answering(schedules.create(principal, payload), success))
        )
      )
      .handle("list", () =>
        asPrincipal((principal) =>
          Effect.map(schedules.list(principal), (list) => success({ schedules: list }))
        )
      )
      .handle("get", ({ path }) =>
        asPrincipal((principal) => Effect.map(schedules.get(principal, path.schedule_id), success))
      )
      .handle("update", ({ path, payload }) =>
        asPrincipal((principal) => Effect.map(schedules.patch(principal, path.schedule_id, payload), success))
      )
  })
)
