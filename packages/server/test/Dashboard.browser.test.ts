/**
 * The dashboard in headless Chromium (Debian's `/usr/bin/chromium`, through playwright-core) on a
 * sandbox server (SQLite), at desktop width and 390 px wide: sign in with the password the
 * operator set, find a paid payment by its external id, refund part of it (with its confirmation
 * step), see the refund on the payment's page, rotate the client secret (shown once; the old one
 * stops working, the new one works) and sign in again. Every field is found by its label.
 * Skipped without Chromium.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { BankAccount } from "@cobro/core"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { type Browser, chromium, type Page } from "playwright-core"
import { Admin } from "../src/index.js"
import { chromiumArgs, configOf, get, postJson, serverLayer, tempDb } from "./support.js"

const CHROMIUM = "/usr/bin/chromium"
const PASSWORD = "una clave bastante larga"

const payerCbu = BankAccount.makeCbu("0170099", "2200001234567")
const payerCuit = BankAccount.makeCuit("20", "30111222")

const signIn = async (page: Page, base: string) => {
  await page.goto(`${base}/dashboard`)
  await page.getByLabel("Email").fill("tienda_b@example.com")
  await page.getByLabel("Contraseña").fill(PASSWORD)
  await page.getByRole("button", { name: "Ingresar" }).click()
  await page.getByRole("heading", { name: "Resumen", level: 1 }).waitFor()
}

const walk = async (browser: Browser, base: string, width: number, externalId: string) => {
  const context = await browser.newContext({ viewport: { width, height: 800 } })
  try {
    const page = await context.newPage()
    await signIn(page, base)
    expect(await page.getByText("Modo sandbox").isVisible()).toBe(true)
    expect(await page.locator("svg.chart title").first().textContent()).toContain("Volumen diario")

    // Find the payment by its external id.
    await page.getByRole("link", { name: "Pagos", exact: true }).click()
    await page.getByLabel("Buscar").fill(externalId)
    await page.getByRole("button", { name: "Filtrar" }).click()
    const rows = page.locator("tbody tr")
    expect(await rows.count()).toBe(1)
    await page.getByRole("link", { name: externalId }).click()
    await page.getByRole("heading", { name: `Pago ${externalId}` }).waitFor()

    // The payment's webhook delivery ("payment updated" when it was paid), not yet attempted.
    expect(await page.locator("section", { hasText: "Webhooks" }).last().innerText()).toMatch(/evt_/)

    // A partial refund of 100, confirmed.
    await page.getByLabel("Devolución parcial").check()
    await page.getByLabel("Monto a devolver (solo parcial)").fill("100,50")
    await page.getByRole("button", { name: "Revisar devolución" }).click()
    await page.getByRole("heading", { name: "Confirmá la devolución" }).waitFor()
    expect(await page.locator("main").innerText()).toContain("100,50")
    await page.getByRole("button", { name: "Confirmar devolución" }).click()
    const notice = await page.getByRole("status").filter({ hasText: "Devolución de" }).innerText()
    expect(notice.replace(/\u00a0/g, " ")).toMatch(/Devolución de \$ 100,50 creada/)
    expect(await page.locator("section", { hasText: "Devoluciones" }).innerText()).toContain("Parcial")

    // A refund above what is left is refused in Spanish, on the page.
    await page.getByLabel("Devolución parcial").check()
    await page.getByLabel("Monto a devolver (solo parcial)").fill("99999")
    await page.getByRole("button", { name: "Revisar devolución" }).click()
    await page.getByRole("button", { name: "Confirmar devolución" }).click()
    expect(await page.getByRole("alert").innerText()).toContain("supera lo que queda por devolver")

    // Rotate the secret: shown once.
    await page.getByRole("link", { name: "Desarrolladores" }).click()
    const clientId = (await page.locator("#client-id").innerText()).trim()
    await page.getByLabel("Entiendo que el secreto actual deja de funcionar").check()
    await page.getByRole("button", { name: "Rotar el client secret" }).click()
    const secret = (await page.locator("#new-secret").innerText()).trim()
    expect(secret).toMatch(/^cs_/)
    await page.goto(`${base}/dashboard/developers`)
    expect(await page.locator("#new-secret").count()).toBe(0)

    // Sign out, and in again.
    await page.getByRole("button", { name: "Cerrar sesión" }).click()
    await page.getByRole("heading", { name: "Ingresá al panel" }).waitFor()
    await signIn(page, base)
    return { clientId, secret }
  } finally {
    await context.close()
  }
}

describe.skipIf(!existsSync(CHROMIUM))("the dashboard in Chromium", () => {
  it.scopedLive(
    "signs in, finds a payment, refunds part of it, rotates the secret and signs in again (desktop and 390 px)",
    () =>
      Effect.gen(function* () {
        const config = yield* configOf({
          COBRO_DATABASE_URL: yield* tempDb,
          COBRO_JOB_INTERVAL: "1 hour",
          COBRO_LOG_LEVEL: "warn"
        })
        yield* Effect.gen(function* () {
          const created = yield* Admin.createUser({
            user_id: "tienda_b",
            name: "Tienda B",
            email: "tienda_b@example.com",
            cuit: "30712345671",
            status: "ACTIVE"
          })
          yield* Admin.setPassword("tienda_b", PASSWORD)
          const issued = yield* postJson("/users/tienda_b/tokens", {
            client_id: created.client_id,
            client_secret: created.client_secret
          })
          const token = (issued.body["data"] as { token: string }).token
          const pay = (externalId: string) =>
            Effect.gen(function* () {
              const payment = yield* postJson("/payments/", {
                user_id: "tienda_b",
                external_id: externalId,
                price: { amount: 1500, currency: "ARS" },
                payment_options: ["transfer"],
                webhook_url: "http://127.0.0.1:9/hook"
              })
              const cvu = (payment.body["data"] as { quotes: Array<{ cvu: string }> }).quotes[0]!.cvu
              const paid = yield* postJson(
                `/cvu/${cvu}/faucet`,
                { amount: 1500, cbu: payerCbu, cuit: payerCuit },
                token
              )
              expect(paid.status).toBe(200)
            })
          yield* pay("pedido-desktop")
          yield* pay("pedido-movil")
          yield* pay("otro-pedido")

          const server = yield* HttpServer.HttpServer
          const base = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`
          const browser = yield* Effect.acquireRelease(
            Effect.promise(() => chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs })),
            (b) => Effect.promise(() => b.close())
          )
          for (const [width, externalId] of [
            [1280, "pedido-desktop"],
            [390, "pedido-movil"]
          ] as const) {
            const rotated = yield* Effect.promise(() => walk(browser, base, width, externalId))
            // The new secret works with the API; the old token does not.
            const fresh = yield* postJson("/users/tienda_b/tokens", {
              client_id: rotated.clientId,
              client_secret: rotated.secret
            })
            expect(fresh.status).toBe(200)
            const old = yield* get("/payments/?user_id=tienda_b", token)
            expect(old.status).toBe(401)
          }
        }).pipe(Effect.provide(serverLayer(config)))
      }),
    240_000
  )
})
