import { DateTime, Deferred, Effect, Either, Fiber, Schema } from "effect"
import {
  BankAccount,
  Idempotency,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  type Payment,
  PaymentRequest,
  Payments,
  User
} from "../src/index.js"
import { UserRepository } from "../src/ports.js"
import { SandboxBank } from "@cobro/bank-sandbox"

export const merchantCuit = BankAccount.makeCuit("30", "71234567")

/** Inserts an ACTIVE merchant with no tolerance unless overridden. */
export const seedUser = (overrides: Partial<ConstructorParameters<typeof User.User>[0]> = {}) =>
  Effect.gen(function* () {
    const repo = yield* UserRepository.UserRepository
    const now = yield* DateTime.now
    const user = new User.User({
      user_id: Ids.UserId.make("u1"),
      name: "Tienda Uno",
      email: "uno@example.com",
      cuit: merchantCuit,
      account_status: "ACTIVE",
      alias_prefix: null,
      cancellation_period: null,
      cancellation_period_minutes: null,
      automatic_cancellation: false,
      transfer_tolerance: Money.zero("ARS"),
      payout_schedule: null,
      partner_id: null,
      creation_timestamp: now,
      last_modified_timestamp: now,
      ...overrides
    })
    yield* repo.insert(user)
    return user
  })

/** An ARS amount from decimal text: ars("10.50") is 1050 centavos. */
export const ars = (value: string) => Either.getOrThrow(Money.fromString(value, "ARS"))

/** A create request decoded from its wire shape, as the HTTP layer does. */
export const createRequest = (fields: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
    user_id: "u1",
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"],
    ...fields
  })

/** Asserts the ledger's invariants; every scenario ends with it. */
export const expectLedgerOk = Effect.gen(function* () {
  const report = yield* (yield* Ledger.Ledger).verify()
  if (report.problems.length > 0) throw new Error(`ledger problems:\n${report.problems.join("\n")}`)
  return report
})

/** Every event in the outbox, oldest first. */
export const events = Effect.gen(function* () {
  const outbox = yield* Outbox.Outbox
  return (yield* outbox.list(0, 100_000)).map((e) => e.event)
})

/** The merchant `seedUser` inserts. */
export const u1 = Ids.UserId.make("u1")

/** A payer's transfer of `amount` pesos to `cvu`, as the bank would notify it. */
export const transfer = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.simulateIncoming({ cvu, amount: ars(amount) }))

/** A payment of u1 created through the service (`createRequest` with `fields`). */
export const newPayment = (fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Payments.Payments, (p) => p.create(createRequest(fields)))

/** `p` as it is stored now. */
export const reload = (p: Payment.Payment) => Effect.flatMap(Payments.Payments, (s) => s.get(u1, p.id))

/** u1's available balance. */
export const available = Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.merchantAvailable(u1)))

/**
 * `operation` under the `Idempotency-Key` `key` of u1, answered by `answer` (JSON), stopped right
 * after it returned, before `run` could store anything (its process gone); then the same request
 * again: that retry's outcome. A replay shows the answer committed with the operation.
 */
export const retriedAfterStop = <D, E, R>(
  key: string,
  operation: Effect.Effect<D, E, R>,
  answer: (value: D) => unknown
) =>
  Effect.gen(function* () {
    const idempotency = yield* Idempotency.Idempotency
    const returned = yield* Deferred.make<void>()
    const stopped = Effect.zipLeft(
      operation,
      Effect.zipRight(Deferred.succeed(returned, undefined), Effect.never)
    )
    const first = yield* Effect.fork(
      idempotency.run("u1", key, "A", Schema.Unknown, Idempotency.answering(stopped, answer))
    )
    yield* Deferred.await(returned)
    yield* Fiber.interrupt(first)
    return yield* idempotency.run("u1", key, "A", Schema.Unknown, Idempotency.answering(operation, answer))
  })
