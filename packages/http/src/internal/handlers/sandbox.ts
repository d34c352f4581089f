/**
 * The `sandbox` route: the faucet, which sends a simulated bank transfer to a CVU. It exists only
 * when the engine has the sandbox's `Faucet`; otherwise the route answers 404.
 */
import { Faucet, type Idempotency, Money, type Transfers } from "@cobro/core"
import { Effect, Option } from "effect"
import * as Api from "../../Api.js"
import { ApiError } from "../../ApiError.js"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group } from "./shared.js"

/** `Faucet` is not in its type: it is read with `Effect.serviceOption` (present in sandbox mode). */
export const SandboxLive: GroupLive<"sandbox", Idempotency.Idempotency | Authentication> = group(
  "sandbox",
  (handlers) =>
    Effect.gen(function* () {
      const faucet = yield* Effect.serviceOption(Faucet.Faucet)
      return handlers.handle("faucet", ({ path, payload }) =>
        Option.match(faucet, {
          onNone: () =>
            Effect.fail(ApiError.of(404, "route.not.found", "the faucet exists only in sandbox mode")),
          onSome: ({ send }) =>
            asPrincipal((principal) =>
              Effect.map(send(principal.user_id, path.cvu, payload), ({ outcome, transfer }) =>
                ok("faucet.transfer.sent", faucetResult(transfer, outcome))
              )
            )
        })
      )
    })
)

const faucetResult = (
  transfer: {
    readonly bank_transaction_id: string
    readonly cvu: (typeof Api.FaucetResult.Type)["cvu"]
    readonly amount: Money.Money
    readonly sender_cuit: string
    readonly sender_account: string
  },
  outcome: Transfers.IngestOutcome
): typeof Api.FaucetResult.Type => ({
  transaction_id: transfer.bank_transaction_id,
  cvu: transfer.cvu,
  amount: Money.toNumber(transfer.amount),
  currency: "ARS",
  sender_cuit: transfer.sender_cuit,
  sender_account: transfer.sender_account,
  outcome: outcome._tag === "Credited" ? "credited" : outcome._tag === "Bounced" ? "bounced" : "duplicate",
  target: outcome._tag === "Credited" ? outcome.target : null,
  target_id: outcome._tag === "Credited" ? outcome.target_id : null,
  reason: outcome._tag === "Bounced" ? outcome.reason : null
})
