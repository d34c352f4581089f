/**
 * What the route groups' declarations share: the `Idempotency-Key` header, request body examples
 * and the error bodies every route declares.
 */
import { Page } from "@cobro/core"
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

// ---------------------------------------------------------------------------------------------
// Keyset pages

/** The query of a paginated list: `limit` (1–100, default 50) and the previous page's `next_cursor`. */
export const PageParams = {
  limit: Schema.optional(Page.Limit),
  cursor: Schema.optional(Page.CursorText)
}

/** A page of `field`, newest first, and `next_cursor` when another page follows (absent on the last). */
export const PageOf = <const F extends string, S extends Schema.Schema.Any>(field: F, item: S) =>
  Schema.Struct({
    ...({ [field]: Schema.Array(item) } as { readonly [K in F]: Schema.Array$<S> }),
    next_cursor: Schema.optional(Page.CursorText)
  })

/** `page` as `PageOf`'s fields: its items under `field`, its cursor when there is one. */
export const pageOf = <const F extends string, A>(field: F, page: Page.Page<A>) =>
  ({
    [field]: page.items,
    ...Option.match(page.next, { onNone: () => ({}), onSome: (next_cursor) => ({ next_cursor }) })
  }) as { readonly [K in F]: ReadonlyArray<A> } & { readonly next_cursor?: Page.Cursor }
