/**
 * The partner's view: the merchants that consented to the signed-in partner (its grants), with
 * their account's state and the date of the consent, each linking to that merchant's pages. A
 * merchant's pages opened by a partner act as `Principal.Partner` for it (`Onboarding.actFor`),
 * exactly what a `PAR-` token of the partner for that merchant may do in the API; a merchant that
 * did not consent is not found.
 */
import { type Errors, type Ids, Onboarding, type Principal, type User } from "@cobro/core"
import { Effect } from "effect"
import { html } from "../pages/html.js"
import * as V from "./sections.js"

const STATUS: Record<User.AccountStatus, readonly [string, "ok" | "warn" | "err" | "info"]> = {
  PENDING: ["Pendiente", "warn"],
  ACTIVE: ["Activa", "ok"],
  SUSPENDED: ["Suspendida", "err"],
  REJECTED: ["Rechazada", "err"]
}

export const make = Effect.gen(function* () {
  const onboarding = yield* Onboarding.Onboarding

  /**
   * The partner's merchants, each with a form that opens its pages (`POST {base}/partner/open`,
   * CSRF token `csrf`); `base` is the dashboard's root (`/dashboard`).
   */
  const list = (partnerId: Ids.PartnerId, base: string, csrf: string) =>
    Effect.gen(function* () {
      const merchants = yield* onboarding.merchantsOf(partnerId)
      const rows = merchants.map(({ consent, user }) => {
        const [label, tone] = STATUS[user.account_status]
        return html`<tr>
          <td>
            <strong>${user.name}</strong><br />
            <span class="muted mono">${user.user_id}</span>
          </td>
          <td>${V.chip(label, tone)}</td>
          <td>${V.when(consent.granted_at)}</td>
          <td>${V.when(user.creation_timestamp)}</td>
          <td>
            <form method="post" action="${base}/partner/open">
              <input type="hidden" name="csrf_token" value="${csrf}" />
              <input type="hidden" name="user_id" value="${user.user_id}" />
              <button type="submit" aria-label="Abrir ${user.name}">Abrir</button>
            </form>
          </td>
        </tr>`
      })
      return V.page(
        "partner",
        "Tus comercios",
        html`<section class="card" aria-labelledby="title">
          <h1 id="title">Tus comercios</h1>
          <p class="muted">
            Los comercios que te dieron permiso para operar por ellos. Abrí uno para ver sus pagos, clientes,
            retiros y webhooks.
          </p>
          ${
            merchants.length === 0
              ? html`<p>
                  Todavía ningún comercio te dio permiso. Mandalos a tu página de alta
                  (<code>/authorize?partner_id=${partnerId}</code>).
                </p>`
              : V.table(
                  "Comercios",
                  ["Comercio", "Estado", "Permiso desde", "Alta de la cuenta", "Acciones"],
                  rows
                )
          }
        </section>`
      )
    })

  /** The principal the partner acts as for `userId`; `NotFound` without the merchant's consent. */
  const actFor = (
    partnerId: Ids.PartnerId,
    userId: Ids.UserId
  ): Effect.Effect<Principal.Principal, Errors.NotFound> => onboarding.actFor(partnerId, userId)

  return { list, actFor } as const
})
