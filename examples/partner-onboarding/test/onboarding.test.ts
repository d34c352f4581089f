/**
 * The onboarding flow end to end over real HTTP: cobro and the partner's site on random loopback
 * ports, and a merchant's "browser" made of `fetch`, a cookie jar and a form reader (the page's
 * forms are plain HTML posts, so no Chromium is needed). Asserts what a partner relies on: the
 * redirect back carries its `state`, the code exchanges once, and the token acts for that
 * merchant only.
 */
import { BankAccount } from "@cobro/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Cobro, type PartnerCredentials, startCobro } from "../src/cobro.js"
import { type PartnerSite, startPartnerSite } from "../src/partner.js"

let cobro: Cobro
let site: PartnerSite
let credentials: PartnerCredentials

// One cobro with its default rate limits, as a partner meets it: POST /auth/tokens refuses a
// client id after 10 wrong secrets a minute (this file sends none) and issues up to 1200.
beforeAll(async () => {
  cobro = await startCobro(0)
  site = await startPartnerSite({
    port: 0,
    cobroUrl: cobro.url,
    register: async (redirect_url) => {
      credentials = await cobro.registerPartner({ name: "Tienda Socia", redirect_url })
      return credentials
    }
  })
})

afterAll(async () => {
  await site?.close()
  await cobro?.close()
})

// ---------------------------------------------------------------------------------------------
// The merchant's browser

interface Visit {
  readonly url: string
  readonly status: number
  readonly location: string | undefined
  readonly text: string
}

/** Follows nothing by itself (each hop is asserted); keeps cookies per origin, as far as it needs. */
const browser = () => {
  const jar = new Map<string, Map<string, string>>()
  const send = async (url: string, init: RequestInit = {}): Promise<Visit> => {
    const origin = new URL(url).origin
    const cookies = jar.get(origin) ?? new Map<string, string>()
    jar.set(origin, cookies)
    const headers = new Headers(init.headers)
    if (cookies.size > 0) headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "))
    const response = await fetch(url, { ...init, headers, redirect: "manual" })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const at = pair!.indexOf("=")
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim())
    }
    const location = response.headers.get("location") ?? undefined
    return {
      url,
      status: response.status,
      location: location === undefined ? undefined : new URL(location, url).toString(),
      text: await response.text()
    }
  }
  return {
    get: (url: string) => send(url),
    post: (url: string, fields: Record<string, string>) =>
      send(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString()
      })
  }
}
type Browser = ReturnType<typeof browser>

const unescape = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) =>
    e === "amp" ? "&" : e === "lt" ? "<" : e === "gt" ? ">" : e === "quot" ? '"' : e === "#39" ? "'" : "`"
  )

const attributes = (tag: string) =>
  Object.fromEntries(
    [...tag.matchAll(/([a-z][a-z0-9_-]*)(?:="([^"]*)")?/gi)].map((m) => [
      m[1]!.toLowerCase(),
      unescape(m[2] ?? "")
    ])
  )

interface Form {
  /** Where it posts: its `action` resolved against the page, the page itself without one. */
  readonly action: string
  readonly method: string
  readonly hidden: Record<string, string>
  /** The names of the fields a person fills in or ticks. */
  readonly visible: ReadonlyArray<string>
}

/** The page's forms, read the way a browser would submit them. */
const formsOf = (page: Visit): Array<Form> =>
  [...page.text.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map((m) => {
    const form = attributes(m[1]!)
    const hidden: Record<string, string> = {}
    const visible: Array<string> = []
    for (const input of m[2]!.matchAll(/<input\b([^>]*)>/g)) {
      const { name, type, value } = attributes(input[1]!)
      if (name === undefined) continue
      if (type === "hidden") hidden[name] = value ?? ""
      else visible.push(name)
    }
    return {
      action: new URL(form["action"] ?? "", page.url).toString(),
      method: (form["method"] ?? "get").toLowerCase(),
      hidden,
      visible
    }
  })

type Filled =
  | {
      readonly form: "register"
      readonly name: string
      readonly email: string
      readonly cuit: string
      readonly password: string
    }
  | { readonly form: "signin"; readonly email: string; readonly password: string }

interface Onboarded {
  /** cobro's page the partner sent the browser to. */
  readonly authorizeUrl: URL
  /** Where cobro sent the browser back: the partner's callback with `code` and `state`. */
  readonly callbackUrl: URL
}

/** From the partner's "connect" link to cobro's redirect back (not followed yet). */
const onboard = async (b: Browser, filled: Filled): Promise<Onboarded> => {
  const connect = await b.get(`${site.url}/connect`)
  expect(connect.status).toBe(302)
  const authorizeUrl = new URL(connect.location!)

  const page = await b.get(authorizeUrl.toString())
  expect(page.status).toBe(200)
  const form = formsOf(page).find((f) => f.hidden["form"] === filled.form)
  expect(form, `the page has a ${filled.form} form`).toBeDefined()
  expect(form!.method).toBe("post")
  // The partner's request rides along in hidden fields, next to the CSRF token.
  expect(form!.hidden).toMatchObject({
    partner_id: authorizeUrl.searchParams.get("partner_id"),
    state: authorizeUrl.searchParams.get("state"),
    csrf_token: expect.any(String)
  })
  const { form: _, ...typed } = filled
  // The person fills in exactly what the page asks for, and ticks the consent box.
  expect([...form!.visible].sort()).toEqual([...Object.keys(typed), "consent"].sort())
  const sent = await b.post(form!.action, { ...form!.hidden, ...typed, consent: "yes" })
  expect(sent.status, sent.text.slice(0, 500)).toBe(303)
  return { authorizeUrl, callbackUrl: new URL(sent.location!) }
}

let merchants = 0
const newMerchant = (name: string) => {
  const n = ++merchants
  return {
    form: "register",
    name,
    email: `comercio${n}@example.com`,
    cuit: BankAccount.makeCuit("20", String(30111000 + n)),
    password: `una clave larga ${n}`
  } as const
}

/** Follows the redirect back to the partner and returns the connection the site made. */
const comeBack = async (b: Browser, onboarded: Onboarded) => {
  const before = new Set(site.connections.values())
  const callback = await b.get(onboarded.callbackUrl.toString())
  expect(callback.status, callback.text).toBe(303)
  expect(callback.location).toBe(`${site.url}/`)
  const home = await b.get(callback.location!)
  const userId = /<strong id="user-id">([^<]+)<\/strong>/.exec(home.text)?.[1]
  expect(userId, home.text).toBeDefined()
  const connection = site.connections.get(userId!)
  expect(connection).toBeDefined()
  expect(before.has(connection!)).toBe(false)
  return connection!
}

// ---------------------------------------------------------------------------------------------
// Calls the partner's backend makes with a token

const api = async (method: string, path: string, init: { token?: string; body?: unknown } = {}) => {
  const response = await fetch(`${cobro.url}${path}`, {
    method,
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** The `{status, error, message, data}` envelope of the partner and account routes. */
const statusError = (message: string) => ({
  status: "error",
  error: true,
  message,
  data: { detail: expect.any(String) },
  // Every answer carries the request's id (its `Request-Id` header).
  request_id: expect.any(String)
})

describe("partner onboarding", () => {
  it("a new merchant registers on cobro's page and is sent back to the partner with code and state", async () => {
    const b = browser()
    const onboarded = await onboard(b, newMerchant("Almacén Uno"))

    // The partner sent the browser to cobro's /authorize with its partner_id and a state.
    const { authorizeUrl, callbackUrl } = onboarded
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${cobro.url}/authorize`)
    expect(authorizeUrl.searchParams.get("partner_id")).toBe(credentials.partner_id)
    const state = authorizeUrl.searchParams.get("state")
    expect(state).toMatch(/^[A-Za-z0-9_-]{32}$/)

    // cobro sent it back to the registered redirect URL with a code and the same state.
    expect(callbackUrl.origin + callbackUrl.pathname).toBe(`${site.url}/callback`)
    expect(callbackUrl.searchParams.get("state")).toBe(state)
    expect(callbackUrl.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{20,}$/)

    // A callback with another state is refused before any exchange, in this browser or another.
    const forged = new URL(callbackUrl)
    forged.searchParams.set("state", "not-the-state-we-sent")
    expect((await b.get(forged.toString())).status).toBe(400)
    expect((await browser().get(callbackUrl.toString())).status).toBe(400)

    const connection = await comeBack(b, onboarded)
    expect(connection.access_token).toMatch(/^PAR-/)
    expect(connection.account).toMatchObject({
      user_id: connection.user_id,
      account_status: "PENDING",
      partner_config: { partner_id: credentials.partner_id, partner_name: "Tienda Socia" }
    })

    // Coming back to the callback again (history, a reload) exchanges nothing and breaks nothing.
    const replay = await b.get(callbackUrl.toString())
    expect(replay.status).toBe(400)
    expect((await site.readAccount(connection.user_id)).account_status).toBe("PENDING")
  })

  it("a merchant with an account signs in and connects again: a new token, the old one still works", async () => {
    const merchant = newMerchant("Almacén Dos")
    const before = browser()
    const first = await comeBack(before, await onboard(before, merchant))

    // Another day, another browser: the sign-in form this time.
    const b = browser()
    const again = await onboard(b, { form: "signin", email: merchant.email, password: merchant.password })
    const second = await comeBack(b, again)
    expect(second.user_id).toBe(first.user_id)
    expect(second.access_token).not.toBe(first.access_token)
    for (const token of [first.access_token, second.access_token]) {
      const read = await api("GET", `/users/${first.user_id}/account`, { token })
      expect(read.status).toBe(200)
    }
  })

  it("the code exchanges once: a second exchange is auth.code.used and revokes the first token", async () => {
    const b = browser()
    const onboarded = await onboard(b, newMerchant("Almacén Tres"))
    const connection = await comeBack(b, onboarded)
    const code = onboarded.callbackUrl.searchParams.get("code")!

    const second = await api("POST", "/auth/tokens", {
      body: { code, client_id: credentials.client_id, client_secret: credentials.client_secret }
    })
    expect(second.status).toBe(401)
    expect(second.body).toEqual(statusError("auth.code.used"))

    // docs/errors.md: "the tokens issued from it are revoked; treat the earlier token as leaked".
    const revoked = await api("GET", `/users/${connection.user_id}/account`, {
      token: connection.access_token
    })
    expect(revoked.status).toBe(401)
    expect(revoked.body).toEqual(statusError("auth.token.invalid"))
  })

  it("the token acts for its merchant only", async () => {
    const a = await (async () => {
      const b = browser()
      return comeBack(b, await onboard(b, newMerchant("Almacén A")))
    })()
    const other = await (async () => {
      const b = browser()
      return comeBack(b, await onboard(b, newMerchant("Almacén B")))
    })()

    // Its own account: read and configured (SPEC: in any state). Another merchant's: not found.
    const own = await api("GET", `/users/${a.user_id}/account`, { token: a.access_token })
    expect(own.status).toBe(200)
    expect(own.body).toMatchObject({ status: "success", error: false, data: { user_id: a.user_id } })
    const patched = await api("PATCH", `/users/${a.user_id}`, {
      token: a.access_token,
      body: { cancellation_period_minutes: 90 }
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ data: { user_id: a.user_id, cancellation_period_minutes: 90 } })
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { cancellation_period_minutes: 90 }]
    ] as const) {
      const path = method === "GET" ? `/users/${other.user_id}/account` : `/users/${other.user_id}`
      const foreign = await api(method, path, {
        token: a.access_token,
        ...(body === undefined ? {} : { body })
      })
      expect([method, foreign.status]).toEqual([method, 404])
      expect(foreign.body).toEqual(statusError("user.not.found"))
    }
    expect(await site.readAccount(other.user_id)).not.toHaveProperty("cancellation_period_minutes")

    // A PENDING account takes no payments; once an operator activates it, the partner creates one.
    await expect(site.createPayment(a.user_id, { external_id: "o-1", amount: 1500 })).rejects.toMatchObject({
      status: 403,
      key: "account.not.active"
    })
    await cobro.activate(a.user_id)
    const payment = await site.createPayment(a.user_id, {
      external_id: "o-1",
      amount: 1500,
      motive: "Pedido 1"
    })
    expect(payment).toMatchObject({
      id: `VAR-${a.user_id}-o-1`,
      payment_status: "PENDING",
      external_id: "o-1",
      price: { amount: 1500, currency: "ARS" }
    })
    expect(new URL(payment.payment_url).origin).toBe(cobro.url)

    // The other merchant's token does not see it.
    const read = await api("GET", `/payments/${encodeURIComponent(payment.id)}`, {
      token: other.access_token
    })
    expect(read.status).toBe(404)
    expect(read.body).toMatchObject({ message: "payment.not.found", error: true, code: 404 })
  })
})
