/**
 * `GET /dashboard/payments/{paymentId}`: one payment of the signed-in merchant (`Payments.get`,
 * owner-checked: another merchant's id is "not found") with its quotes, transfers, refunds
 * (`Refunds.list`), state history (built from what the payment records: creation, each transfer,
 * each refund, expiry) and webhook deliveries (`WebhookDeliveries.list`, the merchant's own).
 *
 * Its refund form (FULL or PARTIAL) posts to `…/refund`: the first POST shows a confirmation page
 * (nothing is written), the second (`confirm=yes`) creates the refund through `Refunds.create`, as
 * `POST /payments/{id}/refunds` does, and sends the browser back to the payment with its result.
 * Refusals are shown in Spanish on the payment's page.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import {
  Ids,
  MerchantClocks,
  Money,
  type Payment,
  Payments,
  Refund,
  Refunds,
  WebhookDeliveries
} from "@cobro/core"
import { Effect, Either, Option, Schema } from "effect"
import * as Csrf from "../pages/csrf.js"
import { html, type Html } from "../pages/html.js"
import type { DashboardKit, MerchantSession } from "./kit.js"
import { PATH } from "./kit.js"
import * as Shell from "./layout.js"
import * as View from "./view.js"

const REFUND_LABELS: Record<Refund.RefundStatus, string> = {
  PENDING: "En curso",
  SUCCESS: "Enviada",
  FAILED: "Fallida"
}

/** Spanish for the refusals a refund can meet (the core's messages are English, for developers). */
const REFUND_ERRORS: Record<string, string> = {
  "refund.amount.invalid":
    "Ingresá un monto en pesos mayor que cero, con hasta dos decimales (por ejemplo 250 o 250,50).",
  "refund.payment.not_paid": "Este pago no recibió dinero: no hay nada para devolver.",
  "refund.payment.several_senders":
    "Este pago llegó desde más de una cuenta: devolvé ese dinero por fuera de cobro.",
  "refund.payment.fully_refunded": "Ya devolviste (o estás devolviendo) todo lo que se pagó.",
  "refund.amount.exceeds_refundable": "El monto supera lo que queda por devolver de este pago.",
  "refund.balance.insufficient":
    "Tu saldo disponible no alcanza para esta devolución. Esperá a que ingrese dinero y volvé a intentar.",
  "refund.sender.invalid":
    "El banco informó la cuenta o el CUIT de quien pagó como inválidos: devolvé el dinero por fuera de cobro.",
  "payment.not.found": "No encontramos este pago."
}

const AMOUNT = /^\d{1,12}(?:[.,]\d{1,2})?$/

/** How many of the merchant's deliveries since the payment's creation are searched for its own. */
const DELIVERY_SCAN = 500

const keyOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "key" in error && typeof error.key === "string"
    ? error.key
    : "unknown"

interface HistoryEntry {
  readonly at: Payment.Payment["creation_timestamp"]
  readonly text: string
}

const historyOf = (payment: Payment.Payment, refunds: ReadonlyArray<Refund.Refund>) => {
  const entries: Array<HistoryEntry> = [{ at: payment.creation_timestamp, text: "Pago creado (pendiente)" }]
  for (const t of payment.transactions) {
    entries.push({
      at: t.creation_timestamp,
      text: `Transferencia recibida de ${t.transaction_data.PROCESSED.senderTitular} por ${View.money(t.amount)}`
    })
  }
  if (payment.payment_status === "EXPIRED") {
    entries.push({ at: payment.expiration_timestamp, text: "Venció sin el pago completo" })
  }
  for (const r of refunds) {
    entries.push({
      at: r.creation_timestamp,
      text: `Devolución ${r.refund_type === "FULL" ? "total" : "parcial"} de ${View.money(r.amount)}: ${REFUND_LABELS[r.status]}`
    })
  }
  return entries.sort((a, b) => Number(a.at.epochMillis - b.at.epochMillis))
}

export const make = (dash: DashboardKit) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const refunds = yield* Refunds.Refunds
    const deliveries = yield* WebhookDeliveries.WebhookDeliveries

    const paymentIdOf = Effect.map(HttpRouter.params, (params) =>
      Schema.decodeUnknownOption(Ids.PaymentId)(params["paymentId"])
    )

    const notFound = (session: MerchantSession) =>
      dash.message(session, {
        title: "No encontramos este pago",
        section: "payments",
        status: 404,
        text: "El pago no existe o no es de tu cuenta."
      })

    /** The payment's webhook deliveries among the merchant's first `DELIVERY_SCAN` since its creation. */
    const deliveriesOf = (session: MerchantSession, payment: Payment.Payment) =>
      Effect.gen(function* () {
        const found: Array<WebhookDeliveries.DeliveryWithAttempts> = []
        // Event ids sort by creation time (`evt_` + the epoch milliseconds in base 36, 9 digits):
        // the scan starts just before the payment was created, so it reads its events first.
        const created = Number(payment.creation_timestamp.epochMillis) - 1
        let after: Option.Option<Ids.EventId> = Schema.decodeUnknownOption(Ids.EventId)(
          `evt_${created.toString(36).padStart(9, "0")}`
        )
        for (let seen = 0; seen < DELIVERY_SCAN; seen += WebhookDeliveries.maxPageSize) {
          const page = yield* Effect.orDie(
            deliveries.list(session.asPrincipal, {
              type: "payment.updated",
              limit: WebhookDeliveries.maxPageSize,
              ...(Option.isSome(after) ? { after: after.value } : {})
            })
          )
          for (const d of page.deliveries) {
            if (d.delivery.body.includes(JSON.stringify(payment.id))) found.push(d)
          }
          if (Option.isNone(page.next_after)) break
          after = page.next_after
        }
        return found
      })

    const render = (
      session: MerchantSession,
      payment: Payment.Payment,
      notice: Option.Option<{ readonly ok: boolean; readonly text: string }>,
      status = 200
    ) =>
      Effect.gen(function* () {
        const summary = yield* Effect.orDie(refunds.ofPayment(payment))
        const sent = yield* deliveriesOf(session, payment)
        const refundable = payment.transactions.length > 0
        return dash.shell(session, {
          title: `Pago ${payment.external_id}`,
          section: "payments",
          status,
          body: html`<p class="eyebrow"><a href="${PATH}/payments">Pagos</a> › ${payment.external_id}</p>
            <h1>Pago ${payment.external_id}</h1>
            ${Option.match(notice, {
              onNone: () => "",
              onSome: (n) =>
                html`<div class="state ${n.ok ? "ok" : "err"}" role="${n.ok ? "status" : "alert"}">
                  <strong>${n.text}</strong>
                </div>`
            })}
            <section class="card" aria-labelledby="summary-title">
              <h2 id="summary-title">Resumen</h2>
              <dl>
                ${field("Estado", View.STATUS_LABELS[payment.payment_status])}
                ${field("ID del pago", payment.id)} ${field("ID externo", payment.external_id)}
                ${field("Monto", View.money(payment.quoteAmount))}
                ${field("Recibido", View.money(payment.totalReceived))}
                ${field("Devuelto", View.money(summary.refunded))}
                ${field("Creado", View.when(payment.creation_timestamp))}
                ${field("Vence", View.when(payment.expiration_timestamp))}
                ${payment.motive === undefined ? "" : field("Motivo", payment.motive)}
              </dl>
            </section>
            <section class="card" aria-labelledby="quotes-title">
              <h2 id="quotes-title">Cotizaciones</h2>
              ${table(
                "Cotizaciones",
                ["CVU", "Alias", "Monto"],
                payment.quotes.map((q) => [q.address, q.alias, View.money(q.amount)])
              )}
            </section>
            <section class="card" aria-labelledby="tx-title">
              <h2 id="tx-title">Transferencias</h2>
              ${table(
                "Transferencias",
                ["Fecha", "De", "CUIT", "Monto", "Acreditado"],
                payment.transactions.map((t) => [
                  View.when(t.creation_timestamp),
                  t.transaction_data.PROCESSED.senderTitular,
                  t.transaction_data.PROCESSED.senderCuit,
                  View.money(t.amount),
                  View.money(t.credited_amount)
                ])
              )}
            </section>
            <section class="card" aria-labelledby="refunds-title">
              <h2 id="refunds-title">Devoluciones</h2>
              ${table(
                "Devoluciones",
                ["Fecha", "Tipo", "Monto", "Estado", "Referencia bancaria"],
                summary.refunds.map((r) => [
                  View.when(r.creation_timestamp),
                  r.refund_type === "FULL" ? "Total" : "Parcial",
                  View.money(r.amount),
                  r.failure_reason === null
                    ? REFUND_LABELS[r.status]
                    : `${REFUND_LABELS[r.status]} (${r.failure_reason})`,
                  r.bank_transaction_id ?? "—"
                ])
              )}
              ${refundable ? refundForm(session, payment) : html`<p class="muted">Este pago todavía no recibió dinero.</p>`}
            </section>
            <section class="card" aria-labelledby="history-title">
              <h2 id="history-title">Historial</h2>
              <ol>
                ${historyOf(payment, summary.refunds).map(
                  (e) => html`<li><span class="muted">${View.when(e.at)}</span> · ${e.text}</li>`
                )}
              </ol>
            </section>
            <section class="card" aria-labelledby="webhooks-title">
              <h2 id="webhooks-title">Webhooks</h2>
              ${table(
                "Webhooks",
                ["Evento", "Estado", "Intentos", "Último intento", "Respuesta"],
                sent.map(({ attempts, delivery }) => [
                  delivery.event_id,
                  delivery.status,
                  String(attempts.length),
                  delivery.last_attempt_at === null ? "—" : View.when(delivery.last_attempt_at),
                  delivery.last_status_code === null
                    ? (delivery.last_error ?? "—")
                    : `HTTP ${delivery.last_status_code}`
                ])
              )}
            </section>`
        })
      })

    const field = (label: string, value: string) =>
      html`<div class="field">
        <dt>${label}</dt>
        <dd>${value}</dd>
      </div>`

    const table = (
      caption: string,
      heads: ReadonlyArray<string>,
      rows: ReadonlyArray<ReadonlyArray<string>>
    ): Html =>
      rows.length === 0
        ? html`<p class="muted">No hay ${caption.toLowerCase()}.</p>`
        : html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
            <table>
              <caption class="visually-hidden">
                ${caption}
              </caption>
              <thead>
                <tr>
                  ${heads.map((h) => html`<th scope="col">${h}</th>`)}
                </tr>
              </thead>
              <tbody>
                ${rows.map(
                  (r) =>
                    html`<tr>
                      ${r.map((c) => html`<td>${c}</td>`)}
                    </tr>`
                )}
              </tbody>
            </table>
          </div>`

    const refundForm = (session: MerchantSession, payment: Payment.Payment) =>
      html`<form method="post" action="${PATH}/payments/${encodeURIComponent(payment.id)}/refund">
        <input type="hidden" name="${Csrf.FIELD}" value="${session.csrf}" />
        <fieldset>
          <legend>Devolver dinero a quien pagó</legend>
          <div class="consent">
            <input id="type-full" type="radio" name="refund_type" value="FULL" checked />
            <label for="type-full">Devolución total</label>
          </div>
          <div class="consent">
            <input id="type-partial" type="radio" name="refund_type" value="PARTIAL" />
            <label for="type-partial">Devolución parcial</label>
          </div>
          <label for="amount">Monto a devolver (solo parcial)</label>
          <input id="amount" name="amount" type="text" inputmode="decimal" aria-describedby="amount-hint" />
          <p class="hint" id="amount-hint">En pesos, con hasta dos decimales (por ejemplo 250,50).</p>
        </fieldset>
        <p class="actions"><button type="submit">Revisar devolución</button></p>
      </form>`

    const page = dash.merchantPage((session) =>
      MerchantClocks.run(session.principal.user_id)(
        Effect.gen(function* () {
          const id = yield* paymentIdOf
          if (Option.isNone(id)) return notFound(session)
          const payment = yield* Effect.either(payments.get(session.principal.user_id, id.value))
          if (Either.isLeft(payment)) return notFound(session)
          const request = yield* HttpServerRequest.HttpServerRequest
          const refunded = new URL(request.url, "http://x").searchParams.get("refunded")
          const all = (yield* Effect.orDie(refunds.ofPayment(payment.right))).refunds
          const notice = Option.map(
            Option.fromNullable(all.find((r) => refunded !== null && r.refund_id === refunded)),
            (r) => ({
              ok: r.status !== "FAILED",
              text: `Devolución de ${View.money(r.amount)} creada: ${REFUND_LABELS[r.status].toLowerCase()}.`
            })
          )
          return yield* render(session, payment.right, notice)
        })
      )
    )

    const refund = dash.merchantForm((session, fields) =>
      MerchantClocks.run(session.principal.user_id)(
        Effect.gen(function* () {
          const id = yield* paymentIdOf
          if (Option.isNone(id)) return notFound(session)
          const found = yield* Effect.either(payments.get(session.principal.user_id, id.value))
          if (Either.isLeft(found)) return notFound(session)
          const payment = found.right
          const type = fields("refund_type") === "PARTIAL" ? "PARTIAL" : "FULL"
          const amountText = (fields("amount") ?? "").trim()
          const refused = (text: string, status: number) =>
            render(session, payment, Option.some({ ok: false, text }), status)
          if (type === "PARTIAL" && (!AMOUNT.test(amountText) || Number(amountText.replace(",", ".")) <= 0)) {
            return yield* refused(REFUND_ERRORS["refund.amount.invalid"]!, 400)
          }
          const amount = amountText.replace(",", ".")
          if (fields("confirm") !== "yes") {
            const shown =
              type === "FULL"
                ? "todo lo que queda por devolver"
                : View.money(Either.getOrThrow(Money.fromString(amount, "ARS")))
            return dash.shell(session, {
              title: "Confirmá la devolución",
              section: "payments",
              body: html`<section class="card" aria-labelledby="title">
                <h1 id="title">Confirmá la devolución</h1>
                <p>
                  Vas a devolver ${shown} del pago <strong>${payment.external_id}</strong> a la cuenta desde
                  la que se pagó. El dinero sale de tu saldo disponible y no se puede deshacer.
                </p>
                <form method="post" action="${PATH}/payments/${encodeURIComponent(payment.id)}/refund">
                  <input type="hidden" name="${Csrf.FIELD}" value="${session.csrf}" />
                  <input type="hidden" name="refund_type" value="${type}" />
                  <input type="hidden" name="amount" value="${type === "PARTIAL" ? amount : ""}" />
                  <input type="hidden" name="confirm" value="yes" />
                  <p class="actions">
                    <button class="primary" type="submit">Confirmar devolución</button>
                    <a class="button" href="${PATH}/payments/${encodeURIComponent(payment.id)}">Cancelar</a>
                  </p>
                </form>
              </section>`
            })
          }
          const created = yield* Effect.either(
            refunds.create(
              session.principal.user_id,
              payment.id,
              new Refund.RefundRequest({ refund_type: type, ...(type === "PARTIAL" ? { amount } : {}) })
            )
          )
          if (Either.isLeft(created)) {
            const key = keyOf(created.left)
            // Nothing moved: the payment as it is now, with the reason.
            const current = yield* Effect.orDie(payments.get(session.principal.user_id, payment.id))
            return yield* render(
              session,
              current,
              Option.some({
                ok: false,
                text: REFUND_ERRORS[key] ?? `No pudimos crear la devolución (${key}).`
              }),
              created.left._tag === "NotFound" ? 404 : created.left._tag === "InvalidInput" ? 400 : 409
            )
          }
          return Shell.seeOther(
            `${PATH}/payments/${encodeURIComponent(payment.id)}?refunded=${encodeURIComponent(created.right.refund_id)}`
          )
        })
      )
    )

    return { page, refund }
  })
