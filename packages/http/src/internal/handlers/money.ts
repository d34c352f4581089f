/** The `money` routes: a merchant's balance and its payouts, one page at a time. */
import { Balances } from "@cobro/core"
import { Effect } from "effect"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { pageOf } from "../api/shared.js"
import { asPrincipal, type GroupLive, group } from "./shared.js"

export const MoneyLive: GroupLive<"money", Balances.Balances | Authentication> = group("money", (handlers) =>
  Effect.gen(function* () {
    const balances = yield* Balances.Balances
    return handlers
      .handle("balance", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(balances.balance(principal.user_id, path.user_id), (b) => ok("balance.found", b))
        )
      )
      .handle("payouts", ({ urlParams }) =>
        asPrincipal((principal) =>
          Effect.map(
            balances.payouts(principal.user_id, urlParams.user_id ?? principal.user_id, {
              kind: urlParams.kind,
              before: urlParams.cursor,
              limit: urlParams.limit
            }),
            (page) => ok("payouts.found", pageOf("payouts", page))
          )
        )
      )
  })
)
