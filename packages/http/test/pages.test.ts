/**
 * The hosted pages over HTTP: the payment page at `payment_url` and partner onboarding at
 * `/authorize`, read as HTML the way a browser receives them.
 */
import { describe, expect, layer } from "@effect/vitest"
import { HttpClientRequest } from "@effect/platform"
import { Auth, BankAccount, Ids, Jobs, Onboarding, Payments, PaymentRequest } from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { Faucet } from "@cobro/bank-sandbox"
import { Duration, Effect, Option, Schema, TestClock } from "effect"
import { merchant, raw, serverLayer } from "./support.js"

const NBSP = "\u00a0"
/** How es-AR writes an amount: `$ 1.500,00` (with a no-break space after the sign). */
const ars = (text: string) => `$${NBSP}${text}`

const createPayment = (user_id: string, fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Payments.Payments, (payments) =>
    payments.create(
      Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
        user_id,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        ...fields
      })
    )
  )

const pay = (owner: string, cvu: string, amount: number) =>
  Effect.flatMap(Faucet.Faucet, (faucet) =>
    faucet.send(Ids.UserId.make(owner), cvu as BankAccount.Cvu, new Faucet.FaucetRequest({ amount }))
  )

const get = (path: string, headers: Record<string, string> = {}) =>
  raw(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeaders(headers)))

const pathOf = (url: string) => new URL(url).pathname

/** The nonce of the page's CSP, which every inline `<style>`/`<script>` must carry. */
const cspNonce = (csp: string | undefined) => /script-src 'nonce-([^']+)'/.exec(csp ?? "")?.[1]

const registerPartner = (name: string) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name,
        redirect_url: "https://socio.example.com/callback?from=cobro"
      })
    )
  )

const cuit = BankAccount.makeCuit("20", "30111222")

/** The CSRF cookie a page set and the token its forms carry. */
const csrfOf = (response: { headers: Record<string, string>; text: string }) => {
  const cookie = /cobro_csrf=([^;]+)/.exec(response.headers["set-cookie"] ?? "")?.[1]
  const field = /name="csrf_token" value="([^"]+)"/.exec(response.text)?.[1]
  return { cookie, field }
}

const submit = (path: string, fields: Record<string, string>, cookie: string | undefined) =>
  raw(
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.bodyUrlParams(fields),
      cookie === undefined ? (r) => r : HttpClientRequest.setHeader("cookie", `cobro_csrf=${cookie}`)
    )
  )

/** Opens the onboarding page and returns what its forms need to be sent. */
const openAuthorize = (query: string) =>
  Effect.gen(function* () {
    const page = yield* get(`/authorize?${query}`)
    expect(page.status).toBe(200)
    const { cookie, field } = csrfOf(page)
    expect(cookie).toBeDefined()
    expect(field).toBe(cookie)
    return { page, token: cookie! }
  })

const findUserByEmail = (email: string) =>
  Effect.flatMap(UserRepository.UserRepository, (users) => users.findByEmail(email))

layer(serverLayer({ rateLimits: false }))("hosted pages", (it) => {
  describe("payment page", () => {
    it.effect("shows the amount in es-AR, the CVU and alias to copy, at payment_url", () =>
      Effect.gen(function* () {
        yield* merchant("pp_show")
        const payment = yield* createPayment("pp_show", { motive: "Pedido 42", external_id: "o-1" })
        expect(pathOf(payment.payment_url)).toBe(`/pay/${encodeURIComponent(payment.id)}`)
        const response = yield* get(pathOf(payment.payment_url))
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toMatch(/^text\/html/)
        const html = response.text
        expect(html).toContain('<html lang="es-AR"')
        expect(html).toContain('name="viewport"')
        expect(html).toContain(ars("1.500,00"))
        expect(html).toContain("Tienda pp_show")
        expect(html).toContain("Pedido 42")
        const quote = payment.quotes[0]!
        expect(html).toContain(`<dd id="cvu">${quote.address}</dd>`)
        expect(html).toContain(`<dd id="alias">${quote.alias}</dd>`)
        expect(html).toContain(`data-copy="${quote.address}"`)
        expect(html).toContain(`data-copy="${quote.alias}"`)
        expect(html).toContain('aria-live="polite"')
        expect(html).toContain("Esperando tu transferencia")
        expect(html).toContain('role="timer"')
        expect(html).toContain(">5 d 0 h 0 min<")
        // The page polls the public endpoint relative to itself.
        expect(html).toContain(`data-public-url="../payments/${encodeURIComponent(payment.id)}/public"`)
      })
    )

    it.effect("escapes what the merchant wrote: a motive cannot inject markup", () =>
      Effect.gen(function* () {
        yield* merchant("pp_xss")
        const payment = yield* createPayment("pp_xss", {
          motive: `<script>alert("x")</script><img src=x onerror=alert(1)>`
        })
        const { text } = yield* get(pathOf(payment.payment_url))
        expect(text).not.toContain("<script>alert")
        expect(text).not.toContain("<img src=x")
        expect(text).toContain(
          "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
        )
      })
    )

    it.effect("sends a nonce-based CSP (new per response), no framing and no referrer", () =>
      Effect.gen(function* () {
        yield* merchant("pp_headers")
        const payment = yield* createPayment("pp_headers")
        const first = yield* get(pathOf(payment.payment_url))
        const second = yield* get(pathOf(payment.payment_url))
        const csp = first.headers["content-security-policy"]
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("connect-src 'self'")
        expect(csp).toContain("frame-ancestors 'none'")
        const nonce = cspNonce(csp)
        expect(nonce).toMatch(/^[A-Za-z0-9+/=]{20,}$/)
        expect(first.text).toContain(`<script nonce="${nonce}">`)
        expect(first.text).toContain(`<style nonce="${nonce}">`)
        // Every inline script carries the nonce; none is allowed without it.
        expect(first.text.match(/<script(?! nonce=)/g)).toBeNull()
        expect(cspNonce(second.headers["content-security-policy"])).not.toBe(nonce)
        expect(first.headers["x-frame-options"]).toBe("DENY")
        expect(first.headers["referrer-policy"]).toBe("no-referrer")
        expect(first.headers["x-content-type-options"]).toBe("nosniff")
        expect(first.headers["cache-control"]).toBe("no-store")
      })
    )

    it.effect("an unknown payment is a Spanish 404 page, not JSON", () =>
      Effect.gen(function* () {
        for (const path of ["/pay/VAR-nadie-nada", "/pay/", "/pay/a/b"]) {
          const response = yield* get(path)
          expect(response.status).toBe(404)
          expect(response.headers["content-type"]).toMatch(/^text\/html/)
          expect(response.text).toContain("No encontramos este cobro")
          expect(response.headers["x-frame-options"]).toBe("DENY")
        }
      })
    )

    it.effect("underpaid: says how much arrived and how much is missing", () =>
      Effect.gen(function* () {
        yield* merchant("pp_under")
        const payment = yield* createPayment("pp_under")
        yield* pay("pp_under", payment.quotes[0]!.address, 1000)
        const { text } = yield* get(pathOf(payment.payment_url))
        expect(text).toContain("Pago incompleto")
        expect(text).toContain(`Recibimos ${ars("1.000,00")} de ${ars("1.500,00")}`)
        expect(text).toContain("Falta transferir")
        expect(text).toContain(`<p class="amount" aria-describedby="amount-label">${ars("500,00")}</p>`)
        // The CVU stays open until expiry: the data to complete the payment is still shown.
        expect(text).toContain(payment.quotes[0]!.address)
      })
    )

    it.effect("overpaid: says what arrived and that the difference is returned", () =>
      Effect.gen(function* () {
        yield* merchant("pp_over")
        const payment = yield* createPayment("pp_over", {
          redirect_url: "https://tienda.example.com/gracias"
        })
        yield* pay("pp_over", payment.quotes[0]!.address, 2000)
        const { text } = yield* get(pathOf(payment.payment_url))
        expect(text).toContain("Pago recibido, con un excedente")
        expect(text).toContain(`Recibimos ${ars("2.000,00")}, más que los ${ars("1.500,00")} pedidos`)
        expect(text).toContain(`la diferencia de ${ars("500,00")}`)
        expect(text).toContain('data-redirect="https://tienda.example.com/gracias"')
        expect(text).not.toContain('id="cvu"')
      })
    )

    it.effect("paid: confirms and sends the payer back to redirect_url, also without JavaScript", () =>
      Effect.gen(function* () {
        yield* merchant("pp_paid")
        const payment = yield* createPayment("pp_paid", { redirect_url: "https://tienda.example.com/ok?o=1" })
        yield* pay("pp_paid", payment.quotes[0]!.address, 1500)
        const { text } = yield* get(pathOf(payment.payment_url))
        expect(text).toContain("¡Pago recibido!")
        expect(text).toContain('data-redirect="https://tienda.example.com/ok?o=1"')
        expect(text).toContain('data-redirect-delay="2000"')
        expect(text).toContain('href="https://tienda.example.com/ok?o=1"')
        expect(text).toMatch(
          /<meta http-equiv="refresh" content="2;url=https:\/\/tienda\.example\.com\/ok\?o=1"\s*\/>/
        )
        expect(text).not.toContain('id="cvu"')
      })
    )

    it.effect("a price in another currency shows the ARS amount to transfer and what it equals", () =>
      Effect.gen(function* () {
        yield* merchant("pp_usdt")
        const payment = yield* createPayment("pp_usdt", { price: { amount: 2.5, currency: "USDT" } })
        const { text } = yield* get(pathOf(payment.payment_url))
        // Sandbox rate: 1 USDT = 1200 ARS.
        expect(text).toContain(ars("3.000,00"))
        expect(text).toContain("Equivale a 2,50 USDT.")
      })
    )

    it.effect("expired: past its expiry the page says so and hides the transfer data", () =>
      Effect.gen(function* () {
        yield* merchant("pp_exp")
        const payment = yield* createPayment("pp_exp")
        yield* TestClock.adjust(Duration.days(5))
        // Before the job has run, the page already treats the payment as expired...
        const before = yield* get(pathOf(payment.payment_url))
        expect(before.text).toContain("Este cobro venció")
        expect(before.text).not.toContain(payment.quotes[0]!.address)
        // ...and after it.
        yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
        const after = yield* get(pathOf(payment.payment_url))
        expect(after.status).toBe(200)
        expect(after.text).toContain("Este cobro venció")
        expect(after.text).toContain('data-status="EXPIRED"')
        expect(after.text).toContain('data-poll-ms="0"')
        expect(after.text).not.toContain('id="cvu"')
      })
    )
  })

  describe("onboarding page", () => {
    it.effect("shows the partner, both forms with consent, and sets the CSRF cookie", () =>
      Effect.gen(function* () {
        const { partner } = yield* registerPartner("Socio <b>Mayor</b>")
        const { page, token } = yield* openAuthorize(`partner_id=${partner.partner_id}&state=abc%22def`)
        const html = page.text
        expect(html).toContain('<html lang="es-AR"')
        expect(html).toContain("Conectá tu cuenta con Socio &lt;b&gt;Mayor&lt;/b&gt;")
        expect(html).not.toContain("<b>Mayor</b>")
        expect(html).toContain("Autorizo a <strong>Socio &lt;b&gt;Mayor&lt;/b&gt;</strong>")
        expect(html).toMatch(/<input type="hidden" name="state" value="abc&quot;def" \/>/)
        expect(html).toContain(`name="partner_id" value="${partner.partner_id}"`)
        expect(html).toContain('autocomplete="new-password"')
        expect(html).toContain('autocomplete="current-password"')
        expect(html).toContain("socio.example.com")
        const cookie = page.headers["set-cookie"] ?? ""
        expect(cookie).toContain("HttpOnly")
        expect(cookie).toContain("SameSite=Strict")
        expect(token).toMatch(/^[\w-]+\.\d+\.[\w-]+$/)
        // The form's redirect goes to the partner: CSP lets the form go there and nowhere else.
        expect(page.headers["content-security-policy"]).toContain(
          "form-action 'self' https://socio.example.com"
        )
        expect(page.headers["x-frame-options"]).toBe("DENY")
      })
    )

    it.effect("answers at /authorize/{partner_id} too", () =>
      Effect.gen(function* () {
        const { partner } = yield* registerPartner("Socio Ruta")
        const page = yield* get(`/authorize/${partner.partner_id}?state=s1`)
        expect(page.status).toBe(200)
        expect(page.text).toContain("Conectá tu cuenta con Socio Ruta")
        expect(page.text).toContain('name="state" value="s1"')
      })
    )

    it.effect("an unknown partner, a missing one or a foreign redirect_uri is a clear error page", () =>
      Effect.gen(function* () {
        const unknown = yield* get("/authorize?partner_id=par_nadie")
        expect(unknown.status).toBe(404)
        expect(unknown.headers["content-type"]).toMatch(/^text\/html/)
        expect(unknown.text).toContain("No encontramos esta aplicación")
        expect(unknown.text).toContain("par_nadie")
        const unknownPath = yield* get("/authorize/par_nadie")
        expect(unknownPath.status).toBe(404)

        const missing = yield* get("/authorize")
        expect(missing.status).toBe(400)
        expect(missing.text).toContain("falta partner_id")

        const { partner } = yield* registerPartner("Socio Retorno")
        const foreign = yield* get(
          `/authorize?partner_id=${partner.partner_id}&redirect_uri=${encodeURIComponent("https://evil.example/cb")}`
        )
        expect(foreign.status).toBe(400)
        expect(foreign.text).toContain("no coincide con la registrada")
      })
    )

    it.effect("register: a new account, consent, and a 303 to the partner with code and state", () =>
      Effect.gen(function* () {
        const registered = yield* registerPartner("Socio Alta")
        const partnerId = registered.partner.partner_id
        const { token } = yield* openAuthorize(
          `partner_id=${partnerId}&state=st-123&referred_user_id=ext-9&redirect_uri=${encodeURIComponent(
            "https://socio.example.com/callback?from=cobro"
          )}`
        )
        const response = yield* submit(
          "/authorize",
          {
            csrf_token: token,
            form: "register",
            partner_id: partnerId,
            state: "st-123",
            redirect_uri: "https://socio.example.com/callback?from=cobro",
            referred_user_id: "ext-9",
            name: "Almacén Don Pepe",
            email: "Pepe@Example.com",
            cuit,
            password: "una clave larga",
            consent: "yes"
          },
          token
        )
        expect(response.status).toBe(303)
        const location = new URL(response.headers["location"]!)
        expect(location.origin + location.pathname).toBe("https://socio.example.com/callback")
        expect(location.searchParams.get("from")).toBe("cobro")
        expect(location.searchParams.get("state")).toBe("st-123")
        const code = location.searchParams.get("code")!
        expect(code.length).toBeGreaterThan(20)

        // The partner exchanges the code for the new user's token.
        const auth = yield* Auth.Auth
        const grant = yield* auth.exchangeCode(
          new Auth.CodeExchangeRequest({
            code,
            client_id: registered.client_id,
            client_secret: registered.client_secret
          })
        )
        const user = yield* findUserByEmail("pepe@example.com")
        expect(Option.isSome(user)).toBe(true)
        expect(grant.user_id).toBe(Option.getOrThrow(user).user_id)
        expect(grant.referred_user_id).toBe("ext-9")
        expect(Option.getOrThrow(user).partner_id).toBe(partnerId)
        expect(Option.getOrThrow(user).account_status).toBe("PENDING")
      })
    )

    it.effect("sign in: an existing account consents and is sent back with code and state", () =>
      Effect.gen(function* () {
        const registered = yield* registerPartner("Socio Ingreso")
        const partnerId = registered.partner.partner_id
        const onboarding = yield* Onboarding.Onboarding
        yield* onboarding.register(
          Schema.decodeUnknownSync(Onboarding.RegisterRequest)({
            partner_id: partnerId,
            email: "ingreso@example.com",
            name: "Ingreso SRL",
            cuit,
            password: "clave-de-ingreso"
          })
        )
        const { token } = yield* openAuthorize(`partner_id=${partnerId}&state=vuelta`)
        const fields = {
          csrf_token: token,
          form: "signin",
          partner_id: partnerId,
          state: "vuelta",
          email: "ingreso@example.com",
          consent: "yes"
        }

        const wrong = yield* submit("/authorize", { ...fields, password: "no-es-esta" }, token)
        expect(wrong.status).toBe(401)
        expect(wrong.text).toContain("El email o la contraseña no son correctos.")
        expect(wrong.text).toContain('value="ingreso@example.com"')
        expect(wrong.text).not.toContain("no-es-esta")

        const right = yield* submit(
          `/authorize/${partnerId}`,
          { ...fields, password: "clave-de-ingreso" },
          token
        )
        expect(right.status).toBe(303)
        const location = new URL(right.headers["location"]!)
        expect(location.searchParams.get("state")).toBe("vuelta")
        const grant = yield* Effect.flatMap(Auth.Auth, (auth) =>
          auth.exchangeCode(
            new Auth.CodeExchangeRequest({
              code: location.searchParams.get("code")!,
              client_id: registered.client_id,
              client_secret: registered.client_secret
            })
          )
        )
        expect(grant.access_token).toMatch(/^PAR-/)
      })
    )

    it.effect(
      "errors come back in Spanish next to their fields, keeping what was typed but the password",
      () =>
        Effect.gen(function* () {
          const { partner } = yield* registerPartner("Socio Errores")
          const { token } = yield* openAuthorize(`partner_id=${partner.partner_id}`)
          const response = yield* submit(
            "/authorize",
            {
              csrf_token: token,
              form: "register",
              partner_id: partner.partner_id,
              name: "Kiosco <Sur>",
              email: "no-es-un-email",
              cuit: "20-1",
              password: "corta"
            },
            token
          )
          expect(response.status).toBe(400)
          const html = response.text
          expect(html).toContain('<p class="error" id="register-email-error">Ingresá un email válido')
          expect(html).toContain('<p class="error" id="register-cuit-error">Ingresá un CUIT válido')
          expect(html).toContain(
            '<p class="error" id="register-password-error">La contraseña tiene que tener'
          )
          expect(html).toContain(
            '<p class="error" id="register-consent-error">Para continuar tenés que autorizar a Socio Errores.'
          )
          expect(html).toMatch(/id="register-email"[^>]*aria-invalid="true"/)
          expect(html).toContain('value="Kiosco &lt;Sur&gt;"')
          expect(html).toContain('value="no-es-un-email"')
          expect(html).not.toContain("corta")
          expect(html).not.toContain('id="register-name-error"')
          // The first field in error takes the focus.
          expect(html).toMatch(/id="register-email"[^>]*autofocus/)
          expect(Option.isNone(yield* findUserByEmail("no-es-un-email"))).toBe(true)
        })
    )

    it.effect("an email that already has an account is refused on its field", () =>
      Effect.gen(function* () {
        const { partner } = yield* registerPartner("Socio Repetido")
        const { token } = yield* openAuthorize(`partner_id=${partner.partner_id}`)
        const fields = {
          csrf_token: token,
          form: "register",
          partner_id: partner.partner_id,
          name: "Repetido",
          email: "repetido@example.com",
          cuit,
          password: "una clave larga",
          consent: "yes"
        }
        expect((yield* submit("/authorize", fields, token)).status).toBe(303)
        const again = yield* submit("/authorize", fields, token)
        expect(again.status).toBe(409)
        expect(again.text).toContain('id="register-email-error">Ya hay una cuenta con este email')
      })
    )

    it.effect("refuses a submission without the CSRF cookie or with another token", () =>
      Effect.gen(function* () {
        const { partner } = yield* registerPartner("Socio Csrf")
        const { token } = yield* openAuthorize(`partner_id=${partner.partner_id}&state=z`)
        const fields = {
          form: "register",
          partner_id: partner.partner_id,
          state: "z",
          name: "Forjado",
          email: "forjado@example.com",
          cuit,
          password: "una clave larga",
          consent: "yes"
        }
        // A cross-site form: the browser does not send the SameSite=Strict cookie.
        const noCookie = yield* submit("/authorize", { ...fields, csrf_token: token }, undefined)
        expect(noCookie.status).toBe(403)
        expect(noCookie.text).toContain("Por seguridad no pudimos aceptar el formulario")
        // The page comes back usable: a fresh token, the values kept.
        expect(csrfOf(noCookie).cookie).toBeDefined()
        expect(noCookie.text).toContain('value="forjado@example.com"')
        // A token the attacker made up, in both places, is not signed with the server's key.
        const forged = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        const madeUp = yield* submit("/authorize", { ...fields, csrf_token: forged }, forged)
        expect(madeUp.status).toBe(403)
        // A real token in the cookie but another in the form.
        const mismatch = yield* submit("/authorize", { ...fields, csrf_token: `${token}x` }, token)
        expect(mismatch.status).toBe(403)
        const missingField = yield* submit("/authorize", fields, token)
        expect(missingField.status).toBe(403)
        expect(Option.isNone(yield* findUserByEmail("forjado@example.com"))).toBe(true)
      })
    )

    it.effect("the form accepts only a form body; API routes still refuse one", () =>
      Effect.gen(function* () {
        const json = yield* raw(
          HttpClientRequest.post("/authorize").pipe(HttpClientRequest.bodyUnsafeJson({ form: "register" }))
        )
        expect(json.status).toBe(415)
        expect(json.headers["content-type"]).toMatch(/^text\/html/)
        const api = yield* raw(
          HttpClientRequest.post("/payments/").pipe(HttpClientRequest.bodyUrlParams({ user_id: "x" }))
        )
        expect(api.status).toBe(415)
        expect(api.body).toMatchObject({ message: "request.content_type.unsupported", error: true })
      })
    )
  })
})

layer(serverLayer({ rateLimits: false, pages: false }))("pages turned off", (it) => {
  it.effect("no hosted pages are served", () =>
    Effect.gen(function* () {
      const response = yield* get("/authorize?partner_id=x")
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ message: "route.not.found" })
    })
  )
})

layer(serverLayer())("the onboarding form's sign-in with the default limits", (it) => {
  it.effect("10 wrong passwords lock the e-mail, the right one too; another e-mail signs in", () =>
    Effect.gen(function* () {
      const { partner } = yield* registerPartner("Socio Guardia")
      const onboarding = yield* Onboarding.Onboarding
      for (const [email, name] of [
        ["guardia@example.com", "Guardia SRL"],
        ["otra@example.com", "Otra SRL"]
      ] as const) {
        yield* onboarding.register(
          Schema.decodeUnknownSync(Onboarding.RegisterRequest)({
            partner_id: partner.partner_id,
            email,
            name,
            cuit,
            password: "clave-correcta"
          })
        )
      }
      const { token } = yield* openAuthorize(`partner_id=${partner.partner_id}`)
      const signIn = (email: string, password: string) =>
        submit(
          "/authorize",
          {
            csrf_token: token,
            form: "signin",
            partner_id: partner.partner_id,
            email,
            password,
            consent: "yes"
          },
          token
        )

      for (let i = 0; i < 10; i++)
        expect((yield* signIn("guardia@example.com", `mala-${i}`)).status).toBe(401)
      // Locked: the right password too (in any case of the e-mail), with the seconds to wait.
      const locked = yield* signIn("GUARDIA@example.com", "clave-correcta")
      expect(locked.status).toBe(429)
      expect(locked.text).toContain("Demasiados intentos.")
      expect(Number(locked.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      expect((yield* signIn("otra@example.com", "clave-correcta")).status).toBe(303)
    })
  )
})
