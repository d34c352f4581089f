import { describe, expect, it } from "@effect/vitest"
import { DateTime, Equal, Hash, ParseResult, Schema } from "effect"
import { Class } from "../src/internal/schemaClass.js"
import { Money, Payment } from "../src/index.js"

class Refined extends Class<Refined>("Refined")(
  Schema.Struct({ low: Schema.Number, high: Schema.Number }).pipe(
    Schema.filter((r) => r.low <= r.high || "low must not exceed high")
  )
) {}

class WithTransform extends Class<WithTransform>("WithTransform")({
  at: Schema.DateTimeUtc,
  count: Schema.Int
}) {}

describe("Class (Schema.Class with its validator compiled once)", () => {
  it("validates every construction like Schema.Class, again and again", () => {
    const at = DateTime.unsafeMake(0)
    for (let i = 0; i < 3; i++) {
      expect(new WithTransform({ at, count: i }).count).toBe(i)
      expect(() => new WithTransform({ at, count: 1.5 })).toThrow(ParseResult.ParseError)
      expect(() => new WithTransform({ at: "1970-01-01" as never, count: 1 })).toThrow(/DateTime/)
    }
  })

  it("keeps the refinement of a class declared with a refined struct", () => {
    expect(new Refined({ low: 1, high: 2 }).high).toBe(2)
    expect(() => new Refined({ low: 3, high: 2 })).toThrow(/low must not exceed high/)
  })

  it("skips validation only when asked, as Schema.Class does", () => {
    expect(new WithTransform({ at: DateTime.unsafeMake(0), count: 1.5 }, true).count).toBe(1.5)
    expect(
      new WithTransform({ at: DateTime.unsafeMake(0), count: 1.5 }, { disableValidation: true }).count
    ).toBe(1.5)
  })

  it("builds instances that decode, encode and compare like Effect's", () => {
    const m = Money.make(150n, "ARS")
    expect(m).toBeInstanceOf(Money.Money)
    expect(() => new Money.Money({ minor: 1 as never, currency: "ARS" })).toThrow(ParseResult.ParseError)
    const decoded = Schema.decodeUnknownSync(WithTransform)({ at: "1970-01-01T00:00:00.000Z", count: 2 })
    expect(decoded).toBeInstanceOf(WithTransform)
    expect(Schema.encodeSync(WithTransform)(decoded)).toEqual({ at: "1970-01-01T00:00:00.000Z", count: 2 })
    expect(Schema.is(Payment.Tax)(m)).toBe(false)
  })

  it("builds the instance Effect's constructor builds: own properties, prototype, equality", () => {
    class Effects extends Schema.Class<Effects>("Effects")({ at: Schema.DateTimeUtc, count: Schema.Int }) {}
    const props = { at: DateTime.unsafeMake(0), count: 2 }
    const checked = new WithTransform(props)
    const unchecked = new WithTransform(props, true)
    expect(Object.entries(checked)).toEqual(Object.entries(new Effects(props)))
    expect(Object.getPrototypeOf(checked)).toBe(WithTransform.prototype)
    expect(unchecked).not.toBe(props)
    expect(Equal.equals(checked, unchecked)).toBe(true)
    expect(Hash.hash(checked)).toBe(Hash.hash(unchecked))
    expect(Equal.equals(checked, new WithTransform({ ...props, count: 3 }))).toBe(false)
    expect(WithTransform.make(props)).toEqual(checked)
    expect(() => (WithTransform as unknown as (p: unknown) => unknown)(props)).toThrow(TypeError)
  })
})
