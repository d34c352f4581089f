/**
 * An unpaid payment expires. The engine reads time from Effect's `Clock`, so a host's tests move
 * it with `TestClock` (see test/expiry.test.ts) instead of waiting five days; in production the
 * same code runs on the real clock and `Jobs.runDue` is called on an interval.
 */
import { type Errors, Jobs, PaymentRequest, Payments } from "@cobro/core"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { DateTime, Effect, type ParseResult, Schema } from "effect"
import { registerMerchant } from "./payment.js"

export interface ExpiryResult {
  readonly expiresAt: string
  readonly statusBefore: string
  readonly statusAfter: string
  readonly expiredByJobs: number
}

/** Creates a payment, lets `wait` pass, runs the due work and reads the payment again. */
export const runExpiryExample = (
  wait: Effect.Effect<void>
): Effect.Effect<ExpiryResult, Errors.DomainError | ParseResult.ParseError> =>
  Effect.gen(function* () {
    const merchant = yield* registerMerchant
    const payments = yield* Payments.Payments
    const created = yield* payments.create(
      yield* Schema.decodeUnknown(PaymentRequest.CreatePaymentRequest)({
        user_id: merchant.user_id,
        external_id: "order-1002",
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"]
      })
    )
    yield* wait
    const report = yield* (yield* Jobs.Jobs).runDue()
    const after = yield* payments.get(merchant.user_id, created.id)
    return {
      expiresAt: DateTime.formatIso(created.expiration_timestamp),
      statusBefore: created.payment_status,
      statusAfter: after.payment_status,
      expiredByJobs: report.expired
    }
  }).pipe(Effect.provide(SandboxEngine.layerMemory()))
