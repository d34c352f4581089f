import { describe, expect, it } from "@effect/vitest"
import { BigDecimal, Either, ParseResult, Schema } from "effect"
import { Money } from "../src/index.js"

const right = <A, E>(e: Either.Either<A, E>) => Either.getOrThrow(e)

describe("Money", () => {
  it("parses decimals exactly into minor units per currency scale", () => {
    expect(right(Money.fromNumber(1500, "ARS")).minor).toBe(150000n)
    expect(right(Money.fromNumber(0.1, "ARS")).minor).toBe(10n)
    expect(right(Money.fromNumber(1234567.89, "ARS")).minor).toBe(123456789n)
    expect(right(Money.fromNumber(0.000001, "USDT")).minor).toBe(1n)
    expect(right(Money.fromNumber(0.00000001, "BNB")).minor).toBe(1n)
    expect(right(Money.fromString("10.50", "BRL")).minor).toBe(1050n)
  })

  it("refuses more decimals than the currency has, and non-numbers", () => {
    expect(Either.isLeft(Money.fromNumber(0.001, "ARS"))).toBe(true)
    expect(Either.isLeft(Money.fromNumber(0.0000001, "USDT"))).toBe(true)
    expect(Either.isLeft(Money.fromNumber(Number.NaN, "ARS"))).toBe(true)
    expect(Either.isLeft(Money.fromNumber(Number.POSITIVE_INFINITY, "ARS"))).toBe(true)
    expect(Either.isLeft(Money.fromString("1e3", "ARS"))).toBe(true)
    expect(Either.isLeft(Money.fromString("12,5", "ARS"))).toBe(true)
  })

  it("formats fixed-point text and es-AR readable text", () => {
    expect(Money.format(Money.make(5n, "ARS"))).toBe("0.05")
    expect(Money.format(Money.make(-150000n, "ARS"))).toBe("-1500.00")
    expect(Money.format(Money.make(1n, "BNB"))).toBe("0.00000001")
    expect(Money.formatReadable(Money.make(123456789n, "ARS"))).toBe("$ 1.234.567,89")
    expect(Money.toNumber(Money.make(1050n, "ARS"))).toBe(10.5)
  })

  it("never mixes currencies", () => {
    const result = Money.add(Money.make(1n, "ARS"), Money.make(1n, "BRL"))
    expect(Either.isLeft(result) && result.left._tag).toBe("CurrencyMismatch")
    expect(right(Money.add(Money.make(1n, "ARS"), Money.make(2n, "ARS"))).minor).toBe(3n)
    expect(right(Money.subtract(Money.make(1n, "ARS"), Money.make(2n, "ARS"))).minor).toBe(-1n)
  })

  it("rounds rates half-even in one place", () => {
    const rate = BigDecimal.unsafeFromString("0.01")
    expect(Money.applyRate(Money.make(250n, "ARS"), rate).minor).toBe(2n) // 2.50 → 2 (even)
    expect(Money.applyRate(Money.make(350n, "ARS"), rate).minor).toBe(4n) // 3.50 → 4 (even)
    expect(Money.applyRate(Money.make(351n, "ARS"), rate).minor).toBe(4n)
    expect(
      Money.applyRate(Money.make(1_000_000n, "USDT"), BigDecimal.unsafeFromString("1180.555"), "ARS").minor
    ).toBe(118056n)
  })

  it("decodes and encodes the wire price", () => {
    const decode = Schema.decodeUnknownEither(Money.PriceFromWire)
    expect(decode({ amount: 99.99, currency: "ARS" })).toEqual(Either.right(Money.make(9999n, "ARS")))
    expect(Either.isLeft(decode({ amount: "99.99", currency: "ARS" }))).toBe(true)
    expect(Either.isLeft(decode({ amount: 1, currency: "EUR" }))).toBe(true)
    expect(Schema.encodeSync(Money.PriceFromWire)(Money.make(9999n, "ARS"))).toEqual({
      amount: 99.99,
      currency: "ARS"
    })
  })

  it("takes in amounts up to the maximum of 13 digits of minor units, in each currency's scale", () => {
    expect(right(Money.fromInput(99_999_999_999.99, "ARS"))).toEqual(Money.make(9_999_999_999_999n, "ARS"))
    expect(right(Money.fromInput(-99_999_999_999.99, "ARS")).minor).toBe(-9_999_999_999_999n)
    expect(right(Money.fromInput(9_999_999.999999, "USDT")).minor).toBe(9_999_999_999_999n)
    expect(right(Money.fromInput(99_999.99999999, "BNB")).minor).toBe(9_999_999_999_999n)
    for (const [value, currency] of [
      [100_000_000_000, "ARS"],
      [-100_000_000_000, "ARS"],
      [1e21, "ARS"],
      [1e308, "BRL"],
      [12_345_678_901_234_567_000, "ARS"],
      [10_000_000, "USDT"],
      [100_000, "BNB"]
    ] as const) {
      const refused = Money.fromInput(value, currency)
      expect(Either.isLeft(refused) && refused.left.message).toMatch(
        new RegExp(`^${currency} amounts are at most`)
      )
    }
    // Still exact decimals first: an over-precise amount is refused for its decimals.
    expect(Either.isLeft(Money.fromInput(0.001, "ARS"))).toBe(true)
    // Reading is not bounded: a stored sum past the maximum still decodes.
    expect(Either.isRight(Money.fromNumber(1e21, "ARS"))).toBe(true)
  })

  it("a price sent above the maximum is refused on price.amount; a stored one still reads", () => {
    const decode = Schema.decodeUnknownEither(Money.PriceInput)
    expect(decode({ amount: 99_999_999_999.99, currency: "ARS" })).toEqual(
      Either.right(Money.make(9_999_999_999_999n, "ARS"))
    )
    const refused = decode({ amount: 1e21, currency: "ARS" })
    expect(Either.isLeft(refused) && ParseResult.ArrayFormatter.formatErrorSync(refused.left)).toEqual([
      { _tag: "Type", path: ["amount"], message: "ARS amounts are at most 99999999999.99" }
    ])
    expect(Schema.decodeUnknownEither(Money.PriceFromWire)({ amount: 1e21, currency: "ARS" })).toEqual(
      Either.right(Money.make(10n ** 23n, "ARS"))
    )
  })
})
