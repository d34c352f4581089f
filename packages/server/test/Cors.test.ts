/**
 * CORS on purpose (`COBRO_CORS_ORIGINS`, `@cobro/http`'s `Cors`): the variable's parsing; the
 * headers over real HTTP (preflights answered or refused, the browser routes' answers marked for
 * listed origins only, the token and bearer routes never); and headless Chromium (Debian's
 * `/usr/bin/chromium`, through playwright-core; skipped without it) on a page from a listed origin
 * creating a payment and reading its public state with `fetch`, while a page from another origin
 * is refused at the preflight.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { type Browser, chromium } from "playwright-core"
import { chromiumArgs, configOf, demoServer, serverLayer, tempDb } from "./support.js"

const problems = (env: Record<string, string>) => Effect.map(Effect.flip(configOf(env)), (e) => e.problems)

describe("COBRO_CORS_ORIGINS", () => {
  it.effect("lists exact origins, none by default; anything else is refused naming it", () =>
    Effect.gen(function* () {
      const db = { COBRO_DATABASE_URL: "postgres://127.0.0.1/cobro" }
      expect((yield* configOf(db)).corsOrigins).toEqual([])
      expect(
        (yield* configOf({
          ...db,
          COBRO_CORS_ORIGINS: " https://shop.example.com, http://localhost:5173 ,"
        })).corsOrigins
      ).toEqual(["https://shop.example.com", "http://localhost:5173"])
      for (const bad of ["https://shop.example.com/", "shop.example.com", "*", "https://a.example/pay"]) {
        const found = yield* problems({ ...db, COBRO_CORS_ORIGINS: bad })
        expect(found).toEqual([expect.stringMatching(/^COBRO_CORS_ORIGINS must list origins/)])
        expect(found[0]).toContain(`"${bad.trim()}"`)
      }
    })
  )
})

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A request over node:http (which sends `Origin` and the preflight's headers as given). */
const send = (
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString()))
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text })
      )
    })
    request.on("error", reject)
    request.end(body)
  })

const cors = (a: Answer) =>
  Object.fromEntries(Object.entries(a.headers).filter(([name]) => name.startsWith("access-control-")))

/** A sandbox server with `origins` allowed, its base URL and the demo merchant's credentials. */
const withServer = <A>(
  origins: string,
  body: (base: string, demo: { clientId: string; clientSecret: string }) => Promise<A>
) =>
  Effect.gen(function* () {
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* tempDb,
      COBRO_JOB_INTERVAL: "1 hour",
      COBRO_CORS_ORIGINS: origins,
      COBRO_LOG_LEVEL: "warn"
    })
    return yield* Effect.gen(function* () {
      const { base, credentials } = yield* demoServer
      return yield* Effect.promise(() => body(base, credentials))
    }).pipe(Effect.provide(serverLayer(config)))
  })

const SHOP = "https://shop.example.com"
const OTHER = "https://evil.example.net"

const preflight = (url: string, origin: string, method: string, headers = "content-type") =>
  send(url, "OPTIONS", {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": headers
  })

const paymentBody = (externalId: string) =>
  JSON.stringify({
    user_id: "demo",
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"],
    external_id: externalId
  })

describe("the CORS headers over HTTP", () => {
  it.scopedLive("preflights of the browser routes from a listed origin are answered; others refused", () =>
    withServer(`${SHOP},http://localhost:5173`, async (base) => {
      const create = await preflight(`${base}/payments/`, SHOP, "POST", "content-type,idempotency-key")
      expect(create.status).toBe(204)
      expect(cors(create)).toEqual({
        "access-control-allow-origin": SHOP,
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": "content-type, idempotency-key, x-request-id",
        "access-control-max-age": "600"
      })
      expect(create.headers["vary"]).toBe("Origin")
      expect(create.headers["request-id"]).toMatch(/^req_[0-9a-f]{32}$/)
      const read = await preflight(`${base}/payments/VAR-demo-x/public`, "http://localhost:5173", "GET")
      expect([read.status, cors(read)["access-control-allow-origin"]]).toEqual([204, "http://localhost:5173"])
      expect(cors(read)["access-control-allow-methods"]).toBe("GET, HEAD")

      // Another origin: 403 in the envelope, no Access-Control-* header.
      const other = await preflight(`${base}/payments/`, OTHER, "POST")
      expect(other.status).toBe(403)
      expect(cors(other)).toEqual({})
      expect(JSON.parse(other.body)).toMatchObject({
        message: "cors.preflight.refused",
        error: true,
        code: 403,
        data: { detail: `the origin ${OTHER} is not one the server allows` },
        request_id: other.headers["request-id"]
      })
      // A listed origin, but a route that takes a client secret or a token: refused alike.
      for (const [path, method] of [
        ["/users/demo/tokens", "POST"],
        ["/auth/tokens", "POST"],
        ["/payments/", "GET"],
        ["/payments/VAR-demo-x", "GET"],
        ["/cvu/0000/faucet", "POST"]
      ] as const) {
        const refused = await preflight(`${base}${path}`, SHOP, method, "authorization,content-type")
        expect([path, method, refused.status, cors(refused)]).toEqual([path, method, 403, {}])
        expect(JSON.parse(refused.body).data.detail).toContain("not open to browsers")
      }
      // An OPTIONS that is no preflight is what it was: 405 naming the path's methods.
      const plain = await send(`${base}/payments/`, "OPTIONS")
      expect([plain.status, plain.headers["allow"]]).toEqual([405, "GET, POST"])
    })
  )

  it.scopedLive(
    "answers of the browser routes carry the listed origin, errors too; no other route does",
    () =>
      withServer(SHOP, async (base, demo) => {
        const json = { "content-type": "application/json" }
        const created = await send(
          `${base}/payments/`,
          "POST",
          { ...json, origin: SHOP },
          paymentBody("cors-1")
        )
        expect(created.status).toBe(200)
        expect(cors(created)).toEqual({
          "access-control-allow-origin": SHOP,
          "access-control-expose-headers": "request-id, retry-after"
        })
        expect(created.headers["vary"]).toBe("Origin")
        const id = JSON.parse(created.body).data.id as string
        const read = await send(`${base}/payments/${id}/public`, "GET", { origin: SHOP })
        expect([read.status, cors(read)["access-control-allow-origin"]]).toEqual([200, SHOP])
        const missing = await send(`${base}/payments/VAR-demo-none/public`, "GET", { origin: SHOP })
        expect([missing.status, cors(missing)["access-control-allow-origin"]]).toEqual([404, SHOP])
        const invalid = await send(`${base}/payments/`, "POST", { ...json, origin: SHOP }, "{}")
        expect([invalid.status, cors(invalid)["access-control-allow-origin"]]).toEqual([400, SHOP])

        // Another origin: answered (a server does not block), but without the header browsers need.
        const other = await send(`${base}/payments/${id}/public`, "GET", { origin: OTHER })
        expect([other.status, cors(other), other.headers["vary"]]).toEqual([200, {}, "Origin"])

        // The token route (a client secret) and the bearer routes: never, whatever the origin.
        const token = await send(
          `${base}/users/demo/tokens`,
          "POST",
          { ...json, origin: SHOP },
          JSON.stringify({ client_id: demo.clientId, client_secret: demo.clientSecret })
        )
        expect([token.status, cors(token)]).toEqual([200, {}])
        const bearer = JSON.parse(token.body).data.token as string
        const full = await send(`${base}/payments/${id}`, "GET", {
          origin: SHOP,
          authorization: `Bearer ${bearer}`
        })
        expect([full.status, cors(full)]).toEqual([200, {}])
        const list = await send(`${base}/payments/?user_id=demo`, "GET", {
          origin: SHOP,
          authorization: `Bearer ${bearer}`
        })
        expect([list.status, cors(list)]).toEqual([200, {}])
      })
  )

  it.scopedLive("with no origins listed, every preflight is refused", () =>
    withServer("", async (base) => {
      const refused = await preflight(`${base}/payments/`, SHOP, "POST")
      expect([refused.status, cors(refused)]).toEqual([403, {}])
    })
  )
})

const CHROMIUM = "/usr/bin/chromium"

/** A site on its own origin (a loopback port) serving one page. */
const site = async () => {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end("<!doctype html><title>shop</title><h1>shop</h1>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** In the page: create a payment and read its public state with `fetch`; what happened. */
const payFromPage = async ({ api, externalId }: { api: string; externalId: string }) => {
  try {
    const created = await fetch(`${api}/payments/`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `key-${externalId}` },
      body: JSON.stringify({
        user_id: "demo",
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        external_id: externalId
      })
    })
    const body = (await created.json()) as { data: { id: string } }
    const read = await fetch(`${api}/payments/${body.data.id}/public`)
    const state = (await read.json()) as { data: { id: string; payment_status: string } }
    return {
      created: created.status,
      requestId: created.headers.get("request-id") !== null,
      id: state.data.id,
      status: state.data.payment_status
    }
  } catch (error) {
    return { failed: String(error) }
  }
}

describe.skipIf(!existsSync(CHROMIUM))("a browser on a listed origin", () => {
  it.scopedLive(
    "creates a payment and reads its public state; another origin is refused at the preflight",
    () =>
      Effect.gen(function* () {
        const shop = yield* Effect.acquireRelease(Effect.promise(site), (s) => Effect.promise(s.close))
        const other = yield* Effect.acquireRelease(Effect.promise(site), (s) => Effect.promise(s.close))
        const browser: Browser = yield* Effect.acquireRelease(
          Effect.promise(() =>
            chromium.launch({
              executablePath: CHROMIUM,
              args: chromiumArgs
            })
          ),
          (b) => Effect.promise(() => b.close())
        )
        yield* withServer(shop.origin, async (api) => {
          const page = await browser.newPage()
          await page.goto(shop.origin)
          const allowed = await page.evaluate(payFromPage, { api, externalId: "browser-1" })
          expect(allowed).toEqual({
            created: 200,
            requestId: true,
            id: "VAR-demo-browser-1",
            status: "PENDING"
          })

          const stranger = await browser.newPage()
          await stranger.goto(other.origin)
          const refused = await stranger.evaluate(payFromPage, { api, externalId: "browser-2" })
          expect(refused).toEqual({ failed: expect.stringContaining("Failed to fetch") })
          // The server never saw the creation: the payment does not exist.
          const check = await send(`${api}/payments/VAR-demo-browser-2/public`, "GET")
          expect(check.status).toBe(404)
          await page.close()
          await stranger.close()
        })
      }),
    90_000
  )
})
