/**
 * The dashboard's payouts: the money that left the merchant's balance, one list merged from every
 * source (`Balances.payouts`, as `GET /users/{id}/payouts` reads it): schedule sweeps, split
 * payouts and refunds, each with its state, its destination and the bank's reference. Filtered by
 * kind, paged newest first.
 */
import { Balances, type MerchantMoney } from "@cobro/core"
import { Effect, Either, Option } from "effect"
import { html, type Html } from "../pages/html.js"
import * as V from "./sections.js"

const KINDS: ReadonlyArray<readonly [MerchantMoney.PayoutKind, string]> = [
  ["schedule", "Barridos programados"],
  ["split", "Pagos divididos"],
  ["refund", "Devoluciones"]
]

const kindLabel = (kind: MerchantMoney.PayoutKind): string => KINDS.find(([k]) => k === kind)?.[1] ?? kind

const STATUS: Record<MerchantMoney.PayoutStatus, readonly [string, "ok" | "warn" | "err"]> = {
  PENDING: ["En curso", "warn"],
  SUCCESS: ["Enviado", "ok"],
  FAILED: ["Falló", "err"]
}

/** The kind in the query, or none (every kind); anything else reads as none. */
export const kindOf = (text: string | undefined): Option.Option<MerchantMoney.PayoutKind> =>
  Option.fromNullable(KINDS.find(([k]) => k === text)?.[0])

export const make = Effect.gen(function* () {
  const balances = yield* Balances.Balances

  const origin = (ctx: V.Ctx, p: MerchantMoney.MerchantPayout): Html =>
    p.payment_id !== undefined
      ? html`cobro <a href="${ctx.base}/payments/${encodeURIComponent(p.payment_id)}">${p.payment_id}</a>`
      : p.split_payment_id !== undefined
        ? html`pago dividido <span class="mono">${p.split_payment_id}</span>`
        : p.schedule_id !== undefined
          ? html`programación <span class="mono">${p.schedule_id}</span>`
          : html``

  const row = (ctx: V.Ctx, p: MerchantMoney.MerchantPayout) => {
    const [label, tone] = STATUS[p.status]
    return html`<tr>
      <td>${V.when(p.creation_timestamp)}</td>
      <td>${kindLabel(p.kind)}<br /><span class="muted">${origin(ctx, p)}</span></td>
      <td class="num">${V.amountText(p.amount, p.currency)}</td>
      <td class="mono">${p.destination}</td>
      <td>
        ${V.chip(label, tone)}${p.failure_reason === undefined ? "" : html`<br /><span>${p.failure_reason}</span>`}
        ${p.executed_timestamp === undefined ? "" : html`<br /><span class="muted">${V.when(p.executed_timestamp)}</span>`}
      </td>
      <td class="mono">${p.bank_reference ?? "—"}</td>
    </tr>`
  }

  const list = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const kind = kindOf(V.param(ctx, "tipo"))
        const owner = ctx.principal.user_id
        const page = yield* Effect.either(
          balances.payouts(owner, owner, {
            kind: Option.getOrUndefined(kind),
            before: Option.getOrUndefined(V.cursorOf(ctx)),
            limit: 50
          })
        )
        if (Either.isLeft(page)) return V.notFound("payouts", V.explain(page.left))
        const next = V.cursorText(page.right.next)
        const chosen = Option.getOrUndefined(kind)
        return V.page(
          "payouts",
          "Retiros",
          html`<section class="card" aria-labelledby="title">
            <h1 id="title">Retiros</h1>
            <p class="muted">
              Lo que salió de tu saldo: barridos programados, pagos divididos y devoluciones, con su estado y
              la referencia del banco.
            </p>
            <form method="get" action="${ctx.base}/payouts" class="filters">
              <label for="tipo">Tipo</label>
              <select id="tipo" name="tipo">
                <option value="" ${chosen === undefined ? "selected" : ""}>Todos</option>
                ${KINDS.map(
                  ([k, label]) =>
                    html`<option value="${k}" ${chosen === k ? "selected" : ""}>${label}</option>`
                )}
              </select>
              <button type="submit">Filtrar</button>
            </form>
            ${
              page.right.items.length === 0
                ? html`<p>No hay retiros${chosen === undefined ? "" : " de este tipo"}.</p>`
                : V.table(
                    "Retiros",
                    ["Fecha", "Tipo", "Monto", "Destino", "Estado", "Referencia del banco"],
                    page.right.items.map((p) => row(ctx, p))
                  )
            }
            <p class="actions">
              <a
                class="button"
                href="${V.withQuery(`${ctx.base}/payouts/export.csv`, { tipo: chosen })}"
                download
                >Exportar retiros (CSV)</a
              >
              <a class="button" href="${ctx.base}/payouts/refunds.csv" download
                >Exportar devoluciones (CSV)</a
              >
            </p>
            ${V.pager(next === null ? null : V.withQuery(`${ctx.base}/payouts`, { tipo: chosen, cursor: next }))}
          </section>`
        )
      })
    )

  return { list } as const
})
