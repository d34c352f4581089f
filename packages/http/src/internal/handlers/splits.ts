/**
 * The `splits` routes: split payments and their payout instructions, and the payout accounts
 * they pay to (create, verify, list, disable).
 */
import { type Idempotency, Split, Splits } from "@cobro/core"
import { Effect } from "effect"
import { ok } from "../../Envelope.js"
import { type Authentication, CurrentPrincipal } from "../../Security.js"
import { domain, type GroupLive, principalPost, replies, group } from "./shared.js"

export const SplitsLive: GroupLive<"splits", Splits.Splits | Idempotency.Idempotency | Authentication> =
  group("splits", (handlers) =>
    Effect.gen(function* () {
      const splits = yield* Splits.Splits
      return handlers
        .handle("create", ({ headers, payload, request }) =>
          principalPost({ headers, request }, (principal) => ({
            payload: { schema: Split.CreateSplitPaymentRequest, value: payload },
            reply: replies.splitPaymentView,
            run: domain(Effect.map(splits.create(principal, payload), (v) => ok("split.created", v)))
          }))
        )
        .handle("get", ({ path }) =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            domain(Effect.map(splits.get(principal, path.split_payment_id), (v) => ok("split.found", v)))
          )
        )
        .handle("instructPayouts", ({ headers, path, payload, request }) =>
          principalPost({ headers, request }, (principal) => ({
            payload: { schema: Split.InstructPayoutsRequest, value: payload },
            reply: replies.splitPaymentView,
            run: domain(
              Effect.map(splits.instructPayouts(principal, path.split_payment_id, payload), (v) =>
                ok("split.payouts.accepted", v)
              )
            )
          }))
        )
        .handle("createAccounts", ({ headers, payload, request }) =>
          principalPost({ headers, request }, (principal) => ({
            payload: { schema: Split.PayoutAccountList, value: payload },
            reply: replies.verificationRequestView,
            run: domain(
              Effect.map(splits.createAccounts(principal, payload), (v) => ok("payout_accounts.created", v))
            )
          }))
        )
        .handle("verifyAccounts", ({ headers, payload, request }) =>
          principalPost({ headers, request }, (principal) => ({
            payload: { schema: Split.VerifyAccountsRequest, value: payload },
            reply: replies.verificationRequestView,
            run: domain(
              Effect.map(splits.verifyAccounts(principal, payload), (v) => ok("payout_accounts.verified", v))
            )
          }))
        )
        .handle("listAccounts", () =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            domain(
              Effect.map(splits.listAccounts(principal), (accounts) =>
                ok("payout_accounts.found", { accounts })
              )
            )
          )
        )
        .handle("disableAccount", ({ headers, path, request }) =>
          principalPost({ headers, request }, (principal) => ({
            reply: replies.payoutAccount,
            run: domain(
              Effect.map(splits.disableAccount(principal, path.account_id), (v) =>
                ok("payout_account.disabled", v)
              )
            )
          }))
        )
    })
  )
