/**
 * The `sandbox` routes: the faucet, which sends a simulated bank transfer to a CVU, and the bank
 * accounts a tester registers at the sandbox bank. They exist only when the engine has the
 * sandbox's `Faucet` (and `SandboxAccounts`, on the sandbox bank); otherwise they answer 404.
 */
import { type Errors, type Ids, type Idempotency, Money, type Transfers } from "@cobro/core"
import {
  Faucet,
  type SandboxAccount,
  SandboxAccounts,
  type SandboxBank,
  TestClocks
} from "@cobro/bank-sandbox"
import { Duration, Effect, Option } from "effect"
import * as Api from "../../Api.js"
import { ApiError } from "../../ApiError.js"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group, idempotent } from "./shared.js"

/** `Faucet` is not in its type: it is read with `Effect.serviceOption` (present in sandbox mode). */
export const SandboxLive: GroupLive<"sandbox", Idempotency.Idempotency | Authentication> = group(
  "sandbox",
  (handlers) =>
    Effect.gen(function* () {
      const faucet = yield* Effect.serviceOption(Faucet.Faucet)
      const accounts = yield* Effect.serviceOption(SandboxAccounts.SandboxAccounts)
      const clocks = yield* Effect.serviceOption(TestClocks.TestClocks)
      /** `use` on the caller's merchant, when the sandbox's test clocks exist here. */
      const withClocks = <A>(
        use: (
          service: TestClocks.TestClocks["Type"],
          owner: Ids.UserId
        ) => Effect.Effect<A, Errors.DomainError>
      ) =>
        Option.match(clocks, {
          onNone: () =>
            Effect.fail(ApiError.of(404, "route.not.found", "test clocks exist only in sandbox mode")),
          onSome: (service) => asPrincipal((principal) => use(service, principal.user_id))
        })
      /** `use` on the caller's merchant, when the sandbox bank's accounts exist here. */
      const withAccounts = <A>(
        use: (
          service: SandboxAccounts.SandboxAccounts,
          owner: Ids.UserId
        ) => Effect.Effect<A, Errors.DomainError>
      ) =>
        Option.match(accounts, {
          onNone: () =>
            Effect.fail(
              ApiError.of(
                404,
                "route.not.found",
                "sandbox bank accounts exist only in sandbox mode on the sandbox bank"
              )
            ),
          onSome: (service) => asPrincipal((principal) => use(service, principal.user_id))
        })
      return handlers
        .handle(
          "faucet",
          idempotent("sandbox", "faucet", ({ path, payload }) =>
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
        )
        .handle(
          "registerBankAccount",
          idempotent("sandbox", "registerBankAccount", ({ payload }) =>
            withAccounts((service, owner) =>
              Effect.map(service.register(owner, payload), (a) =>
                ok("sandbox.bank_account.registered", accountWire(a))
              )
            )
          )
        )
        .handle("listBankAccounts", () =>
          withAccounts((service, owner) =>
            Effect.map(service.list(owner), (list) =>
              ok("sandbox.bank_accounts.found", { accounts: list.map(accountWire) })
            )
          )
        )
        .handle("getBankAccount", ({ path }) =>
          withAccounts((service, owner) =>
            Effect.map(service.get(owner, path.cbu), (a) => ok("sandbox.bank_account.found", accountWire(a)))
          )
        )
        .handle("bankAccountTransfers", ({ path }) =>
          withAccounts((service, owner) =>
            Effect.map(service.received(owner, path.cbu), (list) =>
              ok("sandbox.bank_account.transfers.found", { transfers: list.map(receivedWire) })
            )
          )
        )
        .handle("removeBankAccount", ({ path }) =>
          withAccounts((service, owner) =>
            Effect.map(service.remove(owner, path.cbu), (a) =>
              ok("sandbox.bank_account.removed", accountWire(a))
            )
          )
        )
        .handle("getClock", () =>
          withClocks((service, owner) =>
            Effect.map(service.read(owner), (reading) => ok("sandbox.clock.found", clockWire(reading)))
          )
        )
        .handle(
          "advanceClock",
          idempotent("sandbox", "advanceClock", ({ payload }) =>
            withClocks((service, owner) =>
              Effect.map(service.advance(owner, payload), (report) =>
                ok("sandbox.clock.advanced", { ...clockWire(report), due_work: dueWork(report) })
              )
            )
          )
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

const accountWire = (a: SandboxAccount.SandboxAccount): typeof Api.SandboxBankAccountWire.Type => ({
  cbu: a.cbu,
  alias: a.alias,
  holder_name: a.holder_name,
  cuit: a.cuit,
  created_at: a.creation_timestamp
})

const receivedWire = (t: SandboxBank.Received): typeof Api.ReceivedTransferWire.Type => ({
  transaction_id: t.bank_transaction_id,
  amount: Money.toNumber(t.amount),
  currency: "ARS",
  status: t.status === "completed" ? "completed" : "pending",
  to: t.to,
  reference: t.reference,
  received_at: t.booked_at
})

/** A test clock on the wire: its time, and its offset in whole seconds. */
const clockWire = (reading: TestClocks.ClockReading): typeof Api.SandboxClockWire.Type => ({
  now: reading.now,
  offset_seconds: Math.floor(Duration.toSeconds(reading.offset))
})

const dueWork = (report: TestClocks.AdvanceReport): typeof Api.DueWorkWire.Type => ({
  payments_expired: report.jobs.expired,
  cvus_released: report.jobs.released,
  payout_runs: report.jobs.payouts.runs,
  payouts_sent: report.jobs.payouts.sent,
  splits_executed: report.jobs.splits.finished,
  webhooks_attempted: report.webhooks.attempted,
  webhooks_delivered: report.webhooks.delivered,
  failed: report.jobs.failed + report.jobs.payouts.errors + report.jobs.splits.failed + report.webhooks.errors
})
