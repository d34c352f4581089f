/**
 * Money as integer minor units of one currency. No float arithmetic on money anywhere: amounts
 * arrive as JSON numbers or decimal strings, are parsed exactly into minor units, and rates are
 * `BigDecimal`s rounded in exactly one place (`applyRate`, half-even).
 */
import { BigDecimal, Either, Option, ParseResult, Schema } from "effect"
import { Class } from "./internal/schemaClass.js"

export const Currency = Schema.Literal("ARS", "BRL", "USDT", "BNB")
export type Currency = typeof Currency.Type

/** Decimal places of each currency's minor unit. */
export const scaleOf: Record<Currency, number> = { ARS: 2, BRL: 2, USDT: 6, BNB: 8 }

export class Money extends Class<Money>("Money")({
  /** Integer minor units (centavos for ARS). */
  minor: Schema.BigIntFromSelf,
  currency: Currency
}) {}

export class CurrencyMismatch extends Schema.TaggedError<CurrencyMismatch>()("CurrencyMismatch", {
  left: Currency,
  right: Currency,
  message: Schema.String
}) {}

export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  message: Schema.String
}) {}

/**
 * An amount of `minor` units of `currency`. Its arguments are typed, so the class's own check of
 * them (a bigint and a currency of the list) is not run again: every sum, fee and conversion of
 * the money path makes amounts through here.
 */
export const make = (minor: bigint, currency: Currency): Money => new Money({ minor, currency }, true)

export const zero = (currency: Currency): Money => make(0n, currency)

const sameCurrency = (a: Money, b: Money): Either.Either<Currency, CurrencyMismatch> =>
  a.currency === b.currency
    ? Either.right(a.currency)
    : Either.left(
        new CurrencyMismatch({
          left: a.currency,
          right: b.currency,
          message: `cannot combine ${a.currency} with ${b.currency}`
        })
      )

export const add = (a: Money, b: Money): Either.Either<Money, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), (c) => make(a.minor + b.minor, c))

export const subtract = (a: Money, b: Money): Either.Either<Money, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), (c) => make(a.minor - b.minor, c))

/** Sums amounts of one currency; an empty list is zero of `currency`. */
export const sum = (currency: Currency, items: Iterable<Money>): Either.Either<Money, CurrencyMismatch> => {
  let total = zero(currency)
  for (const item of items) {
    const next = add(total, item)
    if (Either.isLeft(next)) return next
    total = next.right
  }
  return Either.right(total)
}

/** -1, 0 or 1 comparing two amounts of the same currency. */
export const compare = (a: Money, b: Money): Either.Either<-1 | 0 | 1, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), () => (a.minor < b.minor ? -1 : a.minor > b.minor ? 1 : 0))

export const isPositive = (m: Money): boolean => m.minor > 0n

export const isZero = (m: Money): boolean => m.minor === 0n

export const isNegative = (m: Money): boolean => m.minor < 0n

/**
 * The value of a currency-checked operation whose operands an invariant keeps in one currency
 * (a schema's literal currency, fees computed from the amount): a mismatch there is a defect, so
 * it is thrown rather than handled.
 */
export const orThrow = <A>(result: Either.Either<A, CurrencyMismatch>): A =>
  Either.getOrThrowWith(result, (mismatch) => mismatch)

/** The amount as a `BigDecimal` in major units (1050 centavos → 10.50). */
export const toBigDecimal = (m: Money): BigDecimal.BigDecimal => BigDecimal.make(m.minor, scaleOf[m.currency])

/**
 * The one rounding function: converts a decimal in major units to minor units, half-even.
 */
export const fromBigDecimalRounded = (value: BigDecimal.BigDecimal, currency: Currency): Money => {
  const rounded = BigDecimal.round(value, { scale: scaleOf[currency], mode: "half-even" })
  return make(BigDecimal.scale(rounded, scaleOf[currency]).value, currency)
}

/** `amount × rate`, rounded half-even to the currency's minor unit. */
export const applyRate = (m: Money, rate: BigDecimal.BigDecimal, currency: Currency = m.currency): Money =>
  fromBigDecimalRounded(BigDecimal.multiply(toBigDecimal(m), rate), currency)

/**
 * Parses an exact decimal (major units) into minor units. More decimal places than the
 * currency has is an error, never a silent rounding.
 */
export const fromDecimal = (
  value: BigDecimal.BigDecimal,
  currency: Currency
): Either.Either<Money, InvalidAmount> => {
  const normalized = BigDecimal.normalize(value)
  const scale = scaleOf[currency]
  if (normalized.scale > scale) {
    return Either.left(
      new InvalidAmount({ message: `${currency} amounts have at most ${scale} decimal places` })
    )
  }
  return Either.right(make(BigDecimal.scale(normalized, scale).value, currency))
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * Decimal text with at most the currency's decimals, read in minor units directly (what
 * `fromDecimal` answers for it, without a `BigDecimal`): every stored amount is read this way.
 * Anything else (more decimals, an exponent, not a number) is `undefined`, for `fromDecimal`.
 */
const exactMinor = (text: string, currency: Currency): Money | undefined => {
  const match = DECIMAL.exec(text)
  const fraction = match?.[3] ?? ""
  const scale = scaleOf[currency]
  if (match === null || fraction.length > scale) return undefined
  const minor = BigInt(match[2]! + fraction.padEnd(scale, "0"))
  return make(match[1] === "-" ? -minor : minor, currency)
}

export const fromNumber = (value: number, currency: Currency): Either.Either<Money, InvalidAmount> => {
  const exact = Number.isFinite(value) ? exactMinor(`${value}`, currency) : undefined
  return exact !== undefined ? Either.right(exact) : fromNumberSlowly(value, currency)
}

const fromNumberSlowly = (value: number, currency: Currency): Either.Either<Money, InvalidAmount> =>
  Option.match(BigDecimal.safeFromNumber(value), {
    onNone: () => Either.left(new InvalidAmount({ message: "amount must be a finite number" })),
    onSome: (bd) => fromDecimal(bd, currency)
  })

export const fromString = (value: string, currency: Currency): Either.Either<Money, InvalidAmount> => {
  const exact = exactMinor(value, currency)
  return exact !== undefined ? Either.right(exact) : fromStringSlowly(value, currency)
}

const fromStringSlowly = (value: string, currency: Currency): Either.Either<Money, InvalidAmount> =>
  DECIMAL.test(value)
    ? fromDecimal(BigDecimal.unsafeFromString(value), currency)
    : Either.left(new InvalidAmount({ message: "amount must be a decimal number" }))

/** Fixed-point text with exactly the currency's decimals: 1050n ARS → "10.50". */
export const format = (m: Money): string => {
  const scale = scaleOf[m.currency]
  const negative = m.minor < 0n
  const digits = (negative ? -m.minor : m.minor).toString().padStart(scale + 1, "0")
  const int = digits.slice(0, digits.length - scale)
  const frac = digits.slice(digits.length - scale)
  return `${negative ? "-" : ""}${int}${scale > 0 ? "." + frac : ""}`
}

/** A JSON number for the wire (exact for every amount below 2^53 minor units). */
export const toNumber = (m: Money): number => Number(format(m))

/** es-AR display text: 1234567n ARS → "$ 12.345,67". */
export const formatReadable = (m: Money): string => {
  const [int, frac] = format(m).replace("-", "").split(".") as [string, string | undefined]
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".")
  const sign = m.minor < 0n ? "-" : ""
  const symbol = m.currency === "ARS" ? "$" : m.currency === "BRL" ? "R$" : m.currency
  return `${sign}${symbol} ${grouped}${frac !== undefined ? "," + frac : ""}`
}

/**
 * The largest amount cobro takes in, in minor units of any currency: 13 digits, so ARS and BRL
 * 99,999,999,999.99, USDT 9,999,999.999999, BNB 99,999.99999999. Prices, quotes, transfers,
 * payouts and tolerances stay at or under it. Why 13 digits: a 64-bit balance (what the BIGINT
 * columns hold) still takes over 900,000 maximal amounts, and a decimal of at most 15 significant
 * digits survives a JSON number exactly, so every amount below the maximum does (it is also far
 * below 2^53). Sums (balances, totals received) are not bounded by it.
 */
export const maxMinor = 9_999_999_999_999n

/** The maximum amount in `currency` (see `maxMinor`). */
export const maximum = (currency: Currency): Money => make(maxMinor, currency)

/** `m` if its size is at most the maximum, otherwise an error naming the maximum. */
export const withinMaximum = (m: Money): Either.Either<Money, InvalidAmount> =>
  m.minor <= maxMinor && m.minor >= -maxMinor
    ? Either.right(m)
    : Either.left(
        new InvalidAmount({ message: `${m.currency} amounts are at most ${format(maximum(m.currency))}` })
      )

/**
 * An amount a client sends, as a JSON number: parsed exactly (`fromNumber`) and at most the
 * maximum. Every amount taken in goes through here (request schemas and services alike).
 */
export const fromInput = (value: number, currency: Currency): Either.Either<Money, InvalidAmount> =>
  Either.flatMap(fromNumber(value, currency), withinMaximum)

/**
 * Wire schema of a stored or answered price: `{amount: number, currency}` ⇄ `Money`. Decoding
 * rejects excess decimals with a message naming the rule; it does not bound the amount (a record
 * written before the maximum still reads), `PriceInput` does.
 */
export const PriceFromWire = Schema.transformOrFail(
  Schema.Struct({ amount: Schema.Number, currency: Currency }),
  Schema.typeSchema(Money),
  {
    strict: true,
    decode: (wire, _, ast) =>
      Either.mapLeft(
        fromNumber(wire.amount, wire.currency),
        (e) => new ParseResult.Type(ast, wire, e.message)
      ),
    encode: (money) => ParseResult.succeed({ amount: toNumber(money), currency: money.currency })
  }
)

/**
 * Wire schema of a price a client sends: `PriceFromWire` whose amount is at most the maximum
 * (`fromInput`). A failure points at `amount`, so the 400 names `price.amount`.
 */
export const PriceInput = Schema.transformOrFail(
  Schema.Struct({
    amount: Schema.Number.annotations({
      description:
        "At most the currency's decimals and at most 13 digits of minor units: ARS and BRL 99999999999.99, " +
        "USDT 9999999.999999, BNB 99999.99999999; the ARS quote too"
    }),
    currency: Currency
  }),
  Schema.typeSchema(Money),
  {
    strict: true,
    decode: (wire, _, ast) =>
      Either.mapLeft(
        fromInput(wire.amount, wire.currency),
        (e) => new ParseResult.Pointer("amount", wire, new ParseResult.Type(ast, wire.amount, e.message))
      ),
    encode: (money) => ParseResult.succeed({ amount: toNumber(money), currency: money.currency })
  }
)
