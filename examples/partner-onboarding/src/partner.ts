/**
 * A partner's site: a platform that lets its merchants take bank-transfer payments through cobro.
 * It onboards a merchant the way SPEC describes (plain node:http and `fetch`, no cobro library):
 *
 * 1. `GET /connect` sends the browser to cobro's `/authorize?partner_id=…&state=…`. `state` is a
 *    fresh random value bound to the browser's session, so the callback can tell the merchant it
 *    sent from someone replaying or forging a callback link.
 * 2. The merchant registers (or signs in) on cobro's page and consents.
 * 3. cobro sends the browser to `GET /callback?code=…&state=…`. The site checks `state` against the
 *    session and forgets it (a reload or a second visit cannot exchange again), then exchanges the
 *    code at POST /auth/tokens with its client id and secret, server to server.
 * 4. With the `PAR-` token it acts for that merchant: reads the account (GET
 *    /users/{user_id}/account, partner tokens only) and creates payments attributed to itself.
 *
 * The code is valid 5 minutes and works once: exchanging it twice fails with `auth.code.used` and
 * revokes the token the first exchange gave, which is why step 3 forgets `state` before it calls.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type { PartnerCredentials } from "./cobro.js"
import { close, listen } from "./loopback.js"

/** SPEC's Account, as GET /users/{user_id}/account returns it; a field without a value is absent. */
export interface Account {
  readonly account_status: "ACTIVE" | "PENDING" | "REJECTED" | "SUSPENDED"
  readonly user_id: string
  readonly alias_prefix?: string
  readonly cancellation_period?: number
  readonly cancellation_period_minutes?: number
  readonly partner_config?: {
    readonly partner_id: string
    readonly partner_name: string
    readonly partner_slug: string
    readonly commission: number
  }
}

/** A merchant that connected its cobro account to this partner. */
export interface Connection {
  readonly user_id: string
  /** The `PAR-` token: keep it server side, like a password. */
  readonly access_token: string
  /** The account as read right after the exchange. */
  readonly account: Account
}

export interface Order {
  readonly external_id: string
  /** Pesos (the API takes a decimal amount in ARS). */
  readonly amount: number
  readonly motive?: string
}

/** A payment the partner created for a merchant, as GET /payments/{id} shows it. */
export interface Payment {
  readonly id: string
  readonly payment_status: string
  readonly payment_url: string
  readonly external_id: string
  readonly price: { readonly amount: number; readonly currency: string }
  readonly quotes: ReadonlyArray<{ readonly address: string; readonly alias: string }>
}

/** cobro answered an error: `key` is the envelope's `message` (`auth.code.used`, …). */
export class CobroApiError extends Error {
  constructor(
    readonly request: string,
    readonly status: number,
    readonly key: string
  ) {
    super(`${request} answered ${status} ${key}`)
    this.name = "CobroApiError"
  }
}

export interface PartnerSiteOptions {
  /** The site's port (0: any free port). */
  readonly port: number
  readonly cobroUrl: string
  /** Registers the partner with cobro for the site's callback URL (done once, with support). */
  readonly register: (redirectUrl: string) => Promise<PartnerCredentials>
  /** Called after a merchant connected (not awaited: the merchant's browser does not wait for it). */
  readonly onConnected?: (connection: Connection) => void | Promise<void>
  /** Where the site narrates what it does. */
  readonly log?: (line: string) => void
}

export interface PartnerSite {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly credentials: PartnerCredentials
  /** Connected merchants by cobro `user_id`; a merchant that connects again replaces its entry. */
  readonly connections: ReadonlyMap<string, Connection>
  /** GET /users/{user_id}/account with the merchant's token. */
  readonly readAccount: (userId: string) => Promise<Account>
  /**
   * A payment for a connected merchant (POST /payments/ with `partner_id`), confirmed with
   * GET /payments/{id} and the merchant's token. The account must be ACTIVE.
   */
  readonly createPayment: (userId: string, order: Order) => Promise<Payment>
  readonly close: () => Promise<void>
}

const SESSION_COOKIE = "partner_sid"
/** How long the merchant may take on cobro's page (registering included) before coming back. */
const STATE_LIFETIME_MS = 10 * 60 * 1000

interface Session {
  /** The `state` sent with the last `/connect`, until its callback arrives. */
  pending?: { readonly state: string; readonly expiresAt: number }
  /** The merchant this browser connected. */
  userId?: string
}

const randomToken = () => Crypto.randomBytes(24).toString("base64url")

const sameText = (a: string, b: string) =>
  a.length === b.length && Crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** `PAR-abcd…`: enough to tell tokens apart in a log, never the whole secret. */
export const mask = (token: string) => `${token.slice(0, 8)}…`

const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!
  )

const cookieOf = (request: Http.IncomingMessage, name: string): string | undefined => {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=")
    if (key === name) return value.join("=")
  }
  return undefined
}

const page = (response: Http.ServerResponse, status: number, title: string, body: string) => {
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer"
  })
  response.end(
    `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
      `<body><h1>${escape(title)}</h1>${body}</body></html>`
  )
}

/** Starts the site: listens first, since the callback URL registered with cobro needs the port. */
export const startPartnerSite = async (options: PartnerSiteOptions): Promise<PartnerSite> => {
  const log = options.log ?? (() => {})
  const server = Http.createServer()
  const url = await listen(server, options.port)
  const callbackUrl = `${url}/callback`
  const credentials = await options.register(callbackUrl)
  const sessions = new Map<string, Session>()
  const connections = new Map<string, Connection>()

  /** A call to cobro's API; the `data` of its envelope, or `CobroApiError` with the error's key. */
  const cobro = async <A>(method: string, path: string, init: { token?: string; body?: unknown } = {}) => {
    const response = await fetch(`${options.cobroUrl}${path}`, {
      method,
      headers: {
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` })
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(10_000)
    })
    const envelope = (await response.json().catch(() => ({}))) as { message?: string; data?: unknown }
    if (!response.ok) {
      throw new CobroApiError(`${method} ${path}`, response.status, envelope.message ?? "unknown")
    }
    return envelope.data as A
  }

  const tokenOf = (userId: string) => {
    const connection = connections.get(userId)
    if (connection === undefined) throw new Error(`merchant ${userId} has not connected`)
    return connection.access_token
  }

  const readAccount = (userId: string) =>
    cobro<Account>("GET", `/users/${encodeURIComponent(userId)}/account`, { token: tokenOf(userId) })

  const createPayment = async (userId: string, order: Order) => {
    const token = tokenOf(userId)
    // POST /payments/ is public: `user_id` names the merchant, `partner_id` attributes the payment.
    const created = await cobro<{ id: string }>("POST", "/payments/", {
      body: {
        user_id: userId,
        partner_id: credentials.partner_id,
        external_id: order.external_id,
        price: { amount: order.amount, currency: "ARS" },
        payment_options: ["transfer"],
        ...(order.motive === undefined ? {} : { motive: order.motive })
      }
    })
    // Read back with the merchant's token: it exists, and it is this merchant's.
    const payment = await cobro<Payment>("GET", `/payments/${encodeURIComponent(created.id)}`, { token })
    log(`payment ${payment.id} for ${userId}: ${payment.payment_status}, pay at ${payment.payment_url}`)
    return payment
  }

  const sessionOf = (request: Http.IncomingMessage, response: Http.ServerResponse): Session => {
    const id = cookieOf(request, SESSION_COOKIE)
    const existing = id === undefined ? undefined : sessions.get(id)
    if (existing !== undefined) return existing
    const fresh: Session = {}
    const newId = randomToken()
    sessions.set(newId, fresh)
    // Lax, not Strict: the callback is a top-level navigation coming from cobro's site.
    response.setHeader("set-cookie", `${SESSION_COOKIE}=${newId}; HttpOnly; SameSite=Lax; Path=/`)
    return fresh
  }

  const home = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const session = sessionOf(request, response)
    const connection = session.userId === undefined ? undefined : connections.get(session.userId)
    if (connection === undefined) {
      return page(
        response,
        200,
        "Tienda Socia",
        `<p>Cobrá por transferencia con cobro.</p><p><a href="/connect">Conectar mi cuenta de cobro</a></p>`
      )
    }
    page(
      response,
      200,
      "Tienda Socia",
      `<p>Cuenta de cobro conectada: <strong id="user-id">${escape(connection.user_id)}</strong>, ` +
        `estado <strong id="account-status">${escape(connection.account.account_status)}</strong>.</p>`
    )
  }

  const connect = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const session = sessionOf(request, response)
    const state = randomToken()
    session.pending = { state, expiresAt: Date.now() + STATE_LIFETIME_MS }
    // Appended, not resolved: cobro may be mounted under a path (`https://host/api/cobro`).
    const authorize = new URL(`${options.cobroUrl.replace(/\/+$/, "")}/authorize`)
    authorize.searchParams.set("partner_id", credentials.partner_id)
    authorize.searchParams.set("state", state)
    log(`connect: browser sent to ${authorize.origin}/authorize`)
    response.writeHead(302, { location: authorize.toString(), "cache-control": "no-store" }).end()
  }

  const callback = async (
    request: Http.IncomingMessage,
    response: Http.ServerResponse,
    query: URLSearchParams
  ) => {
    const session = sessionOf(request, response)
    const pending = session.pending
    const state = query.get("state") ?? ""
    const code = query.get("code") ?? ""
    const again = `<p><a href="/connect">Volver a conectar</a></p>`
    // Checked before anything else and forgotten at once: a callback is honoured once per /connect.
    if (
      pending === undefined ||
      !sameText(state, pending.state) ||
      Date.now() > pending.expiresAt ||
      code === ""
    ) {
      log("callback refused: its state is not the one this browser was sent with (or was used already)")
      return page(
        response,
        400,
        "El enlace de regreso no es válido",
        `<p>Ya se usó o no es tuyo.</p>${again}`
      )
    }
    delete session.pending

    let grant: { access_token: string; user_id: string }
    try {
      grant = await cobro("POST", "/auth/tokens", {
        body: { code, client_id: credentials.client_id, client_secret: credentials.client_secret }
      })
    } catch (error) {
      const key = error instanceof CobroApiError ? error.key : String(error)
      log(`callback: the code exchange failed (${key})`)
      return page(
        response,
        502,
        "No pudimos conectar tu cuenta",
        `<p>cobro respondió ${escape(key)}.</p>${again}`
      )
    }
    log(`callback: code exchanged for ${mask(grant.access_token)} acting for ${grant.user_id}`)
    const account = await cobro<Account>("GET", `/users/${encodeURIComponent(grant.user_id)}/account`, {
      token: grant.access_token
    })
    const connection: Connection = { user_id: grant.user_id, access_token: grant.access_token, account }
    connections.set(grant.user_id, connection)
    session.userId = grant.user_id
    log(
      `account ${account.user_id}: ${account.account_status}, onboarded by ${account.partner_config?.partner_name}`
    )
    if (options.onConnected !== undefined) {
      Promise.resolve()
        .then(() => options.onConnected!(connection))
        .catch((error: unknown) => log(`after connecting ${grant.user_id}: ${String(error)}`))
    }
    // Off the callback URL, so a reload does not come back with the code.
    response
      .writeHead(303, { location: "/", "cache-control": "no-store", "referrer-policy": "no-referrer" })
      .end()
  }

  const route = async (request: Http.IncomingMessage, response: Http.ServerResponse, target: URL) => {
    if (request.method === "GET" && target.pathname === "/") return home(request, response)
    if (request.method === "GET" && target.pathname === "/connect") return connect(request, response)
    if (request.method === "GET" && target.pathname === "/callback") {
      return callback(request, response, target.searchParams)
    }
    page(response, 404, "No encontrado", "")
  }

  server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const target = new URL(request.url ?? "/", url)
    route(request, response, target).catch((error: unknown) => {
      log(`${request.method} ${target.pathname} failed: ${String(error)}`)
      if (!response.headersSent) page(response, 500, "Algo salió mal", "")
      else response.end()
    })
  })

  return {
    url,
    credentials,
    connections,
    readAccount,
    createPayment,
    close: () => close(server)
  }
}
