/**
 * The `sandbox` routes: the faucet, the bank accounts a tester registers at the sandbox bank, and
 * the caller's test clock.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { BankAccount, Wire } from "@cobro/core"
import { Faucet, SandboxAccount, TestClocks } from "@cobro/bank-sandbox"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, IdempotencyHeaders, withExample } from "./shared.js"

/** What the sandbox faucet did with the simulated transfer. */
export const FaucetResult = Schema.Struct({
  transaction_id: Schema.String,
  cvu: BankAccount.Cvu,
  amount: Schema.Number,
  currency: Schema.Literal("ARS"),
  sender_cuit: Schema.String,
  /** The sender's CBU or CVU (the body's `cbu`, or a random valid CBU): where a refund would go. */
  sender_account: Schema.String,
  /** `credited` to a payment, customer or split; `bounced` back to the sender; `duplicate`. */
  outcome: Schema.Literal("credited", "bounced", "duplicate"),
  target: Wire.Omittable(Schema.String),
  target_id: Wire.Omittable(Schema.String),
  reason: Wire.Omittable(Schema.String)
})

/** A bank account registered at the sandbox bank for your tests. */
export const SandboxBankAccountWire = Schema.Struct({
  /** The CBU or CVU. */
  cbu: Schema.String,
  alias: Schema.String,
  holder_name: Schema.String,
  cuit: Schema.String,
  created_at: Wire.Timestamp
}).annotations({ identifier: "SandboxBankAccount" })

export const SandboxBankAccountListWire = Schema.Struct({
  accounts: Schema.Array(SandboxBankAccountWire)
})

/** A transfer the sandbox bank sent to a registered account (a payout or a refund). */
export const ReceivedTransferWire = Schema.Struct({
  /** The sandbox bank's id of the transfer: the payout's or refund's `bank_transaction_id`. */
  transaction_id: Schema.String,
  amount: Schema.Number,
  currency: Schema.Literal("ARS"),
  /** `completed`: credited to the account; `pending`: accepted by the bank, not settled yet. */
  status: Schema.Literal("pending", "completed"),
  /** The address the sender used: this account's CBU/CVU or its alias. */
  to: Schema.String,
  /** The sender's reference (the payout's or refund's id). */
  reference: Schema.String,
  received_at: Wire.Timestamp
}).annotations({ identifier: "SandboxReceivedTransfer" })

export const ReceivedTransferListWire = Schema.Struct({
  transfers: Schema.Array(ReceivedTransferWire)
})

/** A merchant's test clock. */
export const SandboxClockWire = Schema.Struct({
  /** Your clock's time: what your payments, schedules and split holds run on. */
  now: Wire.Timestamp,
  /** How far your clock runs ahead of real time, in whole seconds. */
  offset_seconds: Schema.Int
}).annotations({ identifier: "SandboxClock" })

/** Your work that ran because an advance made it due. */
export const DueWorkWire = Schema.Struct({
  /** PENDING payments that became EXPIRED. */
  payments_expired: Schema.Int,
  /** CVUs of closed payments given back (expired ones and paid ones past their expiry). */
  cvus_released: Schema.Int,
  /** Payout schedule runs. */
  payout_runs: Schema.Int,
  /** Payouts the bank confirmed. */
  payouts_sent: Schema.Int,
  /** Split payouts instructions executed after their hold. */
  splits_executed: Schema.Int,
  /** Webhook deliveries attempted, and how many of them were delivered. */
  webhooks_attempted: Schema.Int,
  webhooks_delivered: Schema.Int,
  /** Items that failed and stay due (retried by the background work). */
  failed: Schema.Int
}).annotations({ identifier: "SandboxDueWork" })

/** A merchant's test clock after an advance. */
export const SandboxClockAdvancedWire = Schema.Struct({
  ...SandboxClockWire.fields,
  due_work: DueWorkWire
}).annotations({ identifier: "SandboxClockAdvanced" })

const accountPath = Schema.Struct({ cbu: SandboxAccount.AccountNumber })

export class Sandbox extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("faucet", "/cvu/:cvu/faucet")
      .annotateContext(
        OpenApi.annotations({
          summary: "Simulate an incoming transfer (sandbox)",
          description:
            "Sends `amount` pesos to one of your CVUs (a payment's, a fixed customer's or a split payment's) as a payer's bank would, from `cuit` and the account `cbu` if given (a random valid CBU otherwise: where a refund would go): the transfer is credited, or bounced to the sender when the CVU is closed. Only in sandbox mode."
        })
      )
      .setPath(Schema.Struct({ cvu: BankAccount.Cvu }))
      .setPayload(withExample(Faucet.FaucetRequest, { amount: 1500 }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(FaucetResult))
  )
  .add(
    HttpApiEndpoint.post("registerBankAccount", "/sandbox/bank-accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "Register a bank account at the sandbox bank (sandbox)",
          description: `Makes a bank account the sandbox bank knows: it answers holder look-ups (payout accounts, payout schedules) and receives payouts and refunds like any account. Every field may be left out: a random valid CBU, a random alias, and your own name and CUIT (an account of yours, as payout schedules require). Registering the same account again with the same details answers it; a number or alias in use is 409. At most ${SandboxAccount.maxAccountsPerMerchant} per merchant (remove one to make room). Only in sandbox mode, on the sandbox bank.`
        })
      )
      .setPayload(
        withExample(SandboxAccount.RegisterRequest, {
          cbu: "2850590940090418135201",
          alias: "mi.cuenta.pruebas",
          holder_name: "Tienda Ejemplo SA",
          cuit: "30-71234567-1"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(SandboxBankAccountWire))
  )
  .add(
    HttpApiEndpoint.get("listBankAccounts", "/sandbox/bank-accounts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List your sandbox bank accounts (sandbox)",
          description: "The accounts you registered at the sandbox bank, oldest first."
        })
      )
      .addSuccess(Envelope(SandboxBankAccountListWire))
  )
  .add(
    HttpApiEndpoint.get("getBankAccount", "/sandbox/bank-accounts/:cbu")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a sandbox bank account (sandbox)",
          description: "One of your registered accounts; another merchant's is 404."
        })
      )
      .setPath(accountPath)
      .addSuccess(Envelope(SandboxBankAccountWire))
  )
  .add(
    HttpApiEndpoint.get("bankAccountTransfers", "/sandbox/bank-accounts/:cbu/transfers")
      .annotateContext(
        OpenApi.annotations({
          summary: "Transfers a sandbox bank account received (sandbox)",
          description: `The payouts and refunds the sandbox bank sent to one of your registered accounts (from any merchant), newest first, at most ${SandboxAccount.maxReceivedListed}; failed ones are not listed. The sandbox bank keeps transfers in memory: a restart of the server forgets them. Another merchant's account is 404.`
        })
      )
      .setPath(accountPath)
      .addSuccess(Envelope(ReceivedTransferListWire))
  )
  .add(
    HttpApiEndpoint.del("removeBankAccount", "/sandbox/bank-accounts/:cbu")
      .annotateContext(
        OpenApi.annotations({
          summary: "Remove a sandbox bank account (sandbox)",
          description:
            "The sandbox bank forgets the account: holder look-ups of it fail from now on; transfers already sent stay. Answers the removed account; another merchant's (or an unknown) account is 404."
        })
      )
      .setPath(accountPath)
      .addSuccess(Envelope(SandboxBankAccountWire))
  )
  .add(
    HttpApiEndpoint.get("getClock", "/sandbox/clock")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read your test clock (sandbox)",
          description:
            "Your own clock: everything of yours (payment expiry, payout schedules, split holds, webhook retries) runs on it, and nothing of another merchant does. It starts at real time and only moves forward, when you advance it. A partner token reads the clock of the merchant it acts for. Only in sandbox mode."
        })
      )
      .addSuccess(Envelope(SandboxClockWire))
  )
  .add(
    HttpApiEndpoint.post("advanceClock", "/sandbox/clock/advance")
      .annotateContext(
        OpenApi.annotations({
          summary: "Advance your test clock (sandbox)",
          description: `Moves your clock forward by \`seconds\` or to the instant \`to\` (exactly one of them), at most ${TestClocks.maxAdvanceSeconds} seconds (400 days) per call; a \`to\` before your clock's time is 400. Answers once your work that became due has run: expiries, payout schedules, split payouts whose hold ended, then the webhook deliveries they made (\`due_work\` counts them). Work that became due runs once, at the new time. Two \`seconds\` advances at once both count; \`to\` is idempotent. Other merchants' clocks do not move. Only in sandbox mode.`
        })
      )
      .setPayload(withExample(TestClocks.AdvanceRequest, { seconds: 3600 }))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(SandboxClockAdvancedWire))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(
    OpenApi.Description,
    "Sandbox only: simulates an incoming transfer to one of your CVUs, registers bank accounts at the sandbox bank to pay out to, and reads and advances your own test clock. A production server neither serves these routes nor lists them in its `/openapi.json` and `/docs`; a sandbox on a real bank has no sandbox bank accounts."
  ) {}
