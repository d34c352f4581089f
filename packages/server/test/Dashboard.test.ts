/**
 * The dashboard's sessions over real HTTP on the reference server (sandbox, SQLite): sign-in with
 * a password set by the operator, the session cookie's attributes, rotation at sign-in, CSRF
 * refusals, the failed sign-in limit, sign-out, and the pages behind the session; a merchant kept
 * from another's payment; a partner's password by CLI and its sign-in; production's second factor
 * (BIND simulator) and `Secure` cookie.
 */
import { describe, expect, it } from "@effect/vitest"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { BankAccount } from "@cobro/core"
import { Effect } from "effect"
import * as OTPAuth from "otpauth"
import { HttpServer } from "@effect/platform"
import * as Admin from "../src/Admin.js"
import {
  bindEnv,
  cli,
  cliJson,
  configOf,
  demoServer,
  postJson,
  provider,
  serverLayer,
  tempDb
} from "./support.js"
import { csrfOf, Jar, send, signIn } from "./dashboardSupport.js"

const PASSWORD = "correct horse battery"

const withDashboard = <A>(env: Record<string, string>, body: (base: string) => Promise<A>) =>
  Effect.gen(function* () {
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* tempDb,
      COBRO_JOB_INTERVAL: "1 hour",
      COBRO_LOG_LEVEL: "warn",
      ...env
    })
    return yield* Effect.gen(function* () {
      const { base } = yield* demoServer
      yield* Admin.setPassword("demo", PASSWORD)
      // Another merchant, whose payments the demo merchant must never see.
      yield* Admin.createUser({
        user_id: "otra",
        name: "Otra Tienda",
        email: "otra@example.com",
        cuit: BankAccount.makeCuit("30", "71234567"),
        status: "ACTIVE"
      })
      return yield* Effect.promise(() => body(base))
    }).pipe(Effect.provide(serverLayer(config)))
  })

describe("dashboard sessions", () => {
  it.scopedLive(
    "sign-in sets an HttpOnly, SameSite=Lax session cookie on /dashboard, rotated at each sign-in",
    () =>
      withDashboard({}, async (base) => {
        const jar = new Jar()
        const anonymous = await send(jar, `${base}/dashboard`)
        expect([anonymous.status, anonymous.headers.location]).toEqual([303, "/dashboard/sign-in"])

        const page = await send(jar, `${base}/dashboard/sign-in`)
        expect(page.status).toBe(200)
        expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
        expect(page.body).toContain('<label for="email">Email</label>')
        expect(page.body).not.toContain('name="code"')

        const done = await send(jar, `${base}/dashboard/sign-in`, "POST", {
          csrf_token: csrfOf(page.body),
          email: "demo@example.com",
          password: PASSWORD
        })
        expect([done.status, done.headers.location]).toEqual([303, "/dashboard"])
        const line = jar.lines.find((l) => l.startsWith("cobro_session="))!
        expect(line).toMatch(/HttpOnly/)
        expect(line).toMatch(/SameSite=Lax/)
        expect(line).toMatch(/Path=\/dashboard/)
        expect(line).not.toMatch(/Secure/)
        const first = jar.cookies.get("cobro_session")!

        const overview = await send(jar, `${base}/dashboard`)
        expect(overview.status).toBe(200)
        expect(overview.body).toContain("Resumen")
        expect(overview.body).toContain("Modo sandbox")
        expect(overview.body).toContain("<svg")

        // Signing in again gives a new token and ends the old one.
        // (The sign-in page sends a signed-in visitor to the overview; the form posts all the same.)
        expect((await send(jar, `${base}/dashboard/sign-in`)).headers.location).toBe("/dashboard")
        const again = await send(jar, `${base}/dashboard/sign-in`, "POST", {
          csrf_token: csrfOf(overview.body),
          email: "demo@example.com",
          password: PASSWORD
        })
        expect(again.status).toBe(303)
        const second = jar.cookies.get("cobro_session")!
        expect(second).not.toBe(first)
        const stale = new Jar()
        stale.cookies.set("cobro_session", first)
        expect((await send(stale, `${base}/dashboard`)).status).toBe(303)

        // Sign-out without the CSRF token is refused; with it, the session ends.
        expect((await send(jar, `${base}/dashboard/sign-out`, "POST", {})).status).toBe(403)
        expect((await send(jar, `${base}/dashboard`)).status).toBe(200)
        const csrf = csrfOf((await send(jar, `${base}/dashboard`)).body)
        const out = await send(jar, `${base}/dashboard/sign-out`, "POST", { csrf_token: csrf })
        expect([out.status, out.headers.location]).toEqual([303, "/dashboard/sign-in"])
        const kept = new Jar()
        kept.cookies.set("cobro_session", second)
        expect((await send(kept, `${base}/dashboard`)).status).toBe(303)
      })
  )

  it.scopedLive("a sign-in without the CSRF token, or with a wrong password, opens no session", () =>
    withDashboard({}, async (base) => {
      const jar = new Jar()
      await send(jar, `${base}/dashboard/sign-in`)
      const forged = await send(jar, `${base}/dashboard/sign-in`, "POST", {
        email: "demo@example.com",
        password: PASSWORD
      })
      expect(forged.status).toBe(403)
      expect(jar.cookies.has("cobro_session")).toBe(false)
      const wrong = await signIn(jar, base, { email: "demo@example.com", password: "not the password" })
      expect(wrong.status).toBe(401)
      expect(wrong.body).toContain("Los datos no coinciden")
      expect(jar.cookies.has("cobro_session")).toBe(false)
    })
  )

  it.scopedLive("failed sign-ins are limited per account: the right password is refused once reached", () =>
    withDashboard({ COBRO_RATE_LIMIT_FAILURES_PER_CLIENT: "3 per 1 minute" }, async (base) => {
      const jar = new Jar()
      for (let i = 0; i < 3; i++) {
        expect(
          (await signIn(jar, base, { email: "demo@example.com", password: "wrong password" })).status
        ).toBe(401)
      }
      const locked = await signIn(jar, base, { email: "demo@example.com", password: PASSWORD })
      expect(locked.status).toBe(429)
      expect(locked.headers["retry-after"]).toBeDefined()
      expect(jar.cookies.has("cobro_session")).toBe(false)
    })
  )

  it.scopedLive(
    "a merchant sees and refunds only its own payments; a refund without the CSRF token is refused",
    () =>
      withDashboard({}, async (base) => {
        const jar = new Jar()
        expect((await signIn(jar, base, { email: "demo@example.com", password: PASSWORD })).status).toBe(303)
        const created = await fetch(`${base}/payments/`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            user_id: "otra",
            external_id: "de-otra",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          })
        })
        expect(created.status).toBe(200)
        const theirs = ((await created.json()) as { data: { id: string } }).data.id
        const page = await send(jar, `${base}/dashboard/payments/${encodeURIComponent(theirs)}`)
        expect(page.status).toBe(404)
        expect(page.body).not.toContain("de-otra")
        const search = await send(jar, `${base}/dashboard/payments?q=de-otra`)
        expect(search.status).toBe(200)
        expect(search.body).not.toContain("de-otra</a>")
        const csrf = csrfOf((await send(jar, `${base}/dashboard`)).body)
        const refund = await send(
          jar,
          `${base}/dashboard/payments/${encodeURIComponent(theirs)}/refund`,
          "POST",
          {
            csrf_token: csrf,
            refund_type: "FULL",
            confirm: "yes"
          }
        )
        expect(refund.status).toBe(404)
        const forged = await send(
          jar,
          `${base}/dashboard/payments/${encodeURIComponent(theirs)}/refund`,
          "POST",
          {
            refund_type: "FULL",
            confirm: "yes"
          }
        )
        expect(forged.status).toBe(403)
      })
  )
})

describe("a partner on the dashboard", () => {
  it.scopedLive("gets a password with `cobro partners set-password` and signs in with its client id", () =>
    Effect.gen(function* () {
      const env = { COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour", COBRO_LOG_LEVEL: "warn" }
      const partner = yield* cliJson(
        ["partners", "create", "--name", "Socio", "--redirect-url", "https://socio.example.com/cb"],
        env
      )
      const partnerId = String(partner["partner_id"])
      const clientId = String(partner["client_id"])
      const refused = yield* cli(["partners", "set-password", partnerId], env)
      expect(refused.exit._tag).toBe("Failure")
      const set = yield* cliJson(
        ["partners", "set-password", partnerId, "--password-stdin"],
        env,
        `${PASSWORD}\n`
      )
      expect(set).toEqual({ partner_id: partnerId, password_set: true })
      const config = yield* configOf(env)
      yield* Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const base = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`
        const jar = new Jar()
        const path = "/dashboard/sign-in/partner"
        const wrong = yield* Effect.promise(() =>
          signIn(jar, base, { client_id: clientId, password: "not the password" }, path)
        )
        expect(wrong.status).toBe(401)
        const right = yield* Effect.promise(() =>
          signIn(jar, base, { client_id: clientId, password: PASSWORD }, path)
        )
        expect([right.status, right.headers.location]).toEqual([303, "/dashboard/partner"])
        expect(jar.cookies.has("cobro_session")).toBe(true)
        // A partner's session is not a merchant's: the merchant pages send it to its own.
        const overview = yield* Effect.promise(() => send(jar, `${base}/dashboard/payments`))
        expect([overview.status, overview.headers.location]).toEqual([303, "/dashboard/partner"])
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})

describe("dashboard sign-in in production", () => {
  it.scopedLive("needs a code of the enrolled TOTP, and the session cookie is Secure", () =>
    Effect.gen(function* () {
      const sim = yield* BindSimulator.scoped()
      const env = {
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: "5c".repeat(32),
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_JOB_INTERVAL: "1 hour",
        COBRO_RECONCILE_INTERVAL: "1 hour",
        COBRO_LOG_LEVEL: "warn",
        ...bindEnv(sim),
        COBRO_BIND_WEBHOOK_SECRET: "hook-secret-0123456789"
      }
      const config = yield* configOf(env)
      yield* Effect.gen(function* () {
        const user = yield* Admin.createUser({
          user_id: "shop",
          name: "Tienda",
          email: "shop@example.com",
          cuit: BankAccount.makeCuit("30", "71234567"),
          status: "ACTIVE"
        })
        yield* Admin.setPassword("shop", PASSWORD)
        const issued = yield* postJson("/users/shop/tokens", {
          client_id: user.client_id,
          client_secret: user.client_secret
        })
        const token = (issued.body["data"] as { token: string }).token
        const server = yield* HttpServer.HttpServer
        const base = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`

        const jar = new Jar()
        const form = yield* Effect.promise(() => send(jar, `${base}/dashboard/sign-in`))
        expect(form.body).toContain('<label for="code">Código de verificación</label>')
        expect(form.body).not.toContain("Modo sandbox")
        const fields = { email: "shop@example.com", password: PASSWORD }
        // Not enrolled: no way in without a factor.
        const unenrolled = yield* Effect.promise(() => signIn(jar, base, { ...fields, code: "123456" }))
        expect(unenrolled.status).toBe(401)
        expect(unenrolled.body).toContain("no tiene un segundo factor")

        const started = yield* postJson("/users/shop/second-factor/totp", {}, token)
        const totp = OTPAuth.URI.parse(
          (started.body["data"] as { otpauth_uri: string }).otpauth_uri
        ) as OTPAuth.TOTP
        const code = (steps: number) => totp.generate({ timestamp: Date.now() + steps * 30_000 })
        expect((yield* postJson("/users/shop/second-factor/confirm", { code: code(0) }, token)).status).toBe(
          200
        )

        const missing = yield* Effect.promise(() => signIn(jar, base, fields))
        expect([missing.status, missing.body.includes("Ingresá el código")]).toEqual([401, true])
        const wrong = yield* Effect.promise(() =>
          signIn(jar, base, { ...fields, code: code(0) === "000000" ? "111111" : "000000" })
        )
        expect(wrong.status).toBe(401)
        expect(jar.cookies.has("cobro_session")).toBe(false)
        // The next step's code (within the one-step window, after the step confirm used).
        const right = yield* Effect.promise(() => signIn(jar, base, { ...fields, code: code(1) }))
        expect(right.status).toBe(303)
        const line = jar.lines.find((l) => l.startsWith("cobro_session="))!
        expect(line).toMatch(/; Secure/)
        expect(line).toMatch(/HttpOnly/)
      }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
    })
  )
})
