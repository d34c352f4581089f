/**
 * The client in a browser: bundled by esbuild for the browser platform (a Node built-in anywhere
 * in it fails the build), then loaded as a module by headless Chromium (Debian's
 * `/usr/bin/chromium`, through playwright-core; skipped without it) from a scripted API on the
 * same origin: a token fetched, a payment read with it, a retry after a 503, an error thrown as
 * `CobroError` with the envelope's key, and the Idempotency-Key of a POST made by WebCrypto.
 */
import * as esbuild from "esbuild"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { envelopeError, json, type Scripted, startScripted, tokenAnswer } from "./support.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url))

const bundle = async () => {
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["@cobro/source"],
    write: false,
    metafile: true,
    logLevel: "silent"
  })
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) }
}

describe("the browser bundle", () => {
  it("builds for the browser platform without Node built-ins or Effect", async () => {
    const { code, inputs } = await bundle()
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/)
    expect(inputs.filter((i) => /node_modules\/(effect|@effect)\//.test(i))).toEqual([])
    expect(inputs.some((i) => i.includes("node_modules/openapi-fetch/"))).toBe(true)
  })
})

describe.skipIf(!hasChromium)("the client in Chromium", () => {
  let browser: Browser
  let server: Scripted
  let code = ""

  beforeAll(async () => {
    code = (await bundle()).code
    server = await startScripted()
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
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("fetches a token, retries a 503, throws CobroError and keys its POSTs", async () => {
    let reads = 0
    server.answer = (r, res) => {
      if (r.path === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        return res.end(`<!doctype html><title>client</title><script type="module" src="/client.js"></script>`)
      }
      if (r.path === "/client.js") {
        res.writeHead(200, { "content-type": "text/javascript" })
        return res.end(`${code}\nwindow.cobroClient = { Cobro, CobroError };`)
      }
      if (r.path === "/users/shop/tokens") return tokenAnswer(res, "tok-browser")
      if (r.path === "/payments/VAR-shop-1")
        return ++reads === 1
          ? envelopeError(res, 503, "service.unavailable")
          : json(res, 200, {
              message: "payment.found",
              error: false,
              code: 200,
              data: { id: "VAR-shop-1", payment_status: "SUCCESS" }
            })
      if (r.path === "/payments/")
        return json(res, 200, {
          message: "payment.created",
          error: false,
          code: 200,
          data: { id: "VAR-shop-2" }
        })
      envelopeError(res, 404, "payment.not.found")
    }
    const page = await browser.newPage()
    try {
      await page.goto(server.base)
      await page.waitForFunction(() => "cobroClient" in globalThis)
      const outcome = await page.evaluate(async () => {
        const { Cobro, CobroError } = (
          globalThis as unknown as { cobroClient: typeof import("../src/index.js") }
        ).cobroClient
        const cobro = new Cobro({
          baseUrl: (globalThis as unknown as { location: { origin: string } }).location.origin,
          credentials: { userId: "shop", clientId: "ci", clientSecret: "cs" },
          retry: { baseDelayMs: 1 }
        })
        const read = await cobro.getPayment("VAR-shop-1")
        const created = await cobro.createPayment({
          user_id: "shop",
          price: { amount: 1, currency: "ARS" },
          payment_options: ["transfer"]
        })
        const error = await cobro.getPayment("VAR-shop-none").catch((e: unknown) => e)
        return {
          status: read.data.payment_status,
          created: created.data.id,
          error: error instanceof CobroError ? [error.name, error.status, error.message] : String(error)
        }
      })
      expect(outcome).toEqual({
        status: "SUCCESS",
        created: "VAR-shop-2",
        error: ["CobroError", 404, "payment.not.found"]
      })
      const api = server.received.filter(
        (r) => r.path !== "/" && r.path !== "/client.js" && r.path !== "/favicon.ico"
      )
      expect(api.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([
        ["POST", "/users/shop/tokens", undefined],
        ["GET", "/payments/VAR-shop-1", "Bearer tok-browser"],
        ["GET", "/payments/VAR-shop-1", "Bearer tok-browser"],
        ["POST", "/payments/", undefined],
        ["GET", "/payments/VAR-shop-none", "Bearer tok-browser"]
      ])
      expect(api[3]!.headers["idempotency-key"]).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
      )
    } finally {
      await page.close()
    }
  }, 60_000)
})
