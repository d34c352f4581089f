/**
 * Keyset pages of a list read newest first, as the paginated routes answer them: a page of at
 * most `limit` items and, when more follow, an opaque `next_cursor` to ask for the next page.
 * The cursor is the position of the page's last item — its creation time and id — so a page is
 * one index range read whatever the list's length, and items created while a client pages
 * never shift the pages it has yet to read.
 */
import { DateTime, Effect, Either, Encoding, Option, ParseResult, Schema } from "effect"
import { InvalidInput } from "./Errors.js"

/** A position in a list ordered by creation time, then id (both descending when newest first). */
export interface Cursor {
  readonly creation_timestamp: DateTime.Utc
  readonly id: string
}

export const defaultLimit = 50
export const maxLimit = 100

/** The `limit` query parameter: an integer 1–100 as text; `defaultLimit` when absent. */
export const Limit = Schema.compose(
  Schema.String.annotations({ description: `Items per page, 1-${maxLimit} (default ${defaultLimit})` }),
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => "must be a whole number" }),
    Schema.between(1, maxLimit, { message: () => `must be between 1 and ${maxLimit}` })
  )
)

/** `limit` when it is a whole number from 1 to `maxLimit` (the services' own check, for embedders). */
export const checkLimit = (limit: number = defaultLimit): Effect.Effect<number, InvalidInput> =>
  Number.isInteger(limit) && limit >= 1 && limit <= maxLimit
    ? Effect.succeed(limit)
    : Effect.fail(InvalidInput.of("limit", `must be a whole number from 1 to ${maxLimit}, got ${limit}`))

const CursorJson = Schema.parseJson(Schema.Tuple(Schema.Number, Schema.String))

const invalid = (ast: Schema.Schema.Any["ast"], value: string) =>
  new ParseResult.Type(ast as never, value, "is not a cursor this API issued (use next_cursor as given)")

/**
 * The `cursor` query parameter and `next_cursor` field: base64url text of the last item's
 * creation time (epoch milliseconds) and id. Clients treat it as opaque.
 */
export const CursorText = Schema.transformOrFail(
  Schema.String.annotations({
    description: "An opaque page position: a page's next_cursor, sent back as given for the next page"
  }),
  Schema.Struct({ creation_timestamp: Schema.DateTimeUtcFromSelf, id: Schema.String }),
  {
    strict: true,
    decode: (text, _, ast) => {
      const decoded = Encoding.decodeBase64UrlString(text)
      if (Either.isLeft(decoded)) return ParseResult.fail(invalid(ast, text))
      const parsed = Schema.decodeUnknownOption(CursorJson)(decoded.right)
      if (Option.isNone(parsed)) return ParseResult.fail(invalid(ast, text))
      const [millis, id] = parsed.value
      const at = DateTime.make(millis)
      if (!Number.isSafeInteger(millis) || Option.isNone(at) || id.length === 0 || id.length > 200) {
        return ParseResult.fail(invalid(ast, text))
      }
      return ParseResult.succeed({ creation_timestamp: DateTime.toUtc(at.value), id })
    },
    encode: (cursor) =>
      ParseResult.succeed(
        Encoding.encodeBase64Url(
          JSON.stringify([DateTime.toEpochMillis(cursor.creation_timestamp), cursor.id])
        )
      )
  }
)

/** One page: its items, newest first, and the cursor of the next page when there is one. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next: Option.Option<Cursor>
}

/**
 * The page of `limit` items out of `rows`, read with one row more than `limit` to learn whether
 * another page follows; its cursor is the last item's position (`positionOf`).
 */
export const fromRows = <A>(rows: ReadonlyArray<A>, limit: number, positionOf: (a: A) => Cursor): Page<A> => {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return {
    items,
    next: rows.length > limit && last !== undefined ? Option.some(positionOf(last)) : Option.none()
  }
}

/** Orders newest first: by creation time descending, then id descending (byte-wise). */
export const newestFirst = (a: Cursor, b: Cursor): number => {
  const ta = DateTime.toEpochMillis(a.creation_timestamp)
  const tb = DateTime.toEpochMillis(b.creation_timestamp)
  if (ta !== tb) return tb - ta
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1
}

/** Whether `item` comes after `cursor` in a newest-first list (strictly older, or same time and smaller id). */
export const isAfter = (item: Cursor, cursor: Cursor): boolean => newestFirst(cursor, item) < 0
