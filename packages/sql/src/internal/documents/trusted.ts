/**
 * What the trusted codecs of stored documents (`paymentCodec.ts`, `userCodec.ts`) share: amounts
 * and instants read from their stored text without a schema's checks, and the flag that builds a
 * domain class without its constructor's validation.
 */
import { Money } from "@cobro/core"
import { DateTime, Either } from "effect"

/** The second argument of a domain class's constructor: build it without validation. */
export const trusted = true

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * An amount in major units as stored (text, or a number's own text) in minor units: the digits
 * with the fraction padded to the currency's scale. Anything else (more decimals than the scale,
 * a number in exponent form) goes through `Money`'s own parsing, which also says why it fails.
 */
const amountOf = (
  text: string,
  currency: Money.Currency,
  slow: () => Either.Either<Money.Money, unknown>
) => {
  const scale = Money.scaleOf[currency]
  const match = DECIMAL.exec(text)
  const fraction = match?.[3] ?? ""
  if (match === null || fraction.length > scale) return Either.getOrThrow(slow())
  const minor = BigInt(match[2]! + fraction.padEnd(scale, "0"))
  return new Money.Money({ minor: match[1] === "-" ? -minor : minor, currency }, trusted)
}

export const arsText = (text: string): Money.Money =>
  amountOf(text, "ARS", () => Money.fromString(text, "ARS"))
export const numberOf = (n: number, currency: Money.Currency): Money.Money =>
  amountOf(String(n), currency, () => Money.fromNumber(n, currency))
export const arsNumber = (n: number): Money.Money => numberOf(n, "ARS")
export const time = (text: string): DateTime.Utc => DateTime.unsafeMake(text) as DateTime.Utc
export const iso = (at: DateTime.Utc): string => DateTime.formatIso(at)
