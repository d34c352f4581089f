/**
 * The dashboard in Chromium, as a merchant uses it in sandbox, at a desktop's width and at 390 px:
 * it advances its test clock and pays one of its CVUs from the sandbox page, resends one of its
 * webhooks, and exports the month's payments from the payments page (the CSV parses).
 */
import { afterAll, beforeAll, describe, expect, layer, it as vitest } from "@effect/vitest"
import { Ids, PaymentRequest, Payments } from "@cobro/core"
import { TestClocks } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, Schema } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { type Browser, chromium, type Page } from "playwright-core"
import { baseUrl, PASSWORD, seedForSignIn as seed } from "./dashboardSupport.js"
import { dashboardServerLayer } from "./dashboardServer.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)

const SIZES = [
  ["desktop", { width: 1280, height: 900 }],
  ["390 px", { width: 390, height: 844 }]
] as const

let browser: Browser | undefined

beforeAll(async () => {
  if (!hasChromium) return
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
  })
}, 30_000)

afterAll(async () => {
  await browser?.close()
})

/** RFC 4180 records (quoted fields with doubled quotes, CRLF between records). */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i++
    } else field += c
  }
  if (field !== "" || row.length > 0) rows.push([...row, field])
  return rows
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).innerText()).replace(/\u00a0/g, " ")

if (!hasChromium) {
  describe("the dashboard in sandbox, in Chromium", () => {
    vitest.skip(`skipped: ${CHROMIUM} is not installed`, () => {})
  })
} else {
  layer(dashboardServerLayer(), { timeout: Duration.seconds(120) })(
    "the dashboard in sandbox, in Chromium",
    (it) => {
      it.scoped(
        "advances the clock, pays a CVU, resends a webhook and exports the month's payments",
        () =>
          Effect.gen(function* () {
            const world = yield* seed
            const base = yield* baseUrl
            const payments = yield* Payments.Payments
            const clocks = yield* TestClocks.TestClocks
            const user = Ids.UserId.make(world.one.user_id)
            for (const [size, viewport] of SIZES) {
              const context = yield* Effect.acquireRelease(
                Effect.promise(() =>
                  browser!.newContext({ viewport, locale: "es-AR", acceptDownloads: true })
                ),
                (c) => Effect.promise(() => c.close())
              )
              const page = yield* Effect.promise(() => context.newPage())
              // A payment waiting for its transfer: its CVU is what the sandbox form pays.
              const pending = yield* payments.create(
                Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
                  user_id: world.one.user_id,
                  external_id: `sandbox-${size.replace(/\W/g, "")}`,
                  price: { amount: 2500, currency: "ARS" },
                  payment_options: ["transfer"]
                })
              )
              const before = yield* clocks.read(user)
              // The month the payments were created in, as Buenos Aires days (the list's filter).
              const created = DateTime.subtract(pending.creation_timestamp, { hours: 3 })
              const day = DateTime.formatIsoDate(created)
              const last = DateTime.formatIsoDate(DateTime.endOf(created, "month"))
              const month = { from: `${day.slice(0, 8)}01`, to: last }

              yield* Effect.promise(async () => {
                await page.goto(`${base}/dashboard/sign-in`)
                await page.getByLabel("Email").fill(world.one.email)
                await page.getByLabel("Contraseña").fill(PASSWORD)
                await Promise.all([
                  page.waitForURL(/\/dashboard$/),
                  page.getByRole("button", { name: "Ingresar" }).click()
                ])
                expect(await text(page, "body")).toContain("Modo sandbox")

                // The clock, two hours forward.
                await page
                  .getByRole("navigation", { name: "Secciones" })
                  .getByRole("link", { name: "Sandbox" })
                  .click()
                await page.getByLabel("Cuánto adelantar").fill("2")
                await page.getByLabel("Unidad").selectOption("horas")
                await page.getByRole("button", { name: "Adelantar el reloj" }).click()
                await page.getByText("Adelantaste el reloj").waitFor()
              })
              const after = yield* clocks.read(user)
              expect(
                Duration.toMillis(after.offset) - Duration.toMillis(before.offset)
              ).toBeGreaterThanOrEqual(2 * 3600_000)

              yield* Effect.promise(async () => {
                // The pending payment's CVU, paid in full.
                await page.getByLabel("CVU a pagar").fill(pending.cvu)
                await page.getByLabel("Monto en pesos").fill("2500")
                await page.getByRole("button", { name: "Simular transferencia" }).click()
                await page.getByText("Transferencia acreditada").waitFor()
              })
              const paid = yield* payments.get(user, pending.id)
              expect(paid.payment_status).toBe("SUCCESS")

              yield* Effect.promise(async () => {
                // One of its webhooks, resent.
                await page
                  .getByRole("navigation", { name: "Secciones" })
                  .getByRole("link", { name: "Webhooks" })
                  .click()
                await page.locator(`a[href$="${encodeURIComponent(world.one.event_id)}"]`).click()
                const replays = Number(await text(page, "dl .field:has(dt:text('Reenvíos')) dd"))
                await page.getByRole("button", { name: "Reenviar webhook" }).click()
                await page.getByText("Webhook reenviado").waitFor()
                expect(Number(await text(page, "dl .field:has(dt:text('Reenvíos')) dd"))).toBe(replays + 1)

                // The month's payments, exported from the payments page with its filters.
                await page
                  .getByRole("navigation", { name: "Secciones" })
                  .getByRole("link", { name: "Pagos" })
                  .click()
                await page.getByLabel("Desde").fill(month.from)
                await page.getByLabel("Hasta").fill(month.to)
                await page.getByRole("button", { name: "Filtrar" }).click()
                const [download] = await Promise.all([
                  page.waitForEvent("download"),
                  page.getByRole("link", { name: /Exportar CSV/ }).click()
                ])
                expect(download.suggestedFilename()).toMatch(/^cobro-payments-.*\.csv$/)
                const rows = parseCsv(readFileSync((await download.path())!, "utf8"))
                const header = rows[0]!
                const external = header.indexOf("external_id")
                expect(external).toBeGreaterThanOrEqual(0)
                expect(rows.slice(1).every((r) => r.length === header.length)).toBe(true)
                const ids = rows.slice(1).map((r) => r[external])
                expect(ids).toContain(world.one.external_id)
                expect(ids).toContain(pending.external_id)
                expect(ids).not.toContain(world.two.external_id)
                // Nothing scrolls sideways at either width.
                expect(
                  await page.evaluate<number>("document.documentElement.scrollWidth")
                ).toBeLessThanOrEqual(viewport.width)
              })
            }
          }),
        120_000
      )
    }
  )
}
