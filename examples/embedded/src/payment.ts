/**
 * A host application embedding @cobro/core with the in-memory adapters: it registers a
 * merchant, creates a payment, lets a payer transfer the money (through the sandbox bank) and
 * reads the settled payment, its ledger and the webhook event waiting in the outbox.
 */
import {
  Accounts,
  type Errors,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  PaymentRequest,
  Payments,
  type User
} from "@cobro/core"
import { Faucet, SandboxEngine } from "@cobro/bank-sandbox"
import { Effect, type ParseResult, Schema } from "effect"

export interface ExampleResult {
  readonly id: string
  readonly cvu: string
  readonly alias: string
  readonly outcome: string
  readonly status: string
  readonly received: string
  readonly available: string
  readonly webhooks: ReadonlyArray<Record<string, unknown>>
  readonly ledgerProblems: ReadonlyArray<string>
}

/**
 * A merchant, ACTIVE, created through the accounts service as an operator (or the host's sign-up
 * flow) would: the request is decoded like any input (a bad CUIT or email is `InvalidInput` naming
 * the field), and the merchant gets API credentials (`client_id`, `client_secret`, shown once).
 */
export const registerMerchant: Effect.Effect<User.User, Errors.DomainError, Accounts.Accounts> = Effect.gen(
  function* () {
    const accounts = yield* Accounts.Accounts
    const request = yield* Accounts.decodeCreateUserRequest({
      user_id: "merchant_1",
      name: "Librería El Ateneo",
      email: "ventas@ateneo.example",
      cuit: "30-50001234-6",
      account_status: "ACTIVE"
    })
    const { user } = yield* accounts.createUser(request)
    return user
  }
)

export const runPaymentExample: Effect.Effect<ExampleResult, Errors.DomainError | ParseResult.ParseError> =
  Effect.gen(function* () {
    // 1. A merchant.
    const merchant = yield* registerMerchant

    // 2. The merchant creates a payment for order 1001.
    const payments = yield* Payments.Payments
    const request = yield* Schema.decodeUnknown(PaymentRequest.CreatePaymentRequest)({
      user_id: merchant.user_id,
      external_id: "order-1001",
      price: { amount: 25999.9, currency: "ARS" },
      payment_options: ["transfer"],
      webhook_url: "https://ateneo.example/webhooks/cobro",
      motive: "Pedido 1001"
    })
    const created = yield* payments.create(request)

    // 3. The payer transfers the amount to the payment's CVU (simulated by the sandbox bank).
    const { outcome } = yield* (yield* Faucet.Faucet).send(merchant.user_id, created.cvu, { amount: 25999.9 })

    // 4. The merchant reads the payment, its books and the pending webhook.
    const paid = yield* payments.get(merchant.user_id, created.id)
    const available = yield* (yield* Ledger.Ledger).balance(LedgerAccount.merchantAvailable(merchant.user_id))
    const pending = yield* (yield* Outbox.Outbox).list(0, 10)
    const verified = yield* (yield* Ledger.Ledger).verify()
    return {
      id: paid.id,
      cvu: created.cvu,
      alias: created.quotes[0]!.alias,
      outcome: outcome._tag,
      status: paid.payment_status,
      received: Money.format(paid.totalReceived),
      available: Money.format(available),
      webhooks: pending.map(({ event }) => event.payload),
      ledgerProblems: verified.problems
    }
  }).pipe(Effect.provide(SandboxEngine.layerMemory()))
