/**
 * `GET /dashboard/developers`: what a developer needs to integrate: the client id, the API's base
 * URL, links to `/docs` and `/openapi.json`, and how webhooks are signed (with the client secret).
 * `POST /dashboard/developers/rotate-secret` (with a confirmation box) replaces the client secret
 * through `Auth.rotateSecret`, as `cobro users rotate-secret` does: the new secret is shown on
 * that answer only (never stored in clear, never shown again), the old one and every token
 * issued with it stop working at once.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Auth } from "@cobro/core"
import { Effect, Option } from "effect"
import * as Csrf from "../pages/csrf.js"
import { html, safeHttpUrl } from "../pages/html.js"
import type { DashboardKit, MerchantSession } from "./kit.js"
import { PATH } from "./kit.js"
import * as View from "./view.js"

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

export const make = (dash: DashboardKit) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth

    /** The configured public URL, else this request's own origin. */
    const baseUrlOf = (request: HttpServerRequest.HttpServerRequest) => {
      const configured = safeHttpUrl(dash.settings.apiBaseUrl)
      if (configured !== null) return configured.replace(/\/$/, "")
      const host = first(request.headers["host"]) ?? "localhost"
      const proto = first(request.headers["x-forwarded-proto"]) === "https" ? "https" : "http"
      return `${proto}://${host}`
    }

    const render = (
      session: MerchantSession,
      rotated: Option.Option<string>,
      error: Option.Option<string>,
      status = 200
    ) =>
      Effect.gen(function* () {
        const client = yield* Effect.orDie(dash.sessions.clientOf(session.principal.user_id))
        const base = baseUrlOf(session.request)
        return dash.shell(session, {
          title: "Desarrolladores",
          section: "developers",
          status,
          body: html`<h1>Desarrolladores</h1>
            <section class="card" aria-labelledby="creds-title">
              <h2 id="creds-title">Credenciales de la API</h2>
              <dl>
                <div class="field">
                  <dt>User ID</dt>
                  <dd>${session.principal.user_id}</dd>
                </div>
                <div class="field">
                  <dt>Client ID</dt>
                  <dd id="client-id">${client.client_id}</dd>
                </div>
                <div class="field">
                  <dt>URL base de la API</dt>
                  <dd>${base}</dd>
                </div>
                <div class="field">
                  <dt>Último cambio del client secret</dt>
                  <dd>${View.when(client.secret_rotated_at)}</dd>
                </div>
              </dl>
              <p>
                Pedí un token con <code>POST ${base}/users/${session.principal.user_id}/tokens</code> y tu
                client ID y secret. Referencia completa: <a href="/docs">documentación de la API</a> (y el
                <a href="/openapi.json">documento OpenAPI</a>).
              </p>
            </section>
            <section class="card" aria-labelledby="webhooks-title">
              <h2 id="webhooks-title">Firma de webhooks</h2>
              <p>
                Firmamos cada webhook con tu <strong>client secret</strong> (HMAC-SHA256, encabezados
                <code>webhook-signature</code> y <code>X-Service-Signature</code>): el secreto de firma es el
                mismo client secret. Si lo rotás, actualizalo también donde verificás los webhooks.
              </p>
            </section>
            <section class="card" aria-labelledby="rotate-title">
              <h2 id="rotate-title">Rotar el client secret</h2>
              ${Option.match(rotated, {
                onNone: () => "",
                onSome: (secret) =>
                  html`<div class="state ok" role="status">
                    <strong>Tu nuevo client secret</strong>
                    <p>Copialo ahora: no lo vamos a volver a mostrar.</p>
                    <p class="secret" id="new-secret">${secret}</p>
                  </div>`
              })}
              ${Option.match(error, {
                onNone: () => "",
                onSome: (text) => html`<div class="state err" role="alert"><strong>${text}</strong></div>`
              })}
              <p>
                Un secreto nuevo reemplaza al actual al instante: el anterior y todos los tokens emitidos con
                él dejan de funcionar.
              </p>
              <form method="post" action="${PATH}/developers/rotate-secret">
                <input type="hidden" name="${Csrf.FIELD}" value="${session.csrf}" />
                <div class="consent">
                  <input id="confirm" name="confirm" type="checkbox" value="yes" required />
                  <label for="confirm">Entiendo que el secreto actual deja de funcionar</label>
                </div>
                <button type="submit">Rotar el client secret</button>
              </form>
            </section>`
        })
      })

    /** A partner acting for the merchant: no `PAR-` token reads or replaces its credentials. */
    const notForPartners = (session: MerchantSession) =>
      dash.message(session, {
        title: "No encontramos esta página",
        status: 404,
        text: "Las credenciales de la API son del comercio: un partner no las ve ni las cambia."
      })

    const page = dash.merchantPage((session) =>
      session.partner !== undefined
        ? Effect.succeed(notForPartners(session))
        : render(session, Option.none(), Option.none())
    )

    const rotate = dash.merchantForm((session, fields) =>
      Effect.gen(function* () {
        if (session.partner !== undefined) return notForPartners(session)
        if (fields("confirm") !== "yes") {
          return yield* render(
            session,
            Option.none(),
            Option.some("Marcá la casilla para confirmar que querés reemplazar el secreto."),
            400
          )
        }
        const rotated = yield* Effect.orDie(auth.rotateSecret(session.principal.user_id))
        yield* Effect.logInfo("dashboard: client secret rotated").pipe(
          Effect.annotateLogs({ user_id: session.principal.user_id })
        )
        return yield* render(session, Option.some(rotated.client_secret), Option.none())
      })
    )

    return { page, rotate }
  })
