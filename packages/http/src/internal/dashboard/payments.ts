/**
 * `GET /dashboard/payments`: the merchant's payments, newest first, 25 a page, with filters by
 * state, creation dates (Buenos Aires days) and text (the external id, the payment id or the
 * payer's CUIT, exact). Read through `Payments.list` (the API's list, owner-checked), as a stream
 * folded into the page: memory holds one page whatever the merchant has. The cursor `before` is
 * the last shown payment (`<epoch ms>~<payment id>`): the next page is what comes before it.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { MerchantClocks, Payment, Payments } from "@cobro/core"
import { DateTime, Effect, Option, Schema, Stream } from "effect"
import { html } from "../pages/html.js"
import type { DashboardKit } from "./kit.js"
import { PATH } from "./kit.js"
import * as View from "./view.js"

export const PAGE_SIZE = 25

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** The start of a Buenos Aires day (UTC−3) in UTC, or none when `text` is not a date. */
export const dayStart = (text: string | undefined): Option.Option<DateTime.Utc> =>
  text !== undefined && DAY.test(text) ? DateTime.make(`${text}T03:00:00.000Z`) : Option.none()

export interface Filters {
  readonly status: Payment.PaymentStatus | undefined
  readonly from: string | undefined
  readonly to: string | undefined
  readonly q: string | undefined
  readonly before: { readonly at: number; readonly id: string } | undefined
}

export const filtersOf = (search: URLSearchParams): Filters => {
  const status = search.get("status") ?? ""
  const before = /^(\d{1,15})~(.{1,300})$/.exec(search.get("before") ?? "")
  const text = (search.get("q") ?? "").trim()
  return {
    status: Schema.is(Payment.PaymentStatus)(status) ? status : undefined,
    from: DAY.test(search.get("from") ?? "") ? search.get("from")! : undefined,
    to: DAY.test(search.get("to") ?? "") ? search.get("to")! : undefined,
    q: text === "" ? undefined : text.slice(0, 200),
    before: before === null ? undefined : { at: Number(before[1]), id: before[2]! }
  }
}

const digits = (text: string) => text.replace(/[^0-9]/g, "")

/** Whether `payment` matches the text: its external id, its id, or a sender's CUIT. */
export const matchesText = (payment: Payment.Payment, q: string): boolean => {
  if (payment.external_id === q || payment.id === q) return true
  const cuit = digits(q)
  return (
    cuit.length === 11 &&
    payment.transactions.some((t) => digits(t.transaction_data.PROCESSED.senderCuit) === cuit)
  )
}

const isBefore = (payment: Payment.Payment, before: Filters["before"]) => {
  if (before === undefined) return true
  const at = DateTime.toEpochMillis(payment.creation_timestamp)
  return at < before.at || (at === before.at && payment.id < before.id)
}

export const cursorOf = (payment: Payment.Payment) =>
  `${DateTime.toEpochMillis(payment.creation_timestamp)}~${payment.id}`

/** The CSV export of the list as filtered (every page, not only the one shown). */
const exportHref = (filters: Filters) => {
  const params = new URLSearchParams()
  if (filters.status !== undefined) params.set("status", filters.status)
  if (filters.from !== undefined) params.set("from", filters.from)
  if (filters.to !== undefined) params.set("to", filters.to)
  if (filters.q !== undefined) params.set("q", filters.q)
  const query = params.toString()
  return `${PATH}/payments/export.csv${query === "" ? "" : `?${query}`}`
}

const hrefWith = (filters: Filters, before: string | undefined) => {
  const params = new URLSearchParams()
  if (filters.status !== undefined) params.set("status", filters.status)
  if (filters.from !== undefined) params.set("from", filters.from)
  if (filters.to !== undefined) params.set("to", filters.to)
  if (filters.q !== undefined) params.set("q", filters.q)
  if (before !== undefined) params.set("before", before)
  const query = params.toString()
  return `${PATH}/payments${query === "" ? "" : `?${query}`}`
}

export const make = (dash: DashboardKit) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments

    /** One page, newest first, and whether older payments match too. */
    const pageOf = (user: Payment.Payment["user_id"], filters: Filters) => {
      const start = dayStart(filters.from)
      const endDay = dayStart(filters.to)
      const end = Option.map(endDay, (d) => DateTime.subtract(DateTime.add(d, { days: 1 }), { millis: 1 }))
      const cursorEnd =
        filters.before === undefined ? Option.none() : Option.some(DateTime.unsafeMake(filters.before.at))
      const upTo = Option.isSome(cursorEnd)
        ? Option.isSome(end) && DateTime.lessThan(end.value, cursorEnd.value)
          ? end
          : cursorEnd
        : end
      return payments
        .list(user, {
          user_id: user,
          ...(Option.isSome(start) ? { start_date: start.value } : {}),
          ...(Option.isSome(upTo) ? { end_date: upTo.value } : {})
        })
        .pipe(
          Stream.filter(
            (p) =>
              (filters.status === undefined || p.payment_status === filters.status) &&
              (filters.q === undefined || matchesText(p, filters.q)) &&
              isBefore(p, filters.before)
          ),
          // Oldest first: keep the newest PAGE_SIZE + 1 (the one more says an older page exists).
          Stream.runFold([] as Array<Payment.Payment>, (kept, p) => {
            kept.push(p)
            if (kept.length > PAGE_SIZE + 1) kept.shift()
            return kept
          }),
          Effect.map((kept) => {
            const newestFirst = kept.slice().reverse()
            return { shown: newestFirst.slice(0, PAGE_SIZE), more: newestFirst.length > PAGE_SIZE }
          })
        )
    }

    const list = dash.merchantPage((session) =>
      MerchantClocks.run(session.principal.user_id)(
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const search = new URL(request.url, "http://x").searchParams
          const filters = filtersOf(search)
          const page = yield* Effect.orDie(pageOf(session.principal.user_id, filters))
          const last = page.shown.at(-1)
          const option = (value: string, label: string) =>
            html`<option value="${value}" ${filters.status === value ? html`selected` : ""}>${label}</option>`
          return dash.shell(session, {
            title: "Pagos",
            section: "payments",
            body: html`<h1>Pagos</h1>
              <form class="card filters" method="get" action="${PATH}/payments" role="search">
                <div>
                  <label for="q">Buscar</label>
                  <input id="q" name="q" type="search" value="${filters.q ?? ""}" aria-describedby="q-hint" />
                  <p class="hint" id="q-hint">ID externo, ID del pago o CUIT de quien pagó.</p>
                </div>
                <div>
                  <label for="status">Estado</label>
                  <select id="status" name="status">
                    ${option("", "Todos")}
                    ${Payment.PaymentStatus.literals.map((s) => option(s, View.STATUS_LABELS[s]))}
                  </select>
                </div>
                <div>
                  <label for="from">Desde</label>
                  <input id="from" name="from" type="date" value="${filters.from ?? ""}" />
                </div>
                <div>
                  <label for="to">Hasta</label>
                  <input id="to" name="to" type="date" value="${filters.to ?? ""}" />
                </div>
                <div><button type="submit">Filtrar</button></div>
              </form>
              <section class="card" aria-labelledby="results-title">
                <h2 id="results-title">
                  ${filters.before === undefined ? "Resultados" : "Resultados anteriores"}
                </h2>
                ${View.paymentsTable(page.shown, "Pagos")}
                <p class="actions">
                  <a class="button" href="${exportHref(filters)}" download
                    >Exportar CSV (con estos filtros)</a
                  >
                </p>
                <nav class="pager" aria-label="Páginas">
                  ${
                    filters.before === undefined
                      ? html`<span></span>`
                      : html`<a href="${hrefWith(filters, undefined)}">Más recientes</a>`
                  }
                  ${
                    page.more && last !== undefined
                      ? html`<a href="${hrefWith(filters, cursorOf(last))}">Anteriores</a>`
                      : ""
                  }
                </nav>
              </section>`
          })
        })
      )
    )

    return { list }
  })
