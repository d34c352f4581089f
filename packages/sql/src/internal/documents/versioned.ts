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
import { TrustedCodec } from "@cobro/core/ports"
import { ParseResult, Predicate, Schema } from "effect"

/**
 * A stored document of version 1: an object whose `v` is 1 or absent (rows written before
 * versions), decoded to its fields without `v`, and encoded with `v: 1` first. One check of `v`
 * rather than a struct with an index signature: every read and write of a document passes here,
 * and a schema pass over all its keys cost a measurable part of a request.
 */
const StoredV1 = Schema.transformOrFail(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (stored, _, ast) => {
    if (!Predicate.isRecord(stored))
      return ParseResult.fail(new ParseResult.Type(ast, stored, "a stored document"))
    const { v, ...fields } = stored
    return v === undefined || v === 1
      ? ParseResult.succeed(fields)
      : ParseResult.fail(
          new ParseResult.Type(ast, stored, `a stored document of version 1, not ${String(v)}`)
        )
  },
  encode: (fields) => ParseResult.succeed(storedV1(fields as object))
})

/** The stored form of version 1 of a document's `fields`: `v: 1` first. */
export const storedV1 = <F extends object>(fields: F): { readonly v: 1 } & F => ({ v: 1, ...fields })

/**
 * Version 1 of a document kind: its frozen JSON shape `frozen` (without `v`), decoding into the
 * domain model `domain`, whose encoded form must be exactly that shape (checked by the compiler).
 * While the two are equal the domain's codec validates the stored JSON (once: it is the same
 * shape); `frozen` is what a later mapping decodes version 1 with.
 *
 * `trusted`: the documents are read and written by the domain's codec compiled without its
 * checks (core's `TrustedCodec`), for a kind whose parser is a large part of a request's CPU (a
 * payment, a user): trusted because every stored document was written through it from a domain
 * value of its type (decoded, or built by the engine from typed values). The same schema, so one
 * truth; `validated` stays the checking codec, which the tests compare the trusted one with.
 */
export const v1 = <Fields extends Schema.Struct.Fields, A>(
  frozen: Fields,
  domain: Schema.Schema<A, Schema.Struct.Type<Fields>>,
  mode: "validated" | "trusted" = "validated"
) => {
  const validated = Schema.compose(StoredV1, domain, { strict: false })
  const codec: Schema.Schema<A, unknown> =
    mode === "validated"
      ? validated
      : Schema.transform(StoredV1, Schema.typeSchema(domain), {
          strict: false,
          decode: TrustedCodec.decoder(domain) as (stored: unknown) => A,
          encode: TrustedCodec.encoder(domain)
        })
  return Object.assign(codec, { frozen, validated })
}

/** A key of a stored shape that may be left out (`?: A`). */
export const omittable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true })
