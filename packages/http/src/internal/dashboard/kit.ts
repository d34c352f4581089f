/**
 * What every dashboard handler stands on: the signed-in session (from the `cobro_session`
 * cookie), the CSRF token of its forms, the page shell, and forms that are refused without a
 * valid token. A handler written with `page` or `form` never runs for a visitor without a live
 * session: GETs are sent to the sign-in page, POSTs too (after the session ended).
 *
 * The session cookie: `HttpOnly`, `SameSite=Lax`, `Path=/dashboard`, `Secure` when the settings
 * say so (production), its value a random token whose SHA-256 alone is stored (`WebSessions`).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import { type Ids, Principal, WebSessions } from "@cobro/core"
import { Duration, Effect, Either, Option } from "effect"
import type { DashboardSettings } from "../../HttpConfig.js"
import type { Html } from "../pages/html.js"
import * as Csrf from "../pages/csrf.js"
import type { PageKit, Response } from "../pages/shared.js"
import * as Shell from "./layout.js"

export const SESSION_COOKIE = "cobro_session"
export const PATH = "/dashboard"
/**
 * The merchant a signed-in partner opened (its user id; `POST /dashboard/partner/open`). Not a
 * grant: every request checks the partner's consent again (`Acting`).
 */
export const ACTING_COOKIE = "cobro_acting"

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i

/** A signed-in request, as its handler sees it. */
export interface Session {
  readonly request: HttpServerRequest.HttpServerRequest
  /** Who is signed in. */
  readonly principal: WebSessions.SessionPrincipal
  /** The CSRF token to put in every form of the page (`Csrf.FIELD`); its cookie is set on the answer. */
  readonly csrf: string
  /** The response's CSP nonce. */
  readonly nonce: string
}

/** A merchant's session: what the merchant pages' handlers get. */
export interface MerchantSession extends Session {
  /** The merchant whose pages these are (for a partner, the merchant it opened). */
  readonly principal: Extract<WebSessions.SessionPrincipal, { kind: "user" }>
  /**
   * The principal the core services are called with: the API's for a user token, or, for a
   * partner, the API's for its `PAR-` token for this merchant (`Principal.Partner`).
   */
  readonly asPrincipal: Principal.Principal
  /**
   * Set when a partner acts for the merchant: pages that no `PAR-` token may use (the merchant's
   * credentials) must not be offered.
   */
  readonly partner?: { readonly partner_id: Ids.PartnerId; readonly name: string } | undefined
}

/**
 * The merchant a partner may act for, as the API's partner access decides (a consent); none
 * otherwise.
 */
export type Acting = (
  partnerId: Ids.PartnerId,
  userId: string
) => Effect.Effect<
  Option.Option<{
    readonly merchant: Extract<WebSessions.SessionPrincipal, { kind: "user" }>
    readonly principal: Principal.Principal
  }>
>

/** A submitted form's fields (the first value of each name). */
export type Fields = (name: string) => string | undefined

/** A handler's answer, read from the request. */
export type Handled<R> = Effect.Effect<Response, never, R | HttpServerRequest.HttpServerRequest>

export interface DashboardKit {
  readonly pages: PageKit
  readonly settings: DashboardSettings
  readonly sessions: WebSessions.WebSessions
  /** A GET page behind a live session; without one, a 303 to the sign-in page. */
  readonly page: <R>(handler: (session: Session) => Effect.Effect<Response, never, R>) => Handled<R>
  /** `page` for merchants: a partner's session is sent to its own pages. */
  readonly merchantPage: <R>(
    handler: (session: MerchantSession) => Effect.Effect<Response, never, R>
  ) => Handled<R>
  /** A POST form behind a live session and a valid CSRF token (403 page otherwise). */
  readonly form: <R>(
    handler: (session: Session, fields: Fields) => Effect.Effect<Response, never, R>
  ) => Handled<R>
  /** `form` for merchants. */
  readonly merchantForm: <R>(
    handler: (session: MerchantSession, fields: Fields) => Effect.Effect<Response, never, R>
  ) => Handled<R>
  /** The shell of a signed-in page. */
  readonly shell: (
    session: Session,
    options: {
      readonly title: string
      readonly section?: Shell.Section
      readonly body: Html
      readonly status?: number
    }
  ) => Response
  /** A message page inside the shell of a signed-in page. */
  readonly message: (
    session: Session,
    options: {
      readonly title: string
      readonly section?: Shell.Section
      readonly status: number
      readonly text: string
    }
  ) => Response
  /** `response` with the session cookie set to `token` (sign-in). */
  readonly withSessionCookie: (token: string) => (response: Response) => Response
  /** `response` with the session cookie removed (sign-out). */
  readonly withoutSessionCookie: (response: Response) => Response
  /** `response` with the merchant a partner opened (`ACTING_COOKIE`) set to `userId`. */
  readonly withActingCookie: (userId: string) => (response: Response) => Response
  /** `response` with the merchant a partner opened forgotten. */
  readonly withoutActingCookie: (response: Response) => Response
  /** The form fields of `request`, or the page that refuses it (wrong type, unreadable). */
  readonly readForm: (
    request: HttpServerRequest.HttpServerRequest,
    nonce: string
  ) => Effect.Effect<Either.Either<Fields, Response>>
}

export const labelOf = (principal: WebSessions.SessionPrincipal): string =>
  principal.kind === "user" ? `${principal.name} (${principal.email})` : `${principal.name} (partner)`

/** Who the bar names: the signed-in principal, or a partner and the merchant it opened. */
const labelOfSession = (session: Session | MerchantSession): string =>
  "partner" in session && session.partner !== undefined
    ? `${session.partner.name} (partner), operando como ${session.principal.name}`
    : labelOf(session.principal)

const actingOf = (session: Session | MerchantSession): boolean =>
  "partner" in session && session.partner !== undefined

export const make = (
  pages: PageKit,
  settings: DashboardSettings,
  sessions: WebSessions.WebSessions,
  acting: Acting = () => Effect.succeed(Option.none())
): DashboardKit => {
  const lifetimes = { idle: settings.idleTimeout, absolute: settings.absoluteTimeout }
  const signInPage = Shell.seeOther(`${PATH}/sign-in`)

  const current = (request: HttpServerRequest.HttpServerRequest) => {
    const token = request.cookies[SESSION_COOKIE]
    return token === undefined ? Effect.succeed(Option.none()) : sessions.resolve(token, lifetimes)
  }

  const withCsrf = (request: HttpServerRequest.HttpServerRequest, token: string) => (response: Response) =>
    pages.withCsrfCookie(request, token)(response)

  const open = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const active = yield* current(request)
      if (Option.isNone(active)) return Option.none<Session>()
      return Option.some<Session>({
        request,
        principal: active.value.principal,
        csrf: yield* pages.csrf.issue(request.cookies[Csrf.COOKIE]),
        nonce: yield* pages.newNonce
      })
    })

  const page: DashboardKit["page"] = (handler) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const session = yield* open(request)
      if (Option.isNone(session)) return signInPage
      return withCsrf(request, session.value.csrf)(yield* handler(session.value))
    })

  const asMerchant = (session: Session): Effect.Effect<Option.Option<MerchantSession>> => {
    const principal = session.principal
    if (principal.kind === "user") {
      return Effect.succeed(
        Option.some({
          ...session,
          principal,
          asPrincipal: Principal.Principal.User({ user_id: principal.user_id })
        })
      )
    }
    // A partner: the merchant it opened, while its consent lasts.
    const opened = session.request.cookies[ACTING_COOKIE]
    if (opened === undefined || opened === "") return Effect.succeed(Option.none())
    return Effect.map(
      acting(principal.partner_id, opened),
      Option.map((granted): MerchantSession => ({
        ...session,
        principal: granted.merchant,
        asPrincipal: granted.principal,
        partner: { partner_id: principal.partner_id, name: principal.name }
      }))
    )
  }

  const partnerHome = Shell.seeOther(`${PATH}/partner`)

  const merchantPage: DashboardKit["merchantPage"] = (handler) =>
    page((session) =>
      Effect.flatMap(
        asMerchant(session),
        Option.match({ onNone: () => Effect.succeed(partnerHome), onSome: handler })
      )
    )

  const readForm: DashboardKit["readForm"] = (request, nonce) =>
    Effect.gen(function* () {
      const refused = (status: number) =>
        Shell.message(
          { nonce, title: "Formulario no válido", sandbox: settings.sandbox },
          status,
          "Enviá el formulario desde el panel."
        )
      if (!FORM_TYPE.test(request.headers["content-type"] ?? "")) return Either.left(refused(415))
      const body = yield* Effect.either(request.urlParamsBody)
      if (Either.isLeft(body)) return Either.left(refused(400))
      const params = body.right
      return Either.right((name: string) => Option.getOrUndefined(UrlParams.getFirst(params, name)))
    })

  const form: DashboardKit["form"] = (handler) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const session = yield* open(request)
      if (Option.isNone(session)) return signInPage
      const fields = yield* readForm(request, session.value.nonce)
      if (Either.isLeft(fields)) return fields.left
      if (!(yield* pages.csrf.verify(fields.right(Csrf.FIELD), request.cookies[Csrf.COOKIE]))) {
        return withCsrf(
          request,
          session.value.csrf
        )(
          message(session.value, {
            title: "El formulario venció",
            status: 403,
            text: "Por seguridad, aceptamos formularios solo desde el panel abierto hace menos de dos horas. Volvé a la página y envialo de nuevo."
          })
        )
      }
      return withCsrf(request, session.value.csrf)(yield* handler(session.value, fields.right))
    })

  const merchantForm: DashboardKit["merchantForm"] = (handler) =>
    form((session, fields) =>
      Effect.flatMap(
        asMerchant(session),
        Option.match({
          onNone: () => Effect.succeed(partnerHome),
          onSome: (merchant) => handler(merchant, fields)
        })
      )
    )

  const shell: DashboardKit["shell"] = (session, options) =>
    Shell.page(
      {
        nonce: session.nonce,
        title: options.title,
        section: options.section,
        body: options.body,
        sandbox: settings.sandbox,
        signedIn: {
          label: labelOfSession(session),
          csrf: session.csrf,
          partner: session.principal.kind === "partner",
          acting: actingOf(session)
        }
      },
      options.status ?? 200
    )

  const message: DashboardKit["message"] = (session, options) =>
    Shell.message(
      {
        nonce: session.nonce,
        title: options.title,
        section: options.section,
        sandbox: settings.sandbox,
        signedIn: {
          label: labelOfSession(session),
          csrf: session.csrf,
          partner: session.principal.kind === "partner",
          acting: actingOf(session)
        }
      },
      options.status,
      options.text
    )

  const cookie = (value: string, maxAge: Duration.DurationInput, name = SESSION_COOKIE) =>
    HttpServerResponse.unsafeSetCookie(name, value, {
      httpOnly: true,
      secure: settings.secureCookie,
      sameSite: "lax",
      path: PATH,
      maxAge
    })

  return {
    pages,
    settings,
    sessions,
    page,
    merchantPage,
    form,
    merchantForm,
    shell,
    message,
    readForm,
    withSessionCookie: (token) => cookie(token, settings.absoluteTimeout),
    withoutSessionCookie: cookie("", Duration.zero),
    withActingCookie: (userId) => cookie(userId, settings.absoluteTimeout, ACTING_COOKIE),
    withoutActingCookie: cookie("", Duration.zero, ACTING_COOKIE)
  }
}
