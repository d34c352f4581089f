/**
 * What an incoming transfer costs the merchant: our commission, the taxes on the commission
 * (IVA) and taxes withheld on the transfer itself. Amounts are rounded half-even per line.
 */
import { BigDecimal, Context, Effect, Either, Layer } from "effect"
import type { UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { Tax } from "../payments/Payment.js"

export type TransferKind = "payment" | "customer" | "split"

export interface Fees {
  readonly commission_rate: BigDecimal.BigDecimal
  readonly commission: Money.Money
  readonly commission_taxes: ReadonlyArray<Tax>
  readonly taxes: ReadonlyArray<Tax>
}

export class FeePolicy extends Context.Tag("@cobro/core/FeePolicy")<
  FeePolicy,
  {
    readonly feesFor: (input: {
      readonly user_id: UserId
      readonly amount: Money.Money
      readonly kind: TransferKind
    }) => Effect.Effect<Fees>
  }
>() {}

/** The total of tax lines, all in `currency` (a line in another currency is a defect). */
export const totalOf = (currency: Money.Currency, taxes: ReadonlyArray<Tax>): Money.Money =>
  Money.orThrow(
    Money.sum(
      currency,
      taxes.map((t) => t.tax_amount)
    )
  )

/**
 * What reaches the merchant: amount − commission − commission taxes − taxes. Fees are in the
 * amount's currency (every `FeePolicy` computes them from it); one that is not is a defect.
 */
export const credited = (amount: Money.Money, fees: Fees): Money.Money =>
  Money.orThrow(
    Either.flatMap(
      Money.sum(amount.currency, [
        fees.commission,
        ...[...fees.commission_taxes, ...fees.taxes].map((t) => t.tax_amount)
      ]),
      (charged) => Money.subtract(amount, charged)
    )
  )

export interface PercentPolicy {
  /** Commission as a fraction of the amount, e.g. "0.01" for 1 %. */
  readonly commissionRate: string
  /** Taxes charged on the commission, e.g. IVA 21 %: `[{type: "IVA", rate: "0.21"}]`. */
  readonly commissionTaxes?: ReadonlyArray<{ readonly type: string; readonly rate: string }>
  /** Taxes withheld on the whole amount. */
  readonly taxes?: ReadonlyArray<{ readonly type: string; readonly rate: string }>
}

/** A percentage commission with taxes; the same for every merchant and kind of transfer. */
export const percent = (policy: PercentPolicy): Context.Tag.Service<FeePolicy> => {
  const commissionRate = BigDecimal.unsafeFromString(policy.commissionRate)
  // The rates are parsed once, not for every transfer.
  const ratesOf = (specs: PercentPolicy["taxes"]) =>
    (specs ?? []).map((spec) => ({ type: spec.type, rate: BigDecimal.unsafeFromString(spec.rate) }))
  const commissionTaxes = ratesOf(policy.commissionTaxes)
  const taxes = ratesOf(policy.taxes)
  const lines = (base: Money.Money, rates: ReadonlyArray<{ type: string; rate: BigDecimal.BigDecimal }>) =>
    rates.map(
      ({ rate, type }) => new Tax({ tax_amount: Money.applyRate(base, rate), tax_rate: rate, tax_type: type })
    )
  return {
    feesFor: ({ amount }) =>
      Effect.sync(() => {
        const commission = Money.applyRate(amount, commissionRate)
        return {
          commission_rate: commissionRate,
          commission,
          commission_taxes: lines(commission, commissionTaxes),
          taxes: lines(amount, taxes)
        }
      })
  }
}

/** The sandbox default: 1 % commission plus 21 % IVA on the commission. */
export const sandboxPolicy: PercentPolicy = {
  commissionRate: "0.01",
  commissionTaxes: [{ type: "IVA", rate: "0.21" }]
}

export const layer = (policy: PercentPolicy = sandboxPolicy): Layer.Layer<FeePolicy> =>
  Layer.succeed(FeePolicy, percent(policy))
