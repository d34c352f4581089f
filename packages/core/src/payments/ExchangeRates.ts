/**
 * Converts a price in another currency into the ARS amount the payer transfers.
 */
import { BigDecimal, Context, Effect, Layer } from "effect"
import { ProviderFailure } from "../Errors.js"
import * as Money from "../Money.js"

export class ExchangeRates extends Context.Tag("@cobro/core/ExchangeRates")<
  ExchangeRates,
  {
    /** The ARS equivalent of `price`, rounded half-even to the centavo. ARS is returned as is. */
    readonly toArs: (price: Money.Money) => Effect.Effect<Money.Money, ProviderFailure>
  }
>() {}

/** Fixed rates (ARS per unit), e.g. `{ USDT: "1180.50", BRL: "215.30", BNB: "820000" }`. */
export const fixed = (
  rates: Partial<Record<Money.Currency, string>>
): Context.Tag.Service<ExchangeRates> => ({
  toArs: (price) => {
    if (price.currency === "ARS") return Effect.succeed(price)
    const rate = rates[price.currency]
    return rate === undefined
      ? Effect.fail(
          new ProviderFailure({
            key: "exchange_rate.unavailable",
            message: `no ARS rate for ${price.currency}`
          })
        )
      : Effect.succeed(Money.applyRate(price, BigDecimal.unsafeFromString(rate), "ARS"))
  }
})

/** Sandbox rates. */
export const sandboxRates: Partial<Record<Money.Currency, string>> = {
  USDT: "1200",
  BRL: "220",
  BNB: "800000"
}

export const layerFixed = (
  rates: Partial<Record<Money.Currency, string>> = sandboxRates
): Layer.Layer<ExchangeRates> => Layer.succeed(ExchangeRates, fixed(rates))
