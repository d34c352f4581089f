/**
 * The payer's page in headless Chromium (Debian's `/usr/bin/chromium`, through playwright-core)
 * on a sandbox server whose merchant moved its test clock: the countdown the payer sees runs
 * from the time left on the merchant's clock, not on real time. Skipped without Chromium.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { Admin } from "../src/index.js"
import { configOf, postJson, serverLayer, tempDb } from "./support.js"

const CHROMIUM = "/usr/bin/chromium"
const day = 86_400

describe.skipIf(!existsSync(CHROMIUM))("the payer's page in Chromium, on a moved test clock", () => {
  it.scopedLive("counts down from the time left on the merchant's clock", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const created = yield* Admin.createUser({
          user_id: "tienda_c",
          name: "Tienda C",
          email: "c@example.com",
          cuit: "30712345671",
          status: "ACTIVE"
        })
        const issued = yield* postJson("/users/tienda_c/tokens", {
          client_id: created.client_id,
          client_secret: created.client_secret
        })
        const token = (issued.body["data"] as { token: string }).token
        const payment = yield* postJson("/payments/", {
          user_id: "tienda_c",
          price: { amount: 1500, currency: "ARS" },
          payment_options: ["transfer"]
        })
        const id = (payment.body["data"] as { id: string }).id
        expect((yield* postJson("/sandbox/clock/advance", { seconds: 3 * day }, token)).status).toBe(200)

        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port
        const browser = yield* Effect.acquireRelease(
          Effect.promise(() =>
            chromium.launch({
              executablePath: CHROMIUM,
              args: ["--headless", "--no-sandbox", "--disable-gpu"]
            })
          ),
          (b) => Effect.promise(() => b.close())
        )
        const page = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() => page.goto(`http://127.0.0.1:${port}/pay/${encodeURIComponent(id)}`))
        const countdown = () =>
          Effect.promise(() => page.locator("#countdown").innerText()).pipe(
            Effect.map((s) => s.replace(/\u00a0/g, " "))
          )
        // Five days' lifetime, three of them gone on the merchant's clock: under two days left.
        expect(yield* countdown()).toMatch(/^1 d 23 h 5\d min$/)
        // The script has taken over and keeps counting from there.
        yield* Effect.sleep("1500 millis")
        expect(yield* countdown()).toMatch(/^1 d 23 h 5\d min$/)
        expect(yield* Effect.promise(() => page.locator("#expiry").isVisible())).toBe(true)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})
