/**
 * A host application embedding @cobro/core with the in-memory adapters: it registers a
 * merchant, creates a payment, lets a payer transfer the money (through the sandbox bank) and
 * reads the settled payment, its ledger and the webhook event waiting in the outbox.
 */
import {
  BankAccount,
  Engine,
  type Errors,
  Faucet,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  PaymentRequest,
  Payments,
  User,
  UserRepository
} from "@cobro/core"
import { DateTime, Effect, type ParseResult, Schema } from "effect"

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

/** A merchant, ACTIVE. (The accounts service creates them; here one is stored directly.) */
export const registerMerchant = Effect.gen(function* () {
  const now = yield* DateTime.now
  const merchant = new User.User({
    user_id: Ids.UserId.make("merchant-1"),
    name: "Librería El Ateneo",
    email: "ventas@ateneo.example",
    cuit: BankAccount.makeCuit("30", "50001234"),
    account_status: "ACTIVE",
    alias_prefix: null,
    cancellation_period: null,
    cancellation_period_minutes: null,
    automatic_cancellation: false,
    transfer_tolerance: Money.zero("ARS"),
    payout_schedule: null,
    partner_id: null,
    creation_timestamp: now,
    last_modified_timestamp: now
  })
  yield* (yield* UserRepository.UserRepository).insert(merchant)
  return merchant
})

export const runPaymentExample: Effect.Effect<ExampleResult, Errors.DomainError | ParseResult.ParseError> =
  Effect.gen(function* () {
    // 1. A merchant.
    const merchant = yield* registerMerchant

    // 2. The merchant creates a payment for order 1001.
    const payments = yield* Payments.Payments
    const request = yield* Schema.decodeUnknown(PaymentRequest.CreatePaymentRequest)({
      user_id: "merchant-1",
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
  }).pipe(Effect.provide(Engine.layerMemory()))
