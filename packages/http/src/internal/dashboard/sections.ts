/**
 * What the dashboard's sections share (customers, payouts, webhooks, sandbox, the partner's view):
 * the request as a section reads it (`Ctx`: who acts, where its pages live, the query, the
 * submitted form), what a section answers (`Outcome`: a page or a redirect), and small pieces of
 * markup (tables, pagers, notices, status labels) in es-AR voseo.
 *
 * A section never authenticates: the dashboard's router resolves the session to the principal it
 * acts as (a merchant's own, or a partner's for a merchant that consented), checks the CSRF token
 * of every POST, and hands the section a `Ctx`. Sections read and write through the same core
 * services the API calls, with that principal, on the merchant's clock.
 */
import { type Errors, MerchantClocks, Money, Page, type Principal } from "@cobro/core"
import { type DateTime, type Effect, Either, Option, Schema } from "effect"
import * as Format from "../pages/format.js"
import { html, type Html } from "../pages/html.js"

/** A section's request. */
export interface Ctx {
  /** Who acts: the signed-in merchant, or a partner acting for a merchant that consented. */
  readonly principal: Principal.Principal
  /** The path of this merchant's dashboard, without a trailing slash (`/dashboard`, or a partner's `/dashboard/merchants/{id}`). */
  readonly base: string
  /** The query of the request. */
  readonly query: URLSearchParams
  /** The path parameters of the route. */
  readonly params: Readonly<Record<string, string | undefined>>
  /** The CSRF token the page's forms carry. */
  readonly csrf: string
  /** A field of the submitted form of a POST (its CSRF token already checked); none for a GET. */
  readonly form: (name: string) => string | undefined
  /** Whether the engine runs in sandbox mode. */
  readonly sandbox: boolean
}

/** What a section answers: a page in the dashboard's frame, or a redirect (after a POST). */
export type Outcome =
  | {
      readonly _tag: "Page"
      readonly title: string
      readonly body: Html
      readonly status: number
      /** The navigation entry to mark as current. */
      readonly section: Section
    }
  | { readonly _tag: "Redirect"; readonly location: string }

export type Section = "customers" | "payouts" | "webhooks" | "sandbox" | "partner"

export const page = (section: Section, title: string, body: Html, status = 200): Outcome => ({
  _tag: "Page",
  title,
  body,
  status,
  section
})

export const redirect = (location: string): Outcome => ({ _tag: "Redirect", location })

/** A field of the submitted form, trimmed; undefined when absent. */
export const field = (ctx: Ctx, name: string): string | undefined => ctx.form(name)?.trim()

/** A query parameter, trimmed; undefined when absent or empty. */
export const param = (ctx: Ctx, name: string): string | undefined => {
  const value = ctx.query.get(name)?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** `effect` on the acting merchant's clock (its sandbox test clock, once moved), as the API runs. */
export const onClock =
  (ctx: Ctx) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    MerchantClocks.run(ctx.principal.user_id)(effect)

/** A domain error as one sentence for a person (its key kept for support). */
export const explain = (error: Errors.DomainError): string => `${error.message} (${error.key})`

/** The page of something that does not exist for this principal (another merchant's, or none). */
export const notFound = (section: Section, what: string): Outcome =>
  page(
    section,
    "No encontramos lo que buscás",
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">No encontramos lo que buscás</h1>
      <p>${what}</p>
    </section>`,
    404
  )

/** A notice: `ok` (green), `err` (red) or `info`. */
export const notice = (kind: "ok" | "err" | "info", title: string, text?: string): Html =>
  html`<div class="state ${kind}" role="${kind === "err" ? "alert" : "status"}">
    <strong>${title}</strong>${text === undefined ? "" : html`<p>${text}</p>`}
  </div>`

/** The hidden CSRF field every form carries. */
export const csrfField = (ctx: Ctx): Html =>
  html`<input type="hidden" name="csrf_token" value="${ctx.csrf}" />`

/** A table with a caption and column headers; `rows` already rendered as `<tr>`s. */
export const table = (caption: string, headers: ReadonlyArray<string>, rows: ReadonlyArray<Html>): Html =>
  html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
    <table>
      <caption class="visually-hidden">
        ${caption}
      </caption>
      <thead>
        <tr>
          ${headers.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`

/** "Siguiente página" when there is one. */
export const pager = (next: string | null): Html =>
  next === null
    ? html``
    : html`<nav class="pager" aria-label="Páginas">
        <a class="button" href="${next}">Página siguiente</a>
      </nav>`

/** `path` with `query` (empty values left out). */
export const withQuery = (path: string, query: Record<string, string | undefined>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== "") search.set(key, value)
  const text = search.toString()
  return text === "" ? path : `${path}?${text}`
}

/** A status as a short label with its colour (`ok`, `warn`, `err`). */
export const chip = (label: string, tone: "ok" | "warn" | "err" | "info"): Html =>
  html`<span class="chip ${tone}">${label}</span>`

const encodeCursor = Schema.encodeSync(Page.CursorText)
const decodeCursor = Schema.decodeUnknownOption(Page.CursorText)

/** A page's `next` as the `cursor` query parameter of the next page's link; null on the last page. */
export const cursorText = (next: Option.Option<Page.Cursor>): string | null =>
  Option.match(next, { onNone: () => null, onSome: (c) => encodeCursor(c) })

/** The `cursor` query parameter: none when absent; a malformed one reads as absent (the first page). */
export const cursorOf = (ctx: Ctx): Option.Option<Page.Cursor> =>
  Option.flatMap(Option.fromNullable(param(ctx, "cursor")), decodeCursor)

/** A money amount's decimal text (`"1500.00"`) in pesos, as `$ 1.500,00`. */
export const pesos = (m: Money.Money): string => Format.money(m)

/** Decimal text of `currency` (`"1500.00"`), formatted; the text as is if it does not parse. */
export const amountText = (text: string, currency: Money.Currency): string =>
  Either.match(Money.fromString(text, currency), {
    onLeft: () => `${text} ${currency}`,
    onRight: Format.money
  })

export const when = (t: DateTime.Utc): string => Format.when(t)
