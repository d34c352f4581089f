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

  /** The partner's merchants; `base` is the dashboard's root (`/dashboard`). */
  const list = (partnerId: Ids.PartnerId, base: string) =>
    Effect.gen(function* () {
      const merchants = yield* onboarding.merchantsOf(partnerId)
      return V.page(
        "partner",
        "Tus comercios",
        html`<section class="card" aria-labelledby="title">
          <h1 id="title">Tus comercios</h1>
          <p class="muted">
            Los comercios que te dieron permiso para operar por ellos. Abrí uno para ver sus cobros, clientes,
            pagos salientes y webhooks.
          </p>
          ${
            merchants.length === 0
              ? html`<p>
                  Todavía ningún comercio te dio permiso. Mandalos a tu página de alta
                  (<code>/authorize?partner_id=${partnerId}</code>).
                </p>`
              : V.table(
                  "Comercios",
                  ["Comercio", "Estado", "Permiso desde", "Alta de la cuenta"],
                  merchants.map(({ consent, user }) => {
                    const [label, tone] = STATUS[user.account_status]
                    return html`<tr>
                      <td>
                        <a href="${base}/merchants/${encodeURIComponent(user.user_id)}">${user.name}</a><br />
                        <span class="muted mono">${user.user_id}</span>
                      </td>
                      <td>${V.chip(label, tone)}</td>
                      <td>${V.when(consent.granted_at)}</td>
                      <td>${V.when(user.creation_timestamp)}</td>
                    </tr>`
                  })
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
