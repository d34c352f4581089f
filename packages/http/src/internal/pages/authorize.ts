/**
 * The onboarding page a partner sends a merchant to: create an account or sign in, and in the
 * same step authorize the partner. Both forms post to the page's own URL (no `action`, so the
 * page works under any mount prefix) with the partner's request in hidden fields and the CSRF
 * token. Errors come back next to their field; entered values are kept, passwords never.
 */
import type { Onboarding } from "@cobro/core"
import * as Csrf from "./csrf.js"
import { html, type Html } from "./html.js"
import type { Page } from "./layout.js"

export type FormName = "register" | "signin"

/** What the partner put in the link, carried through the forms untouched. */
export interface PartnerRequest {
  readonly partner_id: string
  readonly state?: string | undefined
  readonly redirect_uri?: string | undefined
  readonly referred_user_id?: string | undefined
}

export interface FormState {
  readonly values: Readonly<Record<string, string>>
  /** Messages keyed by field (`name`, `email`, `cuit`, `password`, `consent`) or `form`. */
  readonly errors: Readonly<Record<string, string>>
}

export interface AuthorizePageModel {
  readonly partner: Onboarding.PartnerDisplay
  readonly request: PartnerRequest
  /** Host of the partner's redirect URL, shown so the user knows where they are going back to. */
  readonly returnHost: string
  readonly csrf: string
  readonly nonce: string
  /** Which form was submitted, with its values and errors. */
  readonly submitted?: { readonly form: FormName; readonly state: FormState }
  /** A message about the whole page (an expired form, too many attempts). */
  readonly banner?: string
}

const hidden = (name: string, value: string | undefined): Html =>
  value === undefined ? html`` : html`<input type="hidden" name="${name}" value="${value}" />`

interface InputSpec {
  readonly form: FormName
  readonly name: string
  readonly label: string
  readonly type: "text" | "email" | "password"
  readonly autocomplete: string
  readonly hint?: string
  readonly extra?: Html
}

export const page = (model: AuthorizePageModel): Page => {
  const partner = model.partner.name
  const stateOf = (form: FormName): FormState =>
    model.submitted?.form === form ? model.submitted.state : { values: {}, errors: {} }
  // The first field with an error takes the focus, so keyboard and screen-reader users land on it.
  let focused = false

  const input = (spec: InputSpec): Html => {
    const { values, errors } = stateOf(spec.form)
    const id = `${spec.form}-${spec.name}`
    const error = errors[spec.name]
    const described = [spec.hint === undefined ? "" : `${id}-hint`, error === undefined ? "" : `${id}-error`]
      .filter((s) => s !== "")
      .join(" ")
    const autofocus = error !== undefined && !focused
    if (autofocus) focused = true
    return html`<label for="${id}">${spec.label}</label>
      <input
        id="${id}"
        name="${spec.name}"
        type="${spec.type}"
        autocomplete="${spec.autocomplete}"
        required${spec.extra}${
          spec.type === "password" ? "" : html` value="${values[spec.name] ?? ""}"`
        }${described === "" ? "" : html` aria-describedby="${described}"`}${
          error === undefined ? "" : html` aria-invalid="true"`
        }${autofocus ? html` autofocus` : ""}
      />
      ${spec.hint === undefined ? "" : html`<p class="hint" id="${id}-hint">${spec.hint}</p>`}
      ${error === undefined ? "" : html`<p class="error" id="${id}-error">${error}</p>`}`
  }

  const consent = (form: FormName): Html => {
    const id = `${form}-consent`
    const { values, errors } = stateOf(form)
    const error = errors["consent"]
    const autofocus = error !== undefined && !focused
    if (autofocus) focused = true
    return html`<div class="consent">
        <input
          type="checkbox"
          id="${id}"
          name="consent"
          value="yes"
          required${values["consent"] === "yes" ? html` checked` : ""}${
            error === undefined ? "" : html` aria-invalid="true" aria-describedby="${id}-error"`
          }${autofocus ? html` autofocus` : ""}
        />
        <label for="${id}"
          >Autorizo a <strong>${partner}</strong> a operar mi cuenta de cobro: crear cobros, consultar mis
          pagos y configurar mi cuenta.</label
        >
      </div>
      ${error === undefined ? "" : html`<p class="error" id="${id}-error">${error}</p>`}`
  }

  const formError = (form: FormName): Html => {
    const error = stateOf(form).errors["form"]
    return error === undefined ? html`` : html`<p class="state err" role="alert">${error}</p>`
  }

  const common = (form: FormName): Html =>
    html`${hidden(Csrf.FIELD, model.csrf)} ${hidden("form", form)}
    ${hidden("partner_id", model.request.partner_id)} ${hidden("state", model.request.state)}
    ${hidden("redirect_uri", model.request.redirect_uri)}
    ${hidden("referred_user_id", model.request.referred_user_id)}`

  const body = html`<section class="card" aria-labelledby="title">
      <h1 id="title">Conectá tu cuenta con ${partner}</h1>
      <p>
        ${partner} quiere cobrar por transferencia en tu nombre con cobro. Creá una cuenta o iniciá sesión y
        autorizalo.
      </p>
      <p class="muted">Después vas a volver a <strong>${model.returnHost}</strong>.</p>
      ${model.banner === undefined ? "" : html`<p class="state err" role="alert">${model.banner}</p>`}
    </section>
    <div class="grid">
      <section class="card" aria-labelledby="register-title">
        <h2 id="register-title">Crear una cuenta</h2>
        ${formError("register")}
        <form method="post" data-busy="Creando tu cuenta…">
          ${common("register")}
          ${input({ form: "register", name: "name", label: "Nombre o razón social", type: "text", autocomplete: "organization", extra: html` maxlength="200"` })}
          ${input({ form: "register", name: "email", label: "Email", type: "email", autocomplete: "email", extra: html` maxlength="254"` })}
          ${input({
            form: "register",
            name: "cuit",
            label: "CUIT",
            type: "text",
            autocomplete: "off",
            hint: "11 dígitos, con o sin guiones.",
            extra: html` inputmode="numeric" maxlength="13"`
          })}
          ${input({
            form: "register",
            name: "password",
            label: "Contraseña",
            type: "password",
            autocomplete: "new-password",
            hint: "Al menos 8 caracteres.",
            extra: html` minlength="8" maxlength="256"`
          })}
          ${consent("register")}
          <button type="submit" class="primary">Crear cuenta y autorizar</button>
        </form>
      </section>
      <section class="card" aria-labelledby="signin-title">
        <h2 id="signin-title">Ya tengo una cuenta</h2>
        ${formError("signin")}
        <form method="post" data-busy="Ingresando…">
          ${common("signin")}
          ${input({ form: "signin", name: "email", label: "Email", type: "email", autocomplete: "username" })}
          ${input({ form: "signin", name: "password", label: "Contraseña", type: "password", autocomplete: "current-password" })}
          ${consent("signin")}
          <button type="submit" class="primary">Iniciar sesión y autorizar</button>
        </form>
      </section>
    </div>`

  return {
    title: `Conectá tu cuenta con ${partner} · cobro`,
    nonce: model.nonce,
    body,
    wide: true,
    script: SCRIPT
  }
}

/** One submission at a time: password hashing takes a moment, and a second click would register twice. */
const SCRIPT = `(() => {
  "use strict"
  const forms = document.querySelectorAll("form[data-busy]")
  for (const form of forms) {
    const button = form.querySelector("button[type=submit]")
    const label = button ? button.textContent : ""
    form.addEventListener("submit", (event) => {
      if (form.dataset.sent) return event.preventDefault()
      form.dataset.sent = "1"
      if (button) {
        button.disabled = true
        button.textContent = form.dataset.busy
      }
    })
    // Coming back with the browser's back button shows the page as it was left: usable again.
    addEventListener("pageshow", () => {
      delete form.dataset.sent
      if (button) {
        button.disabled = false
        button.textContent = label
      }
    })
  }
})()
`
