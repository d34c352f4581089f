/** The `accounts` routes (partner-authenticated): read and update a user's account. */
import { Accounts } from "@cobro/core"
import { Effect } from "effect"
import { success } from "../../Envelope.js"
import type { PartnerAuthentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group } from "./shared.js"

export const AccountsLive: GroupLive<"accounts", Accounts.Accounts | PartnerAuthentication> = group(
  "accounts",
  (handlers) =>
    Effect.gen(function* () {
      const accounts = yield* Accounts.Accounts
      return handlers
        .handle("get", ({ path }) =>
          asPrincipal((principal) => Effect.map(accounts.getAccount(principal, path.user_id), success))
        )
        .handle("update", ({ path, payload }) =>
          asPrincipal((principal) =>
            Effect.map(accounts.updateAccount(principal, path.user_id, payload), success)
          )
        )
    })
)
