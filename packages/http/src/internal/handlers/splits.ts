/**
 * The `splits` routes: split payments and their payout instructions, and the payout accounts
 * they pay to (create, verify, list, disable).
 */
import { Idempotency, Splits } from "@cobro/core"
import { Effect } from "effect"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group, idempotent } from "./shared.js"

export const SplitsLive: GroupLive<"splits", Splits.Splits | Idempotency.Idempotency | Authentication> =
  group("splits", (handlers) =>
    Effect.gen(function* () {
      const splits = yield* Splits.Splits
      return handlers
        .handle(
          "create",
          idempotent("splits", "create", ({ payload }) =>
            asPrincipal((principal) =>
              Idempotency.answering(splits.create(principal, payload), (v) => ok("split.created", v))
            )
          )
        )
        .handle("get", ({ path }) =>
          asPrincipal((principal) =>
            Effect.map(splits.get(principal, path.split_payment_id), (v) => ok("split.found", v))
          )
        )
        .handle(
          "instructPayouts",
          idempotent("splits", "instructPayouts", ({ path, payload }) =>
            asPrincipal((principal) =>
              Idempotency.answering(splits.instructPayouts(principal, path.split_payment_id, payload), (v) =>
                ok("split.payouts.accepted", v)
              )
            )
          )
        )
        .handle(
          "createAccounts",
          idempotent("splits", "createAccounts", ({ payload }) =>
            asPrincipal((principal) =>
              Effect.map(splits.createAccounts(principal, payload), (v) => ok("payout_accounts.created", v))
            )
          )
        )
        .handle(
          "verifyAccounts",
          idempotent("splits", "verifyAccounts", ({ payload }) =>
            asPrincipal((principal) =>
              Effect.map(splits.verifyAccounts(principal, payload), (v) => ok("payout_accounts.verified", v))
            )
          )
        )
        .handle("listAccounts", () =>
          asPrincipal((principal) =>
            Effect.map(splits.listAccounts(principal), (accounts) =>
              ok("payout_accounts.found", { accounts })
            )
          )
        )
        .handle(
          "disableAccount",
          idempotent("splits", "disableAccount", ({ path }) =>
            asPrincipal((principal) =>
              Effect.map(splits.disableAccount(principal, path.account_id), (v) =>
                ok("payout_account.disabled", v)
              )
            )
          )
        )
    })
  )
