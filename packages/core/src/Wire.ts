/**
 * Schemas that encode domain values exactly as SPEC shows them on the wire: ARS amounts as
 * decimal text ("1500.00") or JSON numbers, timestamps as ISO 8601 text, rates as numbers.
 */
import { BigDecimal, Either, Option, ParseResult, Schema, SchemaAST } from "effect"
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

/** The JSON number of an ARS amount a client sends, described with its bounds (the OpenAPI document). */
export const ArsInputNumber = Schema.Number.annotations({
  description: `Pesos, at most 2 decimals, at most ${Money.format(Money.maximum("ARS"))}`
})

/**
 * An ARS amount a client sends, 1500.5 ⇄ Money(ARS): `ArsNumber` that is at most the maximum
 * (`Money.fromInput`). `ArsNumber` itself reads stored and answered amounts, which may be sums.
 */
export const ArsInput = Schema.transformOrFail(ArsInputNumber, arsMoney, {
  strict: true,
  decode: (n, _, ast) =>
    Either.mapLeft(Money.fromInput(n, "ARS"), (e) => new ParseResult.Type(ast, n, e.message)),
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

/**
 * A field that may have no value: `null` in the domain, left out on the wire. Encoding omits the
 * key when the value is null (SPEC types these fields as a string or an object, and clients
 * that read them as optional-but-not-nullable reject a `null`); decoding reads a missing key or
 * a `null` as null, so documents stored before the field was omitted, and clients that send
 * `null`, still decode. The JSON Schema (the OpenAPI document) shows the field as optional and
 * not nullable, as it is sent. Fields SPEC itself shows as `null` (a split payment's
 * `hold_until` and `payout_status` before its instruction) stay `Schema.NullOr`.
 */
export const Omittable = <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  Schema.optionalToRequired(
    Schema.NullOr(schema).annotations({ [SchemaAST.SurrogateAnnotationId]: schema.ast }),
    Schema.NullOr(Schema.typeSchema(schema)),
    { decode: Option.getOrNull, encode: Option.fromNullable }
  )

/**
 * `Schema.Class` with its constructor's validator compiled once per class: the constructor of the
 * engine's classes, for the classes of packages that extend it (the sandbox bank's requests).
 */
export { Class } from "./internal/schemaClass.js"

/** A person's or business's name as shown: trimmed, 1-200 characters. */
export const DisplayName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(200, { message: () => "must be at most 200 characters" })
)
