/**
 * The hosted pages in a real browser: headless Chromium (Debian's `/usr/bin/chromium`, driven by
 * playwright-core) against a listening cobro server, at a phone's width. What is asserted is what
 * a payer or a merchant sees and where the browser ends up.
 *
 * Set `COBRO_SCREENSHOTS=<dir>` to keep a PNG of each page.
 */
import { afterAll, beforeAll, describe, expect, it as vitest, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Auth, BankAccount, Ids, Jobs, Payments, PaymentRequest } from "@cobro/core"
import { Faucet } from "@cobro/bank-sandbox"
import { Duration, Effect, Schema, TestClock } from "effect"
import { existsSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { merchant, serverLayer } from "./support.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
const screenshots = process.env["COBRO_SCREENSHOTS"]

const PHONE = { width: 360, height: 740 }

let browser: Browser | undefined
/** A stand-in for the merchant's and the partner's sites: records where browsers land. */
let landing: { server: Http.Server; url: string; hits: Array<string> } | undefined

beforeAll(async () => {
  if (!hasChromium) return
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ]
  })
  const hits: Array<string> = []
  const server = Http.createServer((request, response) => {
    hits.push(request.url ?? "")
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end(`<!doctype html><html lang="es"><title>Sitio</title><h1>Gracias por volver</h1></html>`)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  landing = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await new Promise<void>((resolve) => (landing ? landing.server.close(() => resolve()) : resolve()))
})

/** The test server's address, as a browser reaches it. */
const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
)

/** A fresh browser context (cookies, clipboard) at phone size, and CSP violations it reports. */
const openPage = (origin: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const context: BrowserContext = await browser!.newContext({ viewport: PHONE, locale: "es-AR" })
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin })
      const page = await context.newPage()
      const violations: Array<string> = []
      page.on("console", (message) => {
        if (message.type() === "error" && /Content.Security.Policy/i.test(message.text())) {
          violations.push(message.text())
        }
      })
      return { context, page, violations }
    }),
    ({ context }) => Effect.promise(() => context.close())
  )

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** The page fits a 360 px screen: nothing scrolls sideways. */
const fitsPhone = (page: Page) =>
  promise(() => page.evaluate<number>("document.documentElement.scrollWidth")).pipe(
    Effect.map((width) => expect(width).toBeLessThanOrEqual(PHONE.width))
  )

const shoot = (page: Page, name: string) =>
  screenshots === undefined
    ? Effect.void
    : promise(() => page.screenshot({ path: Path.join(screenshots, `${name}.png`), fullPage: true }))

const text = (page: Page, selector: string) =>
  promise(() => page.locator(selector).innerText()).pipe(Effect.map((s) => s.replace(/\u00a0/g, " ")))

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

const pathOf = (url: string) => new URL(url).pathname

if (!hasChromium) {
  describe("hosted pages in Chromium", () => {
    vitest.skip(`skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`, () => {})
  })
} else {
  layer(serverLayer({ rateLimits: false }), { timeout: Duration.seconds(30) })(
    "hosted pages in Chromium",
    (it) => {
      it.scoped(
        "the payer sees the amount, CVU and alias, copies the CVU, and is sent back once paid",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            yield* merchant("br_pay")
            const payment = yield* createPayment("br_pay", {
              motive: "Pedido 1001 <b>urgente</b>",
              redirect_url: `${landing!.url}/gracias?pedido=1001`
            })
            const quote = payment.quotes[0]!
            const { page, violations } = yield* openPage(base)
            yield* promise(() => page.goto(base + pathOf(payment.payment_url)))

            expect(yield* text(page, ".amount")).toBe("$ 1.500,00")
            expect(yield* text(page, "#cvu")).toBe(quote.address)
            expect(yield* text(page, "#alias")).toBe(quote.alias)
            expect(yield* text(page, "h1")).toBe("Tienda br_pay")
            expect(yield* text(page, ".motive")).toBe("Pedido 1001 <b>urgente</b>")
            expect(yield* text(page, "#payment-state")).toContain("Esperando tu transferencia")
            // The countdown is running (the script ran under the CSP).
            expect(yield* text(page, "#countdown")).toMatch(/^\d+ d \d+ h \d+ min$/)
            yield* fitsPhone(page)
            yield* shoot(page, "pay-pending-360")

            yield* promise(() => page.getByRole("button", { name: "Copiar CVU" }).click())
            yield* promise(() => page.locator("#copy-status").getByText("CVU copiado").waitFor())
            expect(yield* promise(() => page.evaluate<string>("navigator.clipboard.readText()"))).toBe(
              quote.address
            )

            // A transfer arrives; the page notices by itself and takes the payer back to the shop.
            yield* Effect.flatMap(Faucet.Faucet, (faucet) =>
              faucet.send(
                Ids.UserId.make("br_pay"),
                quote.address,
                new Faucet.FaucetRequest({ amount: 1500 })
              )
            )
            yield* promise(() => page.getByText("¡Pago recibido!").waitFor({ timeout: 10_000 }))
            yield* promise(() => page.waitForURL(`${landing!.url}/gracias?pedido=1001`, { timeout: 10_000 }))
            expect(yield* text(page, "h1")).toBe("Gracias por volver")
            expect(landing!.hits).toContain("/gracias?pedido=1001")
            expect(violations).toEqual([])
          }),
        30_000
      )

      it.scoped(
        "underpaid: the payer reads how much arrived and how much is missing",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            yield* merchant("br_under")
            const payment = yield* createPayment("br_under")
            yield* Effect.flatMap(Faucet.Faucet, (faucet) =>
              faucet.send(
                Ids.UserId.make("br_under"),
                payment.quotes[0]!.address,
                new Faucet.FaucetRequest({ amount: 1000 })
              )
            )
            const { page } = yield* openPage(base)
            yield* promise(() => page.goto(base + pathOf(payment.payment_url)))
            expect(yield* text(page, "#payment-state")).toContain("Recibimos $ 1.000,00 de $ 1.500,00")
            expect(yield* text(page, ".amount")).toBe("$ 500,00")
            yield* fitsPhone(page)
            yield* shoot(page, "pay-underpaid-360")

            // The rest arrives: with no redirect_url the page itself shows the payment complete.
            yield* Effect.flatMap(Faucet.Faucet, (faucet) =>
              faucet.send(
                Ids.UserId.make("br_under"),
                payment.quotes[0]!.address,
                new Faucet.FaucetRequest({ amount: 500 })
              )
            )
            yield* promise(() => page.getByText("¡Pago recibido!").waitFor({ timeout: 10_000 }))
            expect(yield* text(page, "#payment-state")).toContain(
              "Recibimos $ 1.500,00. Ya podés cerrar esta página."
            )
            expect(yield* promise(() => page.locator("#cvu").count())).toBe(0)
            yield* fitsPhone(page)
            yield* shoot(page, "pay-success-360")
          }),
        30_000
      )

      it.scoped(
        "sandbox: the payer sees the badge and the holder, and the page's form pays the payment",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            yield* merchant("br_sim")
            const payment = yield* createPayment("br_sim")
            const { page, violations } = yield* openPage(base)
            yield* promise(() => page.goto(base + pathOf(payment.payment_url)))

            expect(yield* text(page, "#sandbox-badge")).toContain("Sandbox")
            // The holder the bank reports for the CVU: the merchant's name and CUIT.
            expect(yield* text(page, "#holder")).toBe("Tienda br_sim")
            expect(yield* text(page, "#holder-cuit")).toBe("30-71234567-1")
            const amount = page.getByLabel("Monto en pesos")
            expect(yield* promise(() => amount.inputValue())).toBe("1500.00")
            yield* fitsPhone(page)
            yield* shoot(page, "pay-sandbox-360")

            // A partial transfer first (the amount is editable), then the rest as prefilled.
            yield* promise(() => amount.fill("1000,50"))
            yield* promise(() => page.getByRole("button", { name: "Simular transferencia" }).click())
            yield* promise(() => page.getByText("Pago incompleto").waitFor({ timeout: 10_000 }))
            expect(yield* text(page, "#payment-state")).toContain("Recibimos $ 1.000,50 de $ 1.500,00")
            expect(yield* promise(() => page.getByLabel("Monto en pesos").inputValue())).toBe("499.50")
            yield* promise(() => page.getByRole("button", { name: "Simular transferencia" }).click())
            yield* promise(() => page.getByText("¡Pago recibido!").waitFor({ timeout: 10_000 }))
            expect(pathOf(page.url())).toBe(pathOf(payment.payment_url))
            expect(yield* promise(() => page.locator("#simulate").count())).toBe(0)
            const paid = yield* Effect.flatMap(Payments.Payments, (p) => p.getPublic(payment.id))
            expect(paid.payment_status).toBe("SUCCESS")
            expect(violations).toEqual([])
          }),
        30_000
      )

      it.scoped(
        "sandbox: another site's form cannot make the payer's browser simulate a transfer",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            yield* merchant("br_csrf")
            const payment = yield* createPayment("br_csrf")
            const { page } = yield* openPage(base)
            // The payer has the page open (its cookie is set); the attacker even knows a token.
            yield* promise(() => page.goto(base + pathOf(payment.payment_url)))
            const token = yield* promise(() => page.locator("input[name=csrf_token]").inputValue())
            const action = `${base}/pay/${encodeURIComponent(payment.id)}/simulate`
            // Another site (`localhost` is another site than `127.0.0.1`) posts the form.
            const evil = Http.createServer((_, response) => {
              response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
              response.end(
                `<!doctype html><html lang="es"><title>Oferta</title><form id="f" method="post" action="${action}">` +
                  `<input name="csrf_token" value="${token}"><input name="amount" value="1500"></form>` +
                  `<script>document.getElementById("f").submit()</script></html>`
              )
            })
            yield* Effect.acquireRelease(
              promise(() => new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve))),
              () => promise(() => new Promise<void>((resolve) => evil.close(() => resolve())))
            )
            const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`
            const response = yield* promise(() =>
              page
                .waitForResponse((r) => r.url() === action, {
                  timeout: 10_000
                })
                .then((r) => r.status())
                .then((status) => status)
            ).pipe(
              Effect.zipLeft(
                promise(() => page.goto(evilUrl)),
                { concurrent: true }
              )
            )
            expect(response).toBe(403)
            yield* promise(() => page.getByText("El formulario venció").waitFor({ timeout: 10_000 }))
            const view = yield* Effect.flatMap(Payments.Payments, (p) => p.getPublic(payment.id))
            expect(view.payment_status).toBe("PENDING")
          }),
        30_000
      )

      it.scoped(
        "onboarding: a merchant registers, consents, and lands on the partner's site with code and state",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            const auth = yield* Auth.Auth
            const partner = yield* auth.registerPartner(
              Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
                name: "Socio Navegador",
                redirect_url: `${landing!.url}/callback`
              })
            )
            const { page, violations } = yield* openPage(base)
            yield* promise(() =>
              page.goto(
                `${base}/authorize?partner_id=${partner.partner.partner_id}&state=st%20%C3%B1&referred_user_id=u-77`
              )
            )
            expect(yield* text(page, "h1")).toBe("Conectá tu cuenta con Socio Navegador")
            yield* fitsPhone(page)
            yield* shoot(page, "authorize-360")

            const register = page.locator("section", {
              has: page.getByRole("heading", { name: "Crear una cuenta" })
            })
            yield* promise(async () => {
              await register.getByLabel("Nombre o razón social").fill("Librería Navegante")
              await register.getByLabel("Email").fill("navegante@example.com")
              await register.getByLabel("CUIT").fill(BankAccount.makeCuit("27", "28999111"))
              await register.getByLabel("Contraseña").fill("muy corta")
              await register.getByRole("button", { name: "Crear cuenta y autorizar" }).click()
            })
            // The browser itself refuses to send without consent (a required checkbox).
            expect(page.url()).toContain("/authorize?")

            yield* promise(async () => {
              await register.getByLabel("Autorizo a Socio Navegador").check()
              await register.getByRole("button", { name: "Crear cuenta y autorizar" }).click()
              await page.waitForURL((url) => url.href.startsWith(`${landing!.url}/callback`), {
                timeout: 15_000
              })
            })
            const back = new URL(page.url())
            expect(back.searchParams.get("state")).toBe("st ñ")
            const code = back.searchParams.get("code")!
            const grant = yield* auth.exchangeCode(
              new Auth.CodeExchangeRequest({
                code,
                client_id: partner.client_id,
                client_secret: partner.client_secret
              })
            )
            expect(grant.referred_user_id).toBe("u-77")
            expect(violations).toEqual([])
          }),
        30_000
      )

      it.scoped(
        "onboarding: a wrong password comes back as a message on the page",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            const auth = yield* Auth.Auth
            const partner = yield* auth.registerPartner(
              Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
                name: "Socio Errores",
                redirect_url: `${landing!.url}/callback`
              })
            )
            const { page } = yield* openPage(base)
            yield* promise(() => page.goto(`${base}/authorize/${partner.partner.partner_id}`))
            const signin = page.locator("section", {
              has: page.getByRole("heading", { name: "Ya tengo una cuenta" })
            })
            yield* promise(async () => {
              await signin.getByLabel("Email").fill("nadie@example.com")
              await signin.getByLabel("Contraseña").fill("una clave cualquiera")
              await signin.getByLabel("Autorizo a Socio Errores").check()
              await signin.getByRole("button", { name: "Iniciar sesión y autorizar" }).click()
              await page.getByRole("alert").getByText("El email o la contraseña no son correctos.").waitFor()
            })
            expect(yield* promise(() => signin.getByLabel("Email").inputValue())).toBe("nadie@example.com")
            expect(yield* promise(() => signin.getByLabel("Contraseña").inputValue())).toBe("")
            yield* fitsPhone(page)
            yield* shoot(page, "authorize-error-360")

            const unknown = yield* promise(() => page.goto(`${base}/authorize?partner_id=par_desconocido`))
            expect(unknown?.status()).toBe(404)
            expect(yield* text(page, "h1")).toBe("No encontramos esta aplicación")
            yield* shoot(page, "authorize-unknown-360")
          }),
        30_000
      )

      it.scoped(
        "the countdown reaching zero shows the expired state; an expired payment says so on load",
        () =>
          Effect.gen(function* () {
            const base = yield* baseUrl
            yield* merchant("br_exp")
            const payment = yield* createPayment("br_exp")
            // Three seconds before the CVU closes.
            yield* TestClock.adjust(Duration.subtract(Duration.days(5), Duration.seconds(3)))
            const { page } = yield* openPage(base)
            yield* promise(() => page.goto(base + pathOf(payment.payment_url)))
            expect(yield* text(page, "#countdown")).toMatch(/^00:00:0[0-3]$/)
            yield* promise(() => page.getByText("Este cobro venció").waitFor({ timeout: 8_000 }))
            expect(yield* promise(() => page.locator("#transfer").isVisible())).toBe(false)

            yield* TestClock.adjust(Duration.seconds(3))
            yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
            yield* promise(() => page.reload())
            expect(yield* text(page, "#payment-state")).toContain("Este cobro venció")
            expect(yield* promise(() => page.locator("#cvu").count())).toBe(0)
            yield* fitsPhone(page)
            yield* shoot(page, "pay-expired-360")
          }),
        30_000
      )
    }
  )
}
