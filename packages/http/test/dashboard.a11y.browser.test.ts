/**
 * Accessibility of every dashboard page: axe-core (its source injected into the page by
 * playwright-core) in headless Chromium finds no serious or critical violation, at a desktop's
 * width and at 390 px, on the sign-in pages and on every page a merchant and a partner open
 * (with a sandbox engine, so the sandbox page and badge are there too).
 */
import { afterAll, beforeAll, describe, expect, layer, it as vitest } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { type Browser, chromium, type Page } from "playwright-core"
import { baseUrl, PASSWORD, seedForSignIn as seed, type World } from "./dashboardSupport.js"
import { dashboardServerLayer } from "./dashboardServer.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

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

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

/** The serious and critical violations axe finds on the page as it is now. */
const audit = async (page: Page): Promise<Array<string>> => {
  // The page's CSP allows only its own nonce'd scripts: axe is evaluated through the DevTools
  // protocol, which the page's policy does not govern.
  await page.evaluate(AXE)
  const violations = await page.evaluate<ReadonlyArray<Violation>>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`
  )
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)
}

/** The merchant's pages, with their ids. */
const merchantPages = (world: World) => [
  "/dashboard",
  "/dashboard/payments",
  `/dashboard/payments/${encodeURIComponent(world.one.payment_id)}`,
  "/dashboard/customers",
  `/dashboard/customers/${encodeURIComponent(world.one.customer_id)}`,
  "/dashboard/payouts",
  "/dashboard/webhooks",
  `/dashboard/webhooks/${encodeURIComponent(world.one.event_id)}`,
  "/dashboard/developers",
  "/dashboard/sandbox"
]

const signIn = async (page: Page, base: string, kind: "merchant" | "partner", login: string) => {
  await page.goto(`${base}/dashboard/sign-in${kind === "partner" ? "/partner" : ""}`)
  await page.getByLabel(kind === "merchant" ? "Email" : "Client ID").fill(login)
  await page.getByLabel("Contraseña").fill(PASSWORD)
  await Promise.all([
    page.waitForURL(/\/dashboard(\/partner)?$/),
    page.getByRole("button", { name: /Ingresar/ }).click()
  ])
}

if (!hasChromium) {
  describe("dashboard accessibility", () => {
    vitest.skip(`skipped: ${CHROMIUM} is not installed`, () => {})
  })
} else {
  layer(dashboardServerLayer(), { timeout: Duration.seconds(120) })("dashboard accessibility", (it) => {
    it.scoped(
      "axe finds no serious or critical violation on any page, at a desktop's width and at 390 px",
      () =>
        Effect.gen(function* () {
          const world = yield* seed
          const base = yield* baseUrl
          const found: Array<string> = []
          let audited = 0
          for (const [size, viewport] of SIZES) {
            const context = yield* Effect.acquireRelease(
              Effect.promise(() => browser!.newContext({ viewport, locale: "es-AR" })),
              (c) => Effect.promise(() => c.close())
            )
            const page = yield* Effect.promise(() => context.newPage())
            const check = (path: string) =>
              Effect.promise(async () => {
                const response = await page.goto(base + path)
                expect(response?.status(), `${path} (${size})`).toBe(200)
                for (const v of await audit(page)) found.push(`${path} (${size}): ${v}`)
                audited++
              })
            // Signed out: the two sign-in pages.
            yield* check("/dashboard/sign-in")
            yield* check("/dashboard/sign-in/partner")
            // A merchant's pages.
            yield* Effect.promise(() => signIn(page, base, "merchant", world.one.email))
            for (const path of merchantPages(world)) yield* check(path)
            // A page that answers a form (the sandbox's refusal, with its alert).
            yield* Effect.promise(async () => {
              await page.goto(`${base}/dashboard/sandbox`)
              await page.getByLabel("CVU a pagar").fill("0000003100000000000000")
              await page.getByLabel("Monto en pesos").fill("10")
              await page.getByRole("button", { name: "Simular transferencia" }).click()
              await page.getByRole("alert").waitFor()
              for (const v of await audit(page)) found.push(`sandbox refusal (${size}): ${v}`)
              audited++
            })
            yield* Effect.promise(() => context.clearCookies())
            // The partner's list, and a merchant's pages opened by the partner.
            yield* Effect.promise(() => signIn(page, base, "partner", world.partner.client_id))
            yield* check("/dashboard/partner")
            yield* Effect.promise(() =>
              Promise.all([
                page.waitForURL(/\/dashboard$/),
                page.getByRole("button", { name: /Abrir/ }).first().click()
              ])
            )
            for (const path of merchantPages(world).filter((p) => p !== "/dashboard/developers"))
              yield* check(path)
          }
          expect(found).toEqual([])
          // Sign-in ×2, the merchant's pages, the sandbox's refusal, the partner's list, and the
          // merchant's pages as the partner opens them (without Desarrolladores).
          expect(audited).toBe(SIZES.length * (2 + merchantPages(world).length * 2 + 1))
        }),
      120_000
    )
  })
}
