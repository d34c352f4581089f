/** The `accounts` routes (partner-authenticated): read and update a user's account. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Accounts } from "@cobro/core"
import { Effect } from "effect"
import * as Api from "../../Api.js"
import { success } from "../../Envelope.js"
import { CurrentPrincipal, type PartnerAuthentication } from "../../Security.js"
import { domain, type GroupLive, replying } from "./shared.js"

export const AccountsLive: GroupLive<"accounts", Accounts.Accounts | PartnerAuthentication> =
  HttpApiBuilder.group(Api.CobroApi, "accounts", (unmarked, handlers = replying(unmarked)) =>
    Effect.gen(function* () {
      const accounts = yield* Accounts.Accounts
      return handlers
        .handle("get", ({ path }) =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            domain(Effect.map(accounts.getAccount(principal, path.user_id), success))
          )
        )
        .handle("update", ({ path, payload }) =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            domain(Effect.map(accounts.updateAccount(principal, path.user_id, payload), success))
          )
        )
    })
  )
