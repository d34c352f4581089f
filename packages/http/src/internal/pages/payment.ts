/**
 * The payer's page at `payment_url`: what to transfer and where (amount, CVU and alias with copy
 * buttons), how long is left, and the payment's state, kept live by polling the public endpoint.
 * Once paid the payer is sent back to the merchant's `redirect_url`.
 *
 * Everything is rendered on the server, so the page is complete without JavaScript (a meta
 * refresh keeps it current); the script adds copying, the countdown, polling and the redirect.
 */
import { Money, type Payment, Wire } from "@cobro/core"
import { DateTime, Duration, Schema } from "effect"
import * as Format from "./format.js"
import { html, type Html, safeHttpUrl } from "./html.js"
import type { Page } from "./layout.js"
import { SCRIPT } from "./paymentScript.js"

export interface PaymentPageModel {
  readonly view: Payment.PublicPayment
  /** The state to show: a PENDING payment past its expiry is shown EXPIRED. */
  readonly shown: Payment.PaymentStatus
  /** Gross ARS received so far. */
  readonly received: Money.Money
  readonly now: DateTime.Utc
  /** The public endpoint, relative to the page (works under any mount prefix). */
  readonly publicUrl: string
  readonly nonce: string
  /** Who holds the CVU, as the bank reports it (what the payer's bank shows); null when unknown. */
  readonly holder: { readonly name: string; readonly cuit: string } | null
  /** In sandbox mode: the "Simular transferencia" form's target and CSRF token; null otherwise. */
  readonly sandbox: { readonly action: string; readonly csrf: string } | null
}

/** `30-71234567-1`. */
export const formatCuit = (cuit: string): string =>
  /^\d{11}$/.test(cuit) ? `${cuit.slice(0, 2)}-${cuit.slice(2, 10)}-${cuit.slice(10)}` : cuit

/** How often the page asks for the state, and how long it shows "paid" before redirecting. */
export const POLL_MS = 3000
const REDIRECT_DELAY_MS: Partial<Record<Payment.PaymentStatus, number>> = { SUCCESS: 2000, OVERPAID: 8000 }

/** `4 d 23 h 59 min` above a day, `23:59:59` below. */
export const remaining = (ms: number): string => {
  const total = Math.max(0, Math.floor(ms / 1000))
  const days = Math.floor(total / 86400)
  const hours = Math.floor((total % 86400) / 3600)
  const minutes = Math.floor((total % 3600) / 60)
  const seconds = total % 60
  const two = (n: number) => String(n).padStart(2, "0")
  return days > 0 ? `${days} d ${hours} h ${minutes} min` : `${two(hours)}:${two(minutes)}:${two(seconds)}`
}

/** `a - b`; the page's amounts are all in the payment's currency. */
const minus = (a: Money.Money, b: Money.Money): Money.Money => Money.orThrow(Money.subtract(a, b))

const encodeTimestamp = Schema.encodeSync(Wire.Timestamp)

interface StateText {
  readonly tone: "info" | "ok" | "warn" | "err"
  readonly title: string
  readonly text: string
}

const stateText = (
  model: PaymentPageModel,
  merchant: string,
  redirect: string | null,
  refunded: boolean
): StateText => {
  const quote = model.view.quotes[0]!.amount
  const back = redirect === null ? "Ya podés cerrar esta página." : `Te llevamos de vuelta a ${merchant}.`
  switch (model.shown) {
    case "PENDING":
      return {
        tone: "info",
        title: "Esperando tu transferencia",
        text: "Cuando llegue, esta página se actualiza sola. La acreditación puede tardar unos minutos."
      }
    case "UNDERPAID":
      return {
        tone: "warn",
        title: "Pago incompleto",
        text: `Recibimos ${Format.money(model.received)} de ${Format.money(quote)}. Transferí los ${Format.money(
          minus(quote, model.received)
        )} que faltan a los mismos datos antes del vencimiento, o comunicate con ${merchant}.`
      }
    case "SUCCESS":
      return {
        tone: "ok",
        title: "¡Pago recibido!",
        text: `Recibimos ${Format.money(model.received)}. ${back}`
      }
    case "OVERPAID":
      // Once the merchant refunded (part of) it, the refund note says what came back.
      if (refunded) {
        return {
          tone: "ok",
          title: "Pago recibido",
          text: `Recibimos ${Format.money(model.received)}, más que los ${Format.money(quote)} pedidos. ${back}`
        }
      }
      return {
        tone: "warn",
        title: "Pago recibido, con un excedente",
        text: `Recibimos ${Format.money(model.received)}, más que los ${Format.money(quote)} pedidos. ${merchant} se va a comunicar con vos para devolverte la diferencia de ${Format.money(
          minus(model.received, quote)
        )}. ${back}`
      }
    case "EXPIRED":
      return {
        tone: "err",
        title: "Este cobro venció",
        text: `Ya no se puede pagar: no transfieras a estos datos, la transferencia sería devuelta. Pedile a ${merchant} un nuevo link de pago.`
      }
  }
}

/** A refunded payment, in the payer's words: the whole of it returned (or on its way) or a part. */
const refundText = (
  refund: Payment.PublicRefund,
  merchant: string
): { readonly state: StateText | null; readonly note: string } => {
  const amount = Format.money(refund.amount)
  if (!refund.full) {
    return {
      state: null,
      note: refund.pending
        ? `${merchant} te está devolviendo ${amount} de este pago a la cuenta desde la que pagaste.`
        : `${merchant} te devolvió ${amount} de este pago a la cuenta desde la que pagaste.`
    }
  }
  return {
    state: refund.pending
      ? {
          tone: "info",
          title: "Reembolso en curso",
          text: `${merchant} te está devolviendo ${amount} a la cuenta desde la que pagaste. Puede tardar unos minutos en acreditarse. No transfieras a estos datos.`
        }
      : {
          tone: "ok",
          title: "Pago reembolsado",
          text: `${merchant} te devolvió ${amount} a la cuenta desde la que pagaste. No transfieras a estos datos.`
        },
    note: ""
  }
}

const plainField = (id: string, label: string, value: string): Html =>
  html`<div class="field">
    <dt id="${id}-label">${label}</dt>
    <dd id="${id}">${value}</dd>
  </div>`

/** The sandbox's form: a simulated transfer of `due` (editable) to this payment's CVU only. */
const simulateForm = (sandbox: { readonly action: string; readonly csrf: string }, due: Money.Money): Html =>
  html`<section class="card" id="simulate" aria-labelledby="simulate-title">
    <h2 id="simulate-title">Simular transferencia</h2>
    <p class="muted">
      Solo en sandbox: envía a este cobro una transferencia de prueba, como la haría el banco de quien paga.
      No mueve dinero real.
    </p>
    <form method="post" action="${sandbox.action}">
      <input type="hidden" name="csrf_token" value="${sandbox.csrf}" />
      <label for="simulate-amount">Monto en pesos</label>
      <input
        id="simulate-amount"
        name="amount"
        type="text"
        inputmode="decimal"
        autocomplete="off"
        required
        pattern="[0-9]{1,12}([.,][0-9]{1,2})?"
        aria-describedby="simulate-hint"
        value="${Money.format(due)}"
      />
      <p class="hint" id="simulate-hint">
        Por ejemplo 1500 o 1500,50. Podés simular un pago de menos o de más.
      </p>
      <p><button type="submit" class="primary" id="simulate-submit">Simular transferencia</button></p>
    </form>
  </section>`

const copyField = (id: string, label: string, noun: string, value: string): Html =>
  html`<div class="field">
    <dt id="${id}-label">${label}</dt>
    <dd id="${id}">${value}</dd>
    <button type="button" data-copy="${value}" data-copied="${label} copiado" aria-describedby="${id}-label">
      Copiar ${noun}
    </button>
  </div>`

export const page = (model: PaymentPageModel): Page => {
  const { view } = model
  const quote = view.quotes[0]!
  const merchant = view.merchant_name.trim() === "" ? "el comercio" : view.merchant_name
  const redirect = safeHttpUrl(view.redirect_url)
  const refund = view.refund === null ? null : refundText(view.refund, merchant)
  const refunded = refund !== null && refund.state !== null
  const open = !refunded && (model.shown === "PENDING" || model.shown === "UNDERPAID")
  const paid = !refunded && (model.shown === "SUCCESS" || model.shown === "OVERPAID")
  const leftMs = Duration.toMillis(DateTime.distanceDuration(model.now, view.expiration_timestamp))
  const msLeft = DateTime.lessThan(model.now, view.expiration_timestamp) ? leftMs : 0
  const state = refund?.state ?? stateText(model, merchant, redirect, refund !== null)
  const redirectDelay = paid && redirect !== null ? (REDIRECT_DELAY_MS[model.shown] ?? 0) : 0
  const due = model.shown === "UNDERPAID" ? minus(quote.amount, model.received) : quote.amount

  const body = html`<section
      class="card"
      id="cobro-pay"
      aria-labelledby="title"
      data-status="${view.payment_status}"
      data-amount="${Money.format(quote.amount)}"
      data-expires="${encodeTimestamp(view.expiration_timestamp)}"
      data-expires-in="${String(msLeft)}"
      data-public-url="${model.publicUrl}"
      data-poll-ms="${String(open ? POLL_MS : 0)}"
      data-redirect="${redirect ?? ""}"
      data-redirect-delay="${String(redirectDelay)}"
      data-paid-message="${`¡Pago recibido! Te llevamos de vuelta a ${merchant}.`}"
      data-expired-message="${`Este cobro venció. No transfieras a estos datos: pedile a ${merchant} un nuevo link de pago.`}"
    >
      ${
        model.sandbox === null
          ? ""
          : html`<p class="badge" id="sandbox-badge" role="note">
              Sandbox · cobro de prueba, sin dinero real
            </p>`
      }
      <p class="eyebrow">Pago a</p>
      <h1 id="title">${merchant}</h1>
      ${view.motive === null || view.motive === "" ? "" : html`<p class="motive">${view.motive}</p>`}
      <p class="eyebrow" id="amount-label">
        ${model.shown === "UNDERPAID" ? "Falta transferir" : open ? "Monto a transferir" : "Monto del cobro"}
      </p>
      <p class="amount" aria-describedby="amount-label">${Format.money(due)}</p>
      ${view.price.currency === "ARS" ? "" : html`<p class="muted">Equivale a ${Format.money(view.price)}.</p>`}
      <div id="payment-state" class="state ${state.tone}" role="status" aria-live="polite" aria-atomic="true">
        <strong>${state.title}</strong>
        <p>${state.text}</p>
      </div>
      ${refund === null || refund.note === "" ? "" : html`<p class="muted" id="refund-note">${refund.note}</p>`}
      ${
        open
          ? html`<p id="expiry">
              Vence en
              <span class="countdown" id="countdown" role="timer" aria-live="off">${remaining(msLeft)}</span>
              <span class="muted">(${Format.when(view.expiration_timestamp)}, hora de Buenos Aires)</span>
            </p>`
          : ""
      }
      ${
        paid && redirect !== null
          ? html`<p><a class="button primary" id="back" href="${redirect}">Volver a ${merchant}</a></p>`
          : ""
      }
    </section>
    ${
      open
        ? html`<section class="card" id="transfer" aria-labelledby="transfer-title">
              <h2 id="transfer-title">Datos para transferir</h2>
              <dl>
                ${copyField("cvu", "CVU", "CVU", quote.address)}
                ${copyField("alias", "Alias", "alias", quote.alias)}
                ${model.holder === null ? "" : plainField("holder", "Titular de la cuenta", model.holder.name)}
                ${model.holder === null ? "" : plainField("holder-cuit", "CUIT del titular", formatCuit(model.holder.cuit))}
              </dl>
              <p class="visually-hidden" id="copy-status" aria-live="polite"></p>
              <ol>
                <li>Abrí la app de tu banco o billetera virtual.</li>
                <li>Elegí transferir a un CBU/CVU o alias y pegá uno de estos datos.</li>
                ${
                  model.holder === null
                    ? ""
                    : html`<li>
                        Antes de confirmar, verificá que tu banco muestre como titular a ${model.holder.name}
                        (CUIT ${formatCuit(model.holder.cuit)}).
                      </li>`
                }
                <li>Transferí exactamente ${Format.money(due)}. Te avisamos acá cuando llegue.</li>
              </ol>
            </section>
            ${model.sandbox === null ? "" : simulateForm(model.sandbox, due)}`
        : ""
    }`

  // Without JavaScript: refresh while waiting, and go back to the merchant once paid.
  const head =
    redirectDelay > 0
      ? html`<noscript
          ><meta http-equiv="refresh" content="${`${Math.ceil(redirectDelay / 1000)};url=${redirect}`}"
        /></noscript>`
      : open
        ? html`<noscript><meta http-equiv="refresh" content="30" /></noscript>`
        : undefined

  return {
    title: `Pagar ${Format.money(quote.amount)} a ${merchant} · cobro`,
    nonce: model.nonce,
    body,
    ...(head === undefined ? {} : { head }),
    script: SCRIPT
  }
}
