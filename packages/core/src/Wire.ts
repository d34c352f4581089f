/**
 * Schemas that encode domain values exactly as SPEC shows them on the wire: ARS amounts as
 * decimal text ("1500.00") or JSON numbers, timestamps as ISO 8601 text, rates as numbers.
 */
import { BigDecimal, Either, ParseResult, Schema } from "effect"
import * as Money from "./Money.js"

const arsMoney = Schema.typeSchema(Money.Money).pipe(
  Schema.filter((m) => m.currency === "ARS" || "expected an ARS amount")
)

/** "1500.00" ⇄ Money(ARS). */
export const ArsText = Schema.transformOrFail(Schema.String, arsMoney, {
  strict: true,
  decode: (s, _, ast) =>
    Either.mapLeft(Money.fromString(s, "ARS"), (e) => new ParseResult.Type(ast, s, e.message)),
  encode: (m) => ParseResult.succeed(Money.format(m))
})

/** 1500.5 ⇄ Money(ARS). */
export const ArsNumber = Schema.transformOrFail(Schema.Number, arsMoney, {
  strict: true,
  decode: (n, _, ast) =>
    Either.mapLeft(Money.fromNumber(n, "ARS"), (e) => new ParseResult.Type(ast, n, e.message)),
  encode: (m) => ParseResult.succeed(Money.toNumber(m))
})

/** A rate or percentage: JSON number ⇄ BigDecimal. */
export const Rate = Schema.BigDecimalFromNumber

/** ISO 8601 text ⇄ DateTime.Utc. */
export const Timestamp = Schema.DateTimeUtc

export const rate = (s: string): BigDecimal.BigDecimal => BigDecimal.unsafeFromString(s)

/** An absolute http(s) URL. */
export const HttpUrl = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (!URL.canParse(s)) return false
      const { protocol } = new URL(s)
      return protocol === "http:" || protocol === "https:"
    },
    { message: () => "must be an absolute http(s) URL" }
  )
)
