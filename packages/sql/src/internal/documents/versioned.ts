/**
 * Stored documents have a storage shape of their own, versioned, so the wire can change without a
 * migration. Each kind declares the JSON of each storage version by hand (frozen: never derived
 * from the wire classes) and how it decodes into the domain model. Version 1 is the JSON the wire
 * classes encoded when versions were introduced, plus `v: 1`; rows written before carry no `v`
 * and read as version 1.
 *
 * The rule: a change to the wire never changes a storage shape. `v1` requires the domain's
 * encoded form to be exactly the frozen shape, so when a wire class changes its kind stops
 * compiling; the kind then maps version 1 to the new model by hand (a transform from
 * `Schema.Struct(frozen)` to the domain, and back for writes), or adds a version 2 (a new frozen
 * shape, a decoder for it, writes in it) while version 1 rows keep decoding.
 */
import { Schema } from "effect"

/** The version field: absent in rows written before versions (read as 1), written as 1. */
export const versionOne = Schema.optionalWith(Schema.Literal(1), { default: () => 1 as const })

/** A stored document of version 1: `v` (or none) and its fields, left to the kind's decoder. */
const StoredV1 = Schema.Struct(
  { v: versionOne },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/**
 * Version 1 of a document kind: its frozen JSON shape `frozen` (without `v`), decoding into the
 * domain model `domain`, whose encoded form must be exactly that shape (checked by the compiler).
 * While the two are equal the domain's codec validates the stored JSON (once: it is the same
 * shape); `frozen` is what a later mapping decodes version 1 with.
 */
export const v1 = <Fields extends Schema.Struct.Fields, A>(
  frozen: Fields,
  domain: Schema.Schema<A, Schema.Struct.Type<Fields>>
) =>
  Object.assign(
    Schema.transform(StoredV1, domain, {
      strict: false,
      decode: ({ v: _, ...wire }) => wire,
      encode: (wire) => ({ v: 1 as const, ...(wire as object) })
    }),
    { frozen }
  )

/** A key of a stored shape that may be left out (`?: A`). */
export const omittable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true })
