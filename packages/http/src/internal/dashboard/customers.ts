/**
 * The dashboard's customers: the merchant's customers (each with its own CVU and alias) and one
 * customer's page with its balance and its transactions, newest first, paged. Read through
 * `Customers` with the acting principal's merchant, as `GET /customers` and
 * `GET /customers/{id}/transactions` read them: another merchant's customer is not found.
 */
import { type Customer, Customers } from "@cobro/core"
import { Chunk, Effect, Either, Stream } from "effect"
import { html } from "../pages/html.js"
import * as V from "./sections.js"

/** Customers per page of the list. */
export const PAGE_SIZE = 50
/** The most of the list a page may skip to (the list is read in order up to its page). */
const MAX_OFFSET = 100_000

export const make = Effect.gen(function* () {
  const customers = yield* Customers.Customers

  const list = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const offsetText = V.param(ctx, "desde") ?? "0"
        const offset = /^\d{1,6}$/.test(offsetText) ? Math.min(Number(offsetText), MAX_OFFSET) : 0
        const owner = ctx.principal.user_id
        const rows = yield* Effect.either(
          Stream.runCollect(Stream.take(Stream.drop(customers.list(owner, owner), offset), PAGE_SIZE + 1))
        )
        if (Either.isLeft(rows)) return V.notFound("customers", V.explain(rows.left))
        const all = Chunk.toReadonlyArray(rows.right)
        const shown = all.slice(0, PAGE_SIZE)
        const next =
          all.length > PAGE_SIZE
            ? V.withQuery(`${ctx.base}/customers`, { desde: String(offset + PAGE_SIZE) })
            : null
        return V.page(
          "customers",
          "Clientes",
          html`<section class="card" aria-labelledby="title">
            <h1 id="title">Clientes</h1>
            <p class="muted">
              Cada cliente tiene su CVU y su alias fijos: lo que te transfiere se acredita en su saldo.
            </p>
            ${
              shown.length === 0
                ? html`<p>Todavía no tenés clientes. Los creás con <code>POST /customers</code>.</p>`
                : V.table(
                    "Tus clientes",
                    ["Cliente", "CVU", "Alias", "Saldo", "Alta"],
                    shown.map(
                      (c) =>
                        html`<tr>
                          <td>
                            <a href="${ctx.base}/customers/${encodeURIComponent(c.customer_id)}">${c.name}</a>
                          </td>
                          <td class="mono">${c.bank_info.cvu}</td>
                          <td class="mono">${c.bank_info.alias}</td>
                          <td class="num">${V.pesos(c.balance)}</td>
                          <td>${V.when(c.creation_timestamp)}</td>
                        </tr>`
                    )
                  )
            }
            ${V.pager(next)}
          </section>`
        )
      })
    )

  const transactionRow = (t: Customer.CustomerTransaction) =>
    html`<tr>
      <td>${V.when(t.creation_timestamp)}</td>
      <td class="num">${V.pesos(t.amount)}</td>
      <td class="num">${V.pesos(t.credited_amount)}</td>
      <td>${t.sender_name}<br /><span class="muted mono">CUIT ${t.sender_cuit}</span></td>
      <td class="mono">${t.bank_transaction_id}</td>
    </tr>`

  const detail = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const id = ctx.params["customerId"] ?? ""
        const owner = ctx.principal.user_id
        const found = yield* Effect.either(customers.get(owner, id as Customer.CustomerId))
        if (Either.isLeft(found)) return V.notFound("customers", "No tenés un cliente con ese identificador.")
        const c = found.right
        const page = yield* Effect.either(
          customers.listTransactions(owner, c.customer_id, V.cursorOf(ctx), 50)
        )
        if (Either.isLeft(page)) return V.notFound("customers", V.explain(page.left))
        const next = V.cursorText(page.right.next)
        const path = `${ctx.base}/customers/${encodeURIComponent(c.customer_id)}`
        return V.page(
          "customers",
          `Cliente ${c.name}`,
          html`<section class="card" aria-labelledby="title">
              <p class="eyebrow">Cliente</p>
              <h1 id="title">${c.name}</h1>
              <dl>
                <div class="field">
                  <dt>Saldo</dt>
                  <dd>${V.pesos(c.balance)}</dd>
                </div>
                <div class="field">
                  <dt>CVU</dt>
                  <dd>${c.bank_info.cvu}</dd>
                </div>
                <div class="field">
                  <dt>Alias</dt>
                  <dd>${c.bank_info.alias}</dd>
                </div>
                <div class="field">
                  <dt>Identificador</dt>
                  <dd>${c.customer_id}</dd>
                </div>
                ${
                  c.contact === null
                    ? ""
                    : html`<div class="field">
                        <dt>Correo de contacto</dt>
                        <dd>${c.contact.email}</dd>
                      </div>`
                }
                <div class="field">
                  <dt>Alta</dt>
                  <dd>${V.when(c.creation_timestamp)}</dd>
                </div>
              </dl>
            </section>
            <section class="card" aria-labelledby="transactions">
              <h2 id="transactions">Transacciones</h2>
              ${
                page.right.items.length === 0
                  ? html`<p>Este cliente todavía no recibió transferencias.</p>`
                  : V.table(
                      `Transacciones de ${c.name}`,
                      ["Fecha", "Monto", "Acreditado", "Quién transfirió", "Referencia del banco"],
                      page.right.items.map(transactionRow)
                    )
              }
              <p class="actions">
                <a class="button" href="${path}/transactions/export.csv" download
                  >Exportar transacciones (CSV)</a
                >
              </p>
              ${V.pager(next === null ? null : V.withQuery(path, { cursor: next }))}
            </section>`
        )
      })
    )

  return { list, detail } as const
})
