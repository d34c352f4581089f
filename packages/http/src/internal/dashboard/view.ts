/**
 * What several dashboard pages show the same way: a payment's state in Spanish, amounts and
 * times in Argentine format, a table of payments.
 */
import { DateTime } from "effect"
import type { Money, Payment } from "@cobro/core"
import * as Format from "../pages/format.js"
import { html, type Html } from "../pages/html.js"
import { PATH } from "./kit.js"

export const STATUS_LABELS: Record<Payment.PaymentStatus, string> = {
  PENDING: "Pendiente",
  SUCCESS: "Pagado",
  OVERPAID: "Pagado de más",
  UNDERPAID: "Pago parcial",
  EXPIRED: "Vencido"
}

export const money = (m: Money.Money): string => Format.money(m)

export const when = (t: DateTime.Utc): string => Format.when(t)

/** `2026-01-06` in Buenos Aires (UTC−3, no daylight saving). */
export const dayOf = (t: DateTime.Utc): string => DateTime.formatIsoDate(DateTime.subtract(t, { hours: 3 }))

export const paymentHref = (payment: Payment.Payment): string =>
  `${PATH}/payments/${encodeURIComponent(payment.id)}`

/** The payments as a table (newest first, as given), each linked to its page. */
export const paymentsTable = (payments: ReadonlyArray<Payment.Payment>, caption: string): Html =>
  payments.length === 0
    ? html`<p class="muted">No hay pagos para mostrar.</p>`
    : html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
        <table>
          <caption class="visually-hidden">
            ${caption}
          </caption>
          <thead>
            <tr>
              <th scope="col">Creado</th>
              <th scope="col">ID externo</th>
              <th scope="col">Estado</th>
              <th scope="col" class="num">Monto</th>
              <th scope="col" class="num">Recibido</th>
            </tr>
          </thead>
          <tbody>
            ${payments.map(
              (p) =>
                html`<tr>
                  <td>${when(p.creation_timestamp)}</td>
                  <td><a href="${paymentHref(p)}">${p.external_id}</a></td>
                  <td>${STATUS_LABELS[p.payment_status]}</td>
                  <td class="num">${money(p.quoteAmount)}</td>
                  <td class="num">${money(p.totalReceived)}</td>
                </tr>`
            )}
          </tbody>
        </table>
      </div>`
