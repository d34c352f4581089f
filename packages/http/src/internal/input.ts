/**
 * Text no store can keep as it was sent, refused at the edge whatever the route and the field.
 *
 * - A NUL (`U+0000`): Postgres text columns refuse it ("invalid byte sequence for encoding UTF8:
 *   0x00"), so the request failed with a 500 on Postgres and went through on SQLite and memory.
 * - A lone surrogate (`\ud800` in JSON): not a Unicode character; node-postgres and better-sqlite3
 *   encode it as `U+FFFD`, so the stores would keep another text than the one sent (and memory
 *   the original).
 *
 * The path is also checked here, before routing: its percent-encoding must be valid UTF-8 (the
 * router cannot match a path it cannot decode), and a path parameter of the API is always an
 * identifier: no control character, at most `MAX_PARAM_LENGTH` characters.
 */
import { Option } from "effect"

/** The longest path parameter (an id is at most 256 characters, `Ids.MAX_ID_LENGTH`). */
export const MAX_PARAM_LENGTH = 256

// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/
/** A surrogate half without its other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Why `s` cannot be stored as sent, if it cannot. */
export const unstorable = (s: string): Option.Option<string> =>
  s.includes("\u0000")
    ? Option.some("must not contain a NUL character (U+0000)")
    : LONE_SURROGATE.test(s)
      ? Option.some("must not contain a lone UTF-16 surrogate (not a Unicode character)")
      : Option.none()

export interface Refusal {
  /** The offending input: a dotted path into the body, a query or path parameter name, or `path`. */
  readonly field: string
  readonly detail: string
}

/** JSON text that may hold a NUL or a surrogate: only as `\u` escapes (raw bytes decode to U+FFFD). */
const SUSPECT_ESCAPE = /\\u(?:0000|d[89a-f])/i

/**
 * The first string of a JSON body (a key or a value) that cannot be stored, with its path
 * (`payouts.0.account_id`, as decode errors name fields). `None` when there is none or the text is
 * not JSON (the route answers that as a malformed body).
 */
export const refuseJson = (text: string): Option.Option<Refusal> => {
  if (!SUSPECT_ESCAPE.test(text)) return Option.none()
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Option.none()
  }
  return walk(value, [])
}

const walk = (value: unknown, path: ReadonlyArray<string>): Option.Option<Refusal> => {
  const at = (detail: string, field: ReadonlyArray<string>) =>
    ({ field: field.length === 0 ? "body" : field.join("."), detail }) satisfies Refusal
  if (typeof value === "string") return Option.map(unstorable(value), (detail) => at(detail, path))
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], [...path, String(i)])
      if (Option.isSome(found)) return found
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const bad = unstorable(key)
      if (Option.isSome(bad)) return Option.some(at(`has a key that ${bad.value}`, path))
      const found = walk(item, [...path, key])
      if (Option.isSome(found)) return found
    }
  }
  return Option.none()
}

/** The first query parameter (name or value) that cannot be stored. */
export const refuseQuery = (search: string): Option.Option<Refusal> => {
  if (search === "") return Option.none()
  for (const [name, value] of new URLSearchParams(search)) {
    const badName = unstorable(name)
    if (Option.isSome(badName))
      return Option.some({ field: "query", detail: `a parameter name ${badName.value}` })
    const bad = unstorable(value)
    if (Option.isSome(bad)) return Option.some({ field: name, detail: bad.value })
  }
  return Option.none()
}

/** `decodeURIComponent`, or `None` for a malformed escape or one that is not UTF-8. */
const decodeSegment = (segment: string): Option.Option<string> => {
  try {
    return Option.some(decodeURIComponent(segment))
  } catch {
    return Option.none()
  }
}

/**
 * What is wrong with the path of `url`, if anything. `params` names the parameters of the API
 * route the path matches (segment index → name), to name the field; a path of no API route is
 * only checked for its encoding (field `path`).
 */
export const refusePath = (
  url: string,
  params: ReadonlyMap<number, string> | undefined
): Option.Option<Refusal> => {
  const path = url.split("?")[0] ?? url
  const segments = path.split("/")
  for (let i = 0; i < segments.length; i++) {
    const raw = segments[i]!
    const name = params?.get(i)
    const decoded = decodeSegment(raw)
    if (Option.isNone(decoded)) {
      return Option.some({
        field: name ?? "path",
        detail: "the path is not valid percent-encoded UTF-8 (a '%' must start an escape such as %2F)"
      })
    }
    if (name === undefined) continue
    if (CONTROL.test(decoded.value)) {
      return Option.some({ field: name, detail: "must not contain control characters" })
    }
    if (decoded.value.length > MAX_PARAM_LENGTH) {
      return Option.some({ field: name, detail: `must be at most ${MAX_PARAM_LENGTH} characters` })
    }
  }
  return Option.none()
}
