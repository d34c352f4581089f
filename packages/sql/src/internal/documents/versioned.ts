/**
 * Stored documents have a storage shape of their own, versioned, so the wire can change without a
 * migration. Each kind declares the JSON of each storage version by hand (frozen: never derived
 * from the wire classes) and how it decodes into the domain model. Today version 1 is the JSON the
 * wire classes encoded when versions were introduced, plus `v: 1`; rows written before carry no
 * `v` and read as version 1.
 *
 * The rule: a change to the wire never changes a storage shape. When a wire class changes, the
 * `strict` transform below stops compiling for its kind; the kind then maps its version 1 to the
 * new domain model by hand (and back, for writes), or adds a version 2 (a new shape, a decoder for
 * it, writes in it) while version 1 rows keep decoding.
 */
import { Schema } from "effect"

/** The version field: absent in rows written before versions (read as 1), written as 1. */
export const versionOne = Schema.optionalWith(Schema.Literal(1), { default: () => 1 as const })

/**
 * Version 1 of a document kind: its frozen JSON shape `fields` (with `v`), decoding into the
 * domain model `domain`, whose encoded form must be exactly that shape (checked by the compiler).
 */
export const v1 = <Fields extends Schema.Struct.Fields, A>(
  fields: Fields,
  domain: Schema.Schema<A, Schema.Struct.Type<Fields>>
) =>
  Schema.transform(Schema.Struct({ v: versionOne, ...fields }), domain, {
    // The types are checked at `domain` above: its encoded form is exactly `fields`' type.
    strict: false,
    decode: (stored) => {
      const { v: _, ...wire } = stored as unknown as { readonly v: 1 }
      return wire
    },
    encode: (wire) => ({ v: 1 as const, ...(wire as object) })
  })

/** A key of a stored shape that may be left out (`?: A`). */
export const omittable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true })
