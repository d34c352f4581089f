/** The payments, balances, books and records the refund scenarios share. */
import {
  BankAccount,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  Payment,
  Payments,
  Refund,
  Transfers
} from "@cobro/core"
import { LedgerRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Schema } from "effect"
import type { EngineContext } from "../../Scenario.js"
import { ars, createRequest, u1 } from "../fixtures.js"

export { books, checkLater } from "../fixtures.js"

export const senderCbu = BankAccount.makeCbu("0170099", "2200001234567")
export const otherCbu = BankAccount.makeCbu("0140099", "3300007654321")
export const senderCuit = BankAccount.makeCuit("20", "30111222")

/** A transfer of `minor` centavos to `cvu` from `account`, credited by the engine. */
export const payFrom = (cvu: BankAccount.Cvu, minor: bigint, account: string = senderCbu) =>
  Effect.gen(function* () {
    const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu,
      amount: ars(minor),
      senderAccount: account,
      senderCuit
    })
    return yield* (yield* Transfers.Transfers).ingest(t)
  })

/**
 * A payment of u1 (1500.00 unless `price` says) paid with `minor` centavos from `account`; the
 * payment as it is then.
 */
export const paidPayment = (
  minor: bigint,
  externalId = "o-1",
  price = 1500,
  account: string = senderCbu
): Effect.Effect<Payment.Payment, unknown, EngineContext> =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const created = yield* payments.create(
      createRequest({ external_id: externalId, price: { amount: price, currency: "ARS" } })
    )
    yield* payFrom(created.cvu, minor, account)
    return yield* payments.get(u1, created.id)
  })

/** Money of another payment (from another account) in u1's available balance: what it credited. */
export const fund = (
  minor: bigint,
  externalId = "o-fund"
): Effect.Effect<Money.Money, unknown, EngineContext> =>
  Effect.map(paidPayment(minor, externalId, Number(minor) / 100, otherCbu), credited)

export const refundReq = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Refund.RefundRequest)(fields)

export const available = (user = u1) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(user)))
export const inTransit = (user = u1) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantInTransit(user)))
export const credited = (p: {
  readonly transaction_fields?: { readonly credited_amount: Money.Money } | undefined
}) => p.transaction_fields!.credited_amount
export const commission = Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.platformCommission))
export const minus = (a: Money.Money, b: Money.Money) => Money.orThrow(Money.subtract(a, b))
export const events = Effect.flatMap(Outbox.Outbox, (o) => Effect.map(o.list(0, 10_000), (es) => es.length))
export const entries = Effect.flatMap(LedgerRepository.LedgerRepository, (r) =>
  Effect.map(r.entries(0, 100_000), (es) => es.length)
)

/** The refusal's key and field (when it names one). */
export const refusal = <A, R>(effect: Effect.Effect<A, { readonly key: string }, R>) =>
  Effect.map(Effect.flip(effect), (e) => ({ key: e.key, ...("field" in e ? { field: e.field } : {}) }))

export const record = (id: string, payment: string, at: DateTime.Utc, minor: bigint, user = u1) =>
  new Refund.Refund({
    refund_id: Refund.RefundId.make(id),
    payment_id: Ids.PaymentId.make(payment),
    user_id: user,
    refund_type: "PARTIAL",
    amount: ars(minor),
    status: "PENDING",
    destination: new Refund.RefundDestination({ address: senderCbu, cuit: senderCuit, name: "Juan Pérez" }),
    blame: null,
    bank_transaction_id: null,
    failure_reason: null,
    creation_timestamp: at,
    last_modified_timestamp: at
  })
