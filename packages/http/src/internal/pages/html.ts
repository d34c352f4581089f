/**
 * The smallest HTML template that is safe by construction: `html\`…\`` escapes every
 * interpolated value unless it is itself `Html` (the result of another `html` template), so a
 * merchant's motive or a partner's name can never become markup. `raw` marks module constants
 * (the stylesheet, the page scripts) as trusted; it must never receive request or stored data.
 */

const HtmlTypeId: unique symbol = Symbol.for("@cobro/http/Html")

/** Markup that is already safe to emit. */
export interface Html {
  readonly [HtmlTypeId]: true
  readonly value: string
}

/** What may be interpolated: text is escaped, `Html` is kept, `false`/`null`/`undefined` render nothing. */
export type Interpolation =
  Html | string | number | bigint | false | null | undefined | ReadonlyArray<Interpolation>

const make = (value: string): Html => ({ [HtmlTypeId]: true, value })

const isHtml = (u: unknown): u is Html => typeof u === "object" && u !== null && HtmlTypeId in u

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;"
}

/** Text made safe for element content and quoted attribute values. */
export const escape = (text: string): string => text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!)

const render = (value: Interpolation): string => {
  if (value === false || value === null || value === undefined) return ""
  if (isHtml(value)) return value.value
  if (Array.isArray(value)) return value.map(render).join("")
  return escape(String(value))
}

export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return make(out)
}

/** Trusted markup: only for constants written in this package. */
export const raw = (trusted: string): Html => make(trusted)

/** The `http:`/`https:` URL in `url`, or null: anything else (`javascript:`, relative) is never linked. */
export const safeHttpUrl = (url: string | null | undefined): string | null => {
  if (url === null || url === undefined || !URL.canParse(url)) return null
  const parsed = new URL(url)
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.toString() : null
}
