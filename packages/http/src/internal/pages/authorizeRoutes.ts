/**
 * Partner onboarding: `GET /authorize?partner_id=…` (and `/authorize/{partner_id}`) shows the
 * page; `POST` of its form, `application/x-www-form-urlencoded`, registers or signs the user in
 * and answers a 303 to the partner's redirect URL with `code` and `state`.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import { Auth, type Ids, Onboarding } from "@cobro/core"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { ApiError } from "../../ApiError.js"
import * as Input from "../input.js"
import * as AuthorizePage from "./authorize.js"
import * as Csrf from "./csrf.js"
import * as Layout from "./layout.js"
import type { PageKit } from "./shared.js"

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** Only the keys whose value is present, so optional schema fields stay absent. */
const defined = <A extends Record<string, string | undefined>>(record: A): Partial<A> =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<A>

/** Spanish messages for the onboarding fields (the core's messages are English, for developers). */
const FIELD_MESSAGES: Record<AuthorizePage.FormName, Record<string, string>> = {
  register: {
    name: "Ingresá tu nombre o razón social (hasta 200 caracteres).",
    email: "Ingresá un email válido, como nombre@ejemplo.com.",
    cuit: "Ingresá un CUIT válido: 11 dígitos, con o sin guiones.",
    password: "La contraseña tiene que tener entre 8 y 256 caracteres."
  },
  signin: {
    email: "Ingresá un email válido, como nombre@ejemplo.com.",
    password: "Ingresá tu contraseña."
  }
}

/** Every field that breaks `schema`, with its Spanish message. */
const fieldErrors = <A, I>(
  schema: Schema.Schema<A, I>,
  form: AuthorizePage.FormName,
  input: unknown
): Either.Either<A, Record<string, string>> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(input),
    (error) => {
      const errors: Record<string, string> = {}
      for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
        const field = String(issue.path[0] ?? "form")
        errors[field] ??= FIELD_MESSAGES[form][field] ?? "Revisá los datos ingresados."
      }
      return errors
    }
  )

export const make = ({ newNonce, limited, locked, failed, csrf, withCsrfCookie }: PageKit) =>
  Effect.gen(function* () {
    const onboarding = yield* Onboarding.Onboarding
    const auth = yield* Auth.Auth

    interface Resolved {
      readonly request: Onboarding.AuthorizeRequest
      readonly partner: Onboarding.PartnerDisplay
      readonly redirectUrl: URL
    }

    /** The partner's request checked and its partner found, or the page explaining why not. */
    const resolve = (input: AuthorizePage.PartnerRequest, nonce: string) =>
      Effect.gen(function* () {
        const invalidLink = (message: string) =>
          Layout.messagePage({
            nonce,
            status: 400,
            title: "El enlace no es válido",
            message,
            hint: "Volvé al sitio desde el que llegaste y pedí un enlace nuevo."
          })
        if (input.partner_id === undefined || input.partner_id === "") {
          return Either.left(
            invalidLink("El enlace no indica qué aplicación querés autorizar (falta partner_id).")
          )
        }
        const unstorable = Object.entries(input).find(
          ([, value]) => value !== undefined && Option.isSome(Input.unstorable(value))
        )
        if (unstorable !== undefined) {
          return Either.left(invalidLink(`El dato «${unstorable[0]}» del enlace no es válido.`))
        }
        const outcome = yield* Effect.either(
          Effect.gen(function* () {
            const request = yield* Onboarding.decodeAuthorizeRequest(defined({ ...input }))
            const partner = yield* onboarding.authorize(request)
            const registered = yield* auth.getPartner(request.partner_id)
            return { request, partner, redirectUrl: new URL(registered.redirect_url) } satisfies Resolved
          })
        )
        if (Either.isRight(outcome)) return Either.right(outcome.right)
        const error = outcome.left
        if (error._tag === "NotFound") {
          return Either.left(
            Layout.messagePage({
              nonce,
              status: 404,
              title: "No encontramos esta aplicación",
              message: `El enlace te trajo para autorizar a una aplicación que no existe («${input.partner_id}»).`,
              hint: "Volvé al sitio desde el que llegaste y pedí un enlace nuevo."
            })
          )
        }
        return Either.left(
          invalidLink(
            error.field === "redirect_uri"
              ? "La dirección de regreso del enlace no coincide con la registrada por la aplicación."
              : `El dato «${error.field}» del enlace no es válido.`
          )
        )
      })

    /** The onboarding page, with a CSRF token in its cookie and forms. */
    const renderAuthorize = (
      request: HttpServerRequest.HttpServerRequest,
      resolved: Resolved,
      input: AuthorizePage.PartnerRequest,
      options: {
        readonly nonce: string
        readonly status: number
        readonly submitted?: {
          readonly form: AuthorizePage.FormName
          readonly state: AuthorizePage.FormState
        }
        readonly banner?: string
        readonly headers?: Record<string, string>
      }
    ) =>
      Effect.map(csrf.issue(request.cookies[Csrf.COOKIE]), (token) =>
        Layout.respond(
          AuthorizePage.page({
            partner: resolved.partner,
            request: { ...input, partner_id: resolved.request.partner_id },
            returnHost: resolved.redirectUrl.host,
            csrf: token,
            nonce: options.nonce,
            ...(options.submitted === undefined ? {} : { submitted: options.submitted }),
            ...(options.banner === undefined ? {} : { banner: options.banner })
          }),
          {
            status: options.status,
            // The form's 303 goes to the partner: CSP form-action must allow its origin.
            formTargets: [resolved.redirectUrl.origin],
            ...(options.headers === undefined ? {} : { headers: options.headers })
          }
        ).pipe(withCsrfCookie(request, token))
      )

    const show = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* newNonce
      const params = yield* HttpRouter.params
      const query = yield* HttpServerRequest.ParsedSearchParams
      const input: AuthorizePage.PartnerRequest = {
        partner_id: params["partnerId"] ?? first(query["partner_id"]) ?? "",
        state: first(query["state"]),
        redirect_uri: first(query["redirect_uri"]),
        referred_user_id: first(query["referred_user_id"])
      }
      const resolved = yield* resolve(input, nonce)
      if (Either.isLeft(resolved)) return resolved.left
      return yield* renderAuthorize(request, resolved.right, input, { nonce, status: 200 })
    })

    const submit = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* newNonce
      if (!FORM_TYPE.test(request.headers["content-type"] ?? "")) {
        return Layout.messagePage({
          nonce,
          status: 415,
          title: "Formulario no válido",
          message: "Enviá el formulario desde la página de autorización."
        })
      }
      const body = yield* Effect.either(request.urlParamsBody)
      if (Either.isLeft(body)) {
        return Layout.messagePage({
          nonce,
          status: 400,
          title: "Formulario no válido",
          message: "No pudimos leer el formulario. Volvé a la página de autorización e intentá de nuevo."
        })
      }
      // A NUL or a lone surrogate cannot be stored as typed (Postgres refuses a NUL outright).
      if (
        body.right.some(
          ([name, value]) => Option.isSome(Input.unstorable(name)) || Option.isSome(Input.unstorable(value))
        )
      ) {
        return Layout.messagePage({
          nonce,
          status: 400,
          title: "Formulario no válido",
          message:
            "El formulario tiene caracteres que no podemos guardar. Revisá los datos e intentá de nuevo."
        })
      }
      const field = (name: string) => Option.getOrUndefined(UrlParams.getFirst(body.right, name))
      const params = yield* HttpRouter.params
      const input: AuthorizePage.PartnerRequest = {
        partner_id: field("partner_id") ?? params["partnerId"] ?? "",
        state: field("state"),
        redirect_uri: field("redirect_uri"),
        referred_user_id: field("referred_user_id")
      }
      const resolved = yield* resolve(input, nonce)
      if (Either.isLeft(resolved)) return resolved.left
      const { partner, request: authorizeRequest } = resolved.right

      const form = field("form")
      if (form !== "register" && form !== "signin") {
        return Layout.messagePage({
          nonce,
          status: 400,
          title: "Formulario no válido",
          message: "Volvé a la página de autorización e intentá de nuevo."
        })
      }
      // What the page shows again on an error: what was typed, never the password.
      const values: Record<string, string> = {}
      for (const name of form === "register" ? ["name", "email", "cuit", "consent"] : ["email", "consent"]) {
        const value = field(name)
        if (value !== undefined) values[name] = value
      }
      const again = (
        status: number,
        errors: Record<string, string>,
        extra: { readonly banner?: string; readonly headers?: Record<string, string> } = {}
      ) =>
        renderAuthorize(request, resolved.right, input, {
          nonce,
          status,
          submitted: { form, state: { values, errors } },
          ...extra
        })

      if (!(yield* csrf.verify(field(Csrf.FIELD), request.cookies[Csrf.COOKIE]))) {
        return yield* again(
          403,
          {},
          {
            banner:
              "Por seguridad no pudimos aceptar el formulario (estuvo abierto mucho tiempo o tu navegador bloquea las cookies). Revisá los datos y volvé a enviarlo."
          }
        )
      }

      const tooMany = (refusal: ApiError) => {
        const seconds = refusal.retry_after ?? 60
        return again(
          429,
          { form: `Demasiados intentos. Esperá ${seconds} segundos y volvé a probar.` },
          { headers: { "retry-after": String(seconds) } }
        )
      }
      // Every submission counts toward the address's public limit; a sign-in's wrong password
      // counts as a wrong secret for its e-mail and the address (the API's brute-force guard).
      const limit = yield* limited(request)
      if (Option.isSome(limit)) return yield* tooMany(limit.value)
      const subject = `email:${(field("email") ?? "").trim().toLowerCase()}`

      const consentError =
        field("consent") === "yes" ? {} : { consent: `Para continuar tenés que autorizar a ${partner.name}.` }

      let userId: Ids.UserId
      if (form === "register") {
        const decoded = fieldErrors(Onboarding.RegisterRequest, "register", {
          partner_id: authorizeRequest.partner_id,
          name: field("name") ?? "",
          email: field("email") ?? "",
          cuit: field("cuit") ?? "",
          password: field("password") ?? ""
        })
        if (Either.isLeft(decoded) || "consent" in consentError) {
          return yield* again(400, { ...(Either.isLeft(decoded) ? decoded.left : {}), ...consentError })
        }
        const created = yield* Effect.either(onboarding.register(decoded.right))
        if (Either.isLeft(created)) {
          const error = created.left
          if (error._tag === "Conflict" && error.key === "user.email.taken") {
            return yield* again(409, {
              email: "Ya hay una cuenta con este email. Iniciá sesión en «Ya tengo una cuenta»."
            })
          }
          return yield* again(409, {
            form: "No pudimos crear la cuenta con estos datos. Revisalos e intentá de nuevo."
          })
        }
        userId = created.right.user.user_id
      } else {
        const decoded = fieldErrors(Onboarding.SignInRequest, "signin", {
          email: field("email") ?? "",
          password: field("password") ?? ""
        })
        const passwordError =
          (field("password") ?? "") === "" ? { password: FIELD_MESSAGES.signin["password"]! } : {}
        if (Either.isLeft(decoded) || "consent" in consentError || "password" in passwordError) {
          return yield* again(400, {
            ...(Either.isLeft(decoded) ? decoded.left : {}),
            ...passwordError,
            ...consentError
          })
        }
        const lockout = yield* locked(request, subject)
        if (Option.isSome(lockout)) return yield* tooMany(lockout.value)
        const user = yield* Effect.either(onboarding.signIn(decoded.right))
        if (Either.isLeft(user)) {
          yield* failed(request, subject)
          return yield* again(401, { form: "El email o la contraseña no son correctos." })
        }
        userId = user.right.user_id
      }

      const redirect = yield* Effect.either(onboarding.consent(userId, authorizeRequest))
      if (Either.isLeft(redirect)) {
        return Layout.messagePage({
          nonce,
          status: redirect.left._tag === "NotFound" ? 404 : 400,
          title: "No pudimos completar la autorización",
          message: "Volvé al sitio desde el que llegaste e intentá de nuevo."
        })
      }
      return HttpServerResponse.redirect(redirect.right.redirect_url, {
        status: 303,
        headers: { "referrer-policy": "no-referrer", "cache-control": "no-store" }
      })
    })

    return { show, submit }
  })
