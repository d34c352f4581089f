/**
 * Signing in and out of the dashboard.
 *
 * - `GET /dashboard/sign-in`, `POST` of its form: a merchant's e-mail, password and (when the
 *   settings ask for a second factor: production) a code of its enrolled factor.
 * - `GET /dashboard/sign-in/partner`, `POST`: a partner's client id, password and (production)
 *   client secret.
 * - `POST /dashboard/sign-out`: ends the session and removes its cookie.
 *
 * Every form carries the pages' CSRF token (a forged sign-in is refused as well). Wrong secrets
 * count toward the API's failure limits per address and per account (`failuresPerClient`,
 * `failuresPerAddress`): once reached, that account or address is refused, even with the right
 * password, until the window ends. A sign-in always opens a new session (a new token: the one the
 * browser had, if any, is ended), so a token planted before sign-in is worth nothing after it.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Option } from "effect"
import { html } from "../pages/html.js"
import * as Csrf from "../pages/csrf.js"
import type { Response } from "../pages/shared.js"
import { type DashboardKit, type Fields, PATH, SESSION_COOKIE } from "./kit.js"
import * as Shell from "./layout.js"

type Who = "merchant" | "partner"

interface FormState {
  readonly who: Who
  readonly nonce: string
  readonly csrf: string
  readonly secondFactor: boolean
  readonly sandbox: boolean
  readonly account?: string | undefined
  readonly error?: string | undefined
}

const formPage = (state: FormState, status = 200): Response => {
  const merchant = state.who === "merchant"
  const error = state.error
  return Shell.page(
    {
      nonce: state.nonce,
      title: merchant ? "Ingresá al panel" : "Ingresá al panel de partners",
      sandbox: state.sandbox,
      body: html`<section class="card narrow" aria-labelledby="title">
        <h1 id="title">${merchant ? "Ingresá al panel" : "Ingresá como partner"}</h1>
        ${
          error === undefined
            ? ""
            : html`<p class="state err" role="alert" id="form-error"><strong>${error}</strong></p>`
        }
        <form method="post" action="${merchant ? `${PATH}/sign-in` : `${PATH}/sign-in/partner`}" novalidate>
          <input type="hidden" name="${Csrf.FIELD}" value="${state.csrf}" />
          ${
            merchant
              ? html`<label for="email">Email</label>
                  <input
                    id="email"
                    name="email"
                    type="email"
                    autocomplete="username"
                    required
                    value="${state.account ?? ""}"
                  />`
              : html`<label for="client_id">Client ID</label>
                  <input
                    id="client_id"
                    name="client_id"
                    type="text"
                    autocomplete="username"
                    required
                    value="${state.account ?? ""}"
                  />`
          }
          <label for="password">Contraseña</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
          ${
            !state.secondFactor
              ? ""
              : merchant
                ? html`<label for="code">Código de verificación</label>
                    <input
                      id="code"
                      name="code"
                      type="text"
                      inputmode="numeric"
                      autocomplete="one-time-code"
                      pattern="[0-9]{6}"
                      maxlength="6"
                      required
                      aria-describedby="code-hint"
                    />
                    <p class="hint" id="code-hint">
                      Los 6 dígitos de tu app de autenticación (o del último email).
                    </p>`
                : html`<label for="client_secret">Client secret</label>
                    <input
                      id="client_secret"
                      name="client_secret"
                      type="password"
                      autocomplete="off"
                      required
                      aria-describedby="secret-hint"
                    />
                    <p class="hint" id="secret-hint">
                      El secreto de tu integración: lo pedimos como segundo factor.
                    </p>`
          }
          <p class="submit"><button class="primary" type="submit">Ingresar</button></p>
        </form>
        <p class="muted">
          ${
            merchant
              ? html`¿Sos partner? <a href="${PATH}/sign-in/partner">Ingresá como partner</a>.`
              : html`¿Sos comercio? <a href="${PATH}/sign-in">Ingresá como comercio</a>.`
          }
        </p>
        <p class="muted">
          ¿No tenés contraseña? Pedísela al operador de cobro (<code>cobro users set-password</code> o
          <code>cobro partners set-password</code>).
        </p>
      </section>`
    },
    status
  )
}

const MESSAGES: Record<string, string> = {
  "auth.login.invalid": "Los datos no coinciden con una cuenta. Revisalos y volvé a intentar.",
  "auth.login.second_factor_required": "Ingresá el código de verificación.",
  "second_factor.not_enrolled":
    "Tu cuenta no tiene un segundo factor configurado. Configuralo con la API o pedíselo al operador.",
  "second_factor.locked": "Hubo demasiados códigos incorrectos. Esperá 15 minutos y volvé a intentar."
}

export const make = (dash: DashboardKit) => {
  const { pages, sessions, settings } = dash
  const base = (who: Who, nonce: string, csrf: string) => ({
    who,
    nonce,
    csrf,
    secondFactor: settings.secondFactor,
    sandbox: settings.sandbox
  })

  const show = (who: Who) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* pages.newNonce
      const limit = yield* pages.limited(request)
      if (Option.isSome(limit)) return pages.tooMany(nonce, limit.value)
      const token = request.cookies[SESSION_COOKIE]
      if (token !== undefined) {
        const active = yield* sessions.resolve(token, {
          idle: settings.idleTimeout,
          absolute: settings.absoluteTimeout
        })
        if (Option.isSome(active)) return Shell.seeOther(PATH)
      }
      const csrf = yield* pages.csrf.issue(request.cookies[Csrf.COOKIE])
      return pages.withCsrfCookie(request, csrf)(formPage(base(who, nonce, csrf)))
    })

  const attempt = (who: Who, fields: Fields) => {
    const password = fields("password") ?? ""
    return who === "merchant"
      ? sessions.signInUser(
          { email: fields("email") ?? "", password, code: fields("code")?.trim() },
          { secondFactor: settings.secondFactor }
        )
      : sessions.signInPartner(
          {
            client_id: fields("client_id") ?? "",
            password,
            client_secret: fields("client_secret")?.trim()
          },
          { secondFactor: settings.secondFactor }
        )
  }

  const submit = (who: Who) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* pages.newNonce
      const limit = yield* pages.limited(request)
      if (Option.isSome(limit)) return pages.tooMany(nonce, limit.value)
      const fields = yield* dash.readForm(request, nonce)
      if (Either.isLeft(fields)) return fields.left
      const csrf = yield* pages.csrf.issue(request.cookies[Csrf.COOKIE])
      const account = ((who === "merchant" ? fields.right("email") : fields.right("client_id")) ?? "").trim()
      const again = (error: string, status: number) =>
        pages.withCsrfCookie(request, csrf)(formPage({ ...base(who, nonce, csrf), account, error }, status))
      if (!(yield* pages.csrf.verify(fields.right(Csrf.FIELD), request.cookies[Csrf.COOKIE]))) {
        return again("El formulario venció. Volvé a ingresar tus datos.", 403)
      }
      if (account === "")
        return again(who === "merchant" ? "Ingresá tu email." : "Ingresá tu client ID.", 400)
      const subject = `dashboard:${who}:${account.toLowerCase()}`
      const locked = yield* pages.locked(request, subject)
      if (Option.isSome(locked)) return pages.tooMany(nonce, locked.value)
      const signedIn = yield* Effect.either(attempt(who, fields.right))
      if (Either.isLeft(signedIn)) {
        const error = signedIn.left
        const key = error._tag === "Unauthenticated" ? error.key : "auth.login.invalid"
        if (key !== "auth.login.second_factor_required") yield* pages.failed(request, subject)
        return again(MESSAGES[key] ?? MESSAGES["auth.login.invalid"]!, 401)
      }
      // Rotation: the session the browser had, if any, ends; the new token replaces it.
      const previous = request.cookies[SESSION_COOKIE]
      if (previous !== undefined) yield* sessions.signOut(previous)
      yield* Effect.logInfo("dashboard: signed in").pipe(
        Effect.annotateLogs(
          signedIn.right.principal.kind === "user"
            ? { user_id: signedIn.right.principal.user_id }
            : { partner_id: signedIn.right.principal.partner_id }
        )
      )
      return dash.withSessionCookie(signedIn.right.token)(
        Shell.seeOther(signedIn.right.principal.kind === "user" ? PATH : `${PATH}/partner`)
      )
    })

  const signOut = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const nonce = yield* pages.newNonce
    const fields = yield* dash.readForm(request, nonce)
    if (Either.isLeft(fields)) return fields.left
    if (!(yield* pages.csrf.verify(fields.right(Csrf.FIELD), request.cookies[Csrf.COOKIE]))) {
      return Shell.message(
        { nonce, title: "El formulario venció", sandbox: settings.sandbox },
        403,
        "Volvé al panel y cerrá la sesión desde ahí."
      )
    }
    const token = request.cookies[SESSION_COOKIE]
    if (token !== undefined) yield* sessions.signOut(token)
    return dash.withoutSessionCookie(Shell.seeOther(`${PATH}/sign-in`))
  })

  return {
    showMerchant: show("merchant"),
    showPartner: show("partner"),
    submitMerchant: submit("merchant"),
    submitPartner: submit("partner"),
    signOut
  }
}
