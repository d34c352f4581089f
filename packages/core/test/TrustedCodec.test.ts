/**
 * `TrustedCodec` answers what the schema's own encode and decode answer, for the shapes of schema
 * it compiles (structs with optional, renamed and defaulted keys, unions told by kind and by
 * guard, arrays, classes, transformations) and the ones it leaves to the schema's parser (index
 * signatures, declarations whose type parameters convert, tuples with elements).
 */
import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import * as TrustedCodec from "../src/TrustedCodec.js"

class Item extends Schema.Class<Item>("Item")({
  at: Schema.DateTimeUtc,
  count: Schema.NumberFromString,
  note: Schema.optionalWith(Schema.String, { nullable: true })
}) {}

const Shape = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(2)),
  renamed: Schema.propertySignature(Schema.Number).pipe(Schema.fromKey("renamed_key")),
  withDefault: Schema.optionalWith(Schema.NumberFromString, { default: () => 7 }),
  kind: Schema.Union(
    Schema.Literal("a"),
    Schema.Struct({ tag: Schema.Literal("x"), n: Schema.NumberFromString }),
    Schema.Struct({ tag: Schema.Literal("y"), s: Schema.String })
  ),
  either: Schema.Union(Schema.Number, Schema.NumberFromString),
  items: Schema.Array(Item),
  maybe: Schema.NullOr(Item),
  extra: Schema.Record({ key: Schema.String, value: Schema.NumberFromString }),
  option: Schema.OptionFromSelf(Schema.NumberFromString),
  pair: Schema.Tuple(Schema.String, Schema.NumberFromString)
})

const encoded: Array<typeof Shape.Encoded> = [
  {
    id: "id-1",
    renamed_key: 1,
    kind: "a",
    either: 3,
    items: [],
    maybe: null,
    extra: {},
    option: Option.none(),
    pair: ["p", "1"]
  },
  {
    id: "id-2",
    renamed_key: 2,
    withDefault: "9",
    kind: { tag: "y", s: "why" },
    either: "4",
    items: [
      { at: "2026-11-25T04:42:26.935Z", count: "3", note: "n" },
      { at: "2026-11-25T04:42:26.935Z", count: "4", note: null }
    ],
    maybe: { at: "2026-11-25T04:42:26.935Z", count: "5" },
    extra: { k: "1.5" },
    option: Option.some("6"),
    pair: ["q", "2"]
  },
  {
    id: "id-3",
    renamed_key: 3,
    kind: { tag: "x", n: "8" },
    either: 5,
    items: [],
    maybe: null,
    extra: { a: "1", b: "2" },
    option: Option.none(),
    pair: ["r", "3"]
  }
]

describe("TrustedCodec", () => {
  const decode = TrustedCodec.decoder(Shape)
  const encode = TrustedCodec.encoder(Shape)
  for (const [i, input] of encoded.entries()) {
    it(`decodes and encodes as the schema does: case ${i + 1}`, () => {
      const expected = Schema.decodeSync(Shape)(input)
      const read = decode(input)
      expect(read).toEqual(expected)
      expect(read.items.every((item) => item instanceof Item)).toBe(true)
      expect(encode(expected)).toStrictEqual(Schema.encodeSync(Shape)(expected))
      expect(JSON.stringify(encode(read))).toBe(JSON.stringify(Schema.encodeSync(Shape)(expected)))
    })
  }

  it("does not check: a value the schema refuses is converted as it stands", () => {
    const bad = { ...Schema.decodeSync(Shape)(encoded[0]!), id: "x" }
    expect(() => Schema.encodeSync(Shape)(bad)).toThrow()
    expect(encode(bad).id).toBe("x")
  })
})
