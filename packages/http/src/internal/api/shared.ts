/**
 * What the route groups' declarations share: the `Idempotency-Key` header, request body examples
 * and the error bodies every route declares.
 */
import { Option, Schema } from "effect"
import { envelopeError, statusError, statuses } from "../../ApiError.js"

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})

// ---------------------------------------------------------------------------------------------
// Request body examples

/**
 * The payload schema with the request body the API reference shows and its "Try it" sends,
 * written as on the wire. The example is decoded with the schema itself (the document carries
 * it encoded again): an example the schema refuses is left out rather than published, and
 * `test/openapi.test.ts` fails on every request body without a valid example.
 */
export const withExample = <A, I>(schema: Schema.Schema<A, I>, example: NoInfer<I>): Schema.Schema<A, I> => {
  const decoded = Schema.decodeUnknownOption(schema)(example)
  return Option.isSome(decoded) ? schema.annotations({ examples: [decoded.value] }) : schema
}

// ---------------------------------------------------------------------------------------------
// Errors: every status a route can answer with, in the route's envelope

/** The `{message, error, code, data}` error bodies, one member per status. */
export const EnvelopeErrors = Schema.Union(...statuses.map(envelopeError))

/** The `{status, error, message, data}` error bodies of partner and account routes. */
export const StatusErrors = Schema.Union(...statuses.map(statusError))
