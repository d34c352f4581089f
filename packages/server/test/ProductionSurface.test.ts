/**
 * Production shows production (issue 45 item 6): its `/openapi.json` and `/docs` list no route it
 * does not serve; `/metrics` needs its bearer token, or listens on an address of its own, or (in
 * production without either) is not served; the banner says which. And log lines are stamped with
 * real time even when a merchant's sandbox clock runs days ahead (its time goes in a field).
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import type { HttpServer } from "@effect/platform"
import { Effect, Option } from "effect"
import { Admin, RequestLog, Server, type ServerConfig } from "../src/index.js"
import { configOf, get, postJson, serverLayer, tempDb } from "./support.js"

const day = 86_400
const secretKey = "ab".repeat(32)

/** The sandbox's routes, as `/openapi.json` names them. */
const sandboxPaths = [
  "/cvu/{cvu}/faucet",
  "/sandbox/bank-accounts",
  "/sandbox/bank-accounts/{cbu}",
  "/sandbox/bank-accounts/{cbu}/transfers",
  "/sandbox/clock",
  "/sandbox/clock/advance"
]

const productionEnv = (database: string, extra: Record<string, string> = {}) => ({
  COBRO_DATABASE_URL: database,
  COBRO_MODE: "production",
  COBRO_SECRET_KEY: secretKey,
  ...extra
})

const pathsOf = (document: unknown) => Object.keys((document as { paths: Record<string, unknown> }).paths)

/** The banner's metrics line of `config` listening on port 3000. */
const metricsLineOf = (config: ServerConfig.ServerConfig, listener = Option.none<HttpServer.Address>()) =>
  Server.banner(config, { _tag: "TcpAddress", hostname: "0.0.0.0", port: 3000 }, undefined, listener).find(
    (line) => line.startsWith("  Metrics:")
  )

describe("production shows production", () => {
  it.scopedLive(
    "production's /openapi.json and /docs list no sandbox route; the sandbox's list them all",
    () =>
      Effect.gen(function* () {
        const production = yield* configOf(productionEnv(yield* tempDb))
        const served = yield* Effect.gen(function* () {
          const document = yield* get("/openapi.json")
          expect(document.status).toBe(200)
          const docs = yield* get("/docs")
          expect(docs.status).toBe(200)
          return { paths: pathsOf(document.body), tags: document.body["tags"], page: String(docs.body) }
        }).pipe(Effect.provide(serverLayer(production)))
        expect(served.paths).toContain("/payments/")
        for (const path of sandboxPaths) expect(served.paths).not.toContain(path)
        expect(served.tags).not.toContainEqual(expect.objectContaining({ name: "Sandbox" }))
        expect(served.page).toContain("/payments/{paymentId}")
        expect(served.page).not.toContain("/sandbox/clock")
        expect(served.page).not.toContain("faucet")

        const sandbox = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb })
        const paths = yield* Effect.map(get("/openapi.json"), (r) => pathsOf(r.body)).pipe(
          Effect.provide(serverLayer(sandbox))
        )
        for (const path of sandboxPaths) expect(paths).toContain(path)
      })
  )

  it.scopedLive(
    "production with COBRO_METRICS_TOKEN: /metrics is 401 in the envelope without it, 200 with it",
    () =>
      Effect.gen(function* () {
        const config = yield* configOf(productionEnv(yield* tempDb, { COBRO_METRICS_TOKEN: "m3tr1cs" }))
        expect(metricsLineOf(config)).toBe(
          "  Metrics:    http://localhost:3000/metrics with Authorization: Bearer <COBRO_METRICS_TOKEN>"
        )
        yield* Effect.gen(function* () {
          const none = yield* get("/metrics")
          expect(none.status).toBe(401)
          expect(none.body).toEqual({
            message: "auth.token.missing",
            error: true,
            code: 401,
            data: { detail: "send Authorization: Bearer <COBRO_METRICS_TOKEN>" }
          })
          const right = yield* get("/metrics", "m3tr1cs")
          expect(right.status).toBe(200)
          expect(String(right.body)).toContain("# TYPE cobro_http_requests_total counter")
        }).pipe(Effect.provide(serverLayer(config)))
      })
  )

  it.scopedLive("production without a token or an address serves no /metrics, and the banner says so", () =>
    Effect.gen(function* () {
      const config = yield* configOf(productionEnv(yield* tempDb))
      expect(metricsLineOf(config)).toBe(
        "  Metrics:    not served (production serves /metrics with COBRO_METRICS_TOKEN or on COBRO_METRICS_ADDR)"
      )
      const response = yield* get("/metrics").pipe(Effect.provide(serverLayer(config)))
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ message: "route.not.found", error: true, code: 404 })
      const sandbox = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb })
      expect(metricsLineOf(sandbox)).toBe(
        "  Metrics:    http://localhost:3000/metrics, open (set COBRO_METRICS_TOKEN or COBRO_METRICS_ADDR to protect it)"
      )
    })
  )

  it.scopedLive(
    "with COBRO_METRICS_ADDR, /metrics is served there (behind the token) and not on the API's port",
    () =>
      Effect.gen(function* () {
        const config = yield* configOf(
          productionEnv(yield* tempDb, { COBRO_METRICS_ADDR: "127.0.0.1:0", COBRO_METRICS_TOKEN: "m3tr1cs" })
        )
        yield* Effect.gen(function* () {
          const listener = yield* Server.metricsAddress
          expect(Option.isSome(listener)).toBe(true)
          const address = Option.getOrThrow(listener)
          const port = address._tag === "TcpAddress" ? address.port : -1
          expect(metricsLineOf(config, listener)).toBe(
            `  Metrics:    http://localhost:${port}/metrics (COBRO_METRICS_ADDR, with Authorization: Bearer <COBRO_METRICS_TOKEN>), not on the API's port`
          )
          const onApi = yield* get("/metrics", "m3tr1cs")
          expect(onApi.status).toBe(404)
          const scrape = (token?: string) =>
            Effect.promise(() =>
              fetch(`http://127.0.0.1:${port}/metrics`, {
                headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
              }).then(async (r) => ({ status: r.status, text: await r.text() }))
            )
          const refused = yield* scrape()
          expect(refused.status).toBe(401)
          expect(JSON.parse(refused.text)).toMatchObject({ message: "auth.token.missing", code: 401 })
          const scraped = yield* scrape("m3tr1cs")
          expect(scraped.status).toBe(200)
          expect(scraped.text).toContain("# TYPE cobro_http_requests_total counter")
          const elsewhere = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/payments/`))
          expect(elsewhere.status).toBe(404)
        }).pipe(Effect.provide(serverLayer(config)))
      })
  )

  it.effect("COBRO_METRICS_ADDR must be host:port, naming the variable", () =>
    Effect.gen(function* () {
      for (const value of ["9464", "127.0.0.1", "127.0.0.1:70000", "::1:9464", "http://127.0.0.1:9464"]) {
        const error = yield* Effect.flip(configOf({ COBRO_METRICS_ADDR: value }))
        expect(error.problems).toEqual([
          `COBRO_METRICS_ADDR must be host:port such as 127.0.0.1:9464 or [::1]:9464, got "${value}"`
        ])
      }
      const ipv6 = yield* configOf({ COBRO_METRICS_ADDR: "[::1]:9464" })
      expect(ipv6.metricsAddress).toEqual(Option.some({ host: "::1", port: 9464 }))
    })
  )

  it.scopedLive("a sandbox log line is stamped with real time after a merchant's clock advanced 6 days", () =>
    Effect.gen(function* () {
      // The server's logger writes through the global console (Effect's default `Console`).
      const lines: Array<string> = []
      const spy = vi.spyOn(globalThis.console, "log").mockImplementation((...parts: Array<unknown>) => {
        lines.push(parts.map(String).join(" "))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => spy.mockRestore()))
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const { client_id, client_secret } = yield* Admin.createUser({
          user_id: "reloj",
          name: "Tienda reloj",
          email: "reloj@example.com",
          cuit: "30712345671",
          status: "ACTIVE"
        })
        const token = (yield* postJson("/users/reloj/tokens", { client_id, client_secret })).body["data"] as {
          token: string
        }
        expect((yield* postJson("/sandbox/clock/advance", { seconds: 6 * day }, token.token)).status).toBe(
          200
        )
        // This request runs on the merchant's clock, six days ahead, and logs its advance there.
        expect((yield* postJson("/sandbox/clock/advance", { seconds: 1 }, token.token)).status).toBe(200)
      }).pipe(Effect.provide(serverLayer(config)), Effect.provide(RequestLog.layer("json")))
      spy.mockRestore()

      const now = Date.now()
      const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      const moved = entries.find(
        (entry) =>
          entry["message"] === "sandbox test clock advanced" &&
          (entry["annotations"] as Record<string, unknown>)["offset"] === "6d 1s"
      )
      expect(moved, lines.join("\n")).toBeDefined()
      const annotations = moved!["annotations"] as Record<string, unknown>
      expect(annotations["user_id"]).toBe("reloj")
      // The line's time is real time; the merchant's clock, six days ahead, is in its field.
      expect(Math.abs(Date.parse(String(moved!["timestamp"])) - now)).toBeLessThan(60_000)
      const merchantClock = Date.parse(String(annotations[RequestLog.merchantClockField]))
      expect(Math.abs(merchantClock - (now + (6 * day + 1) * 1000))).toBeLessThan(60_000)
      // Every line is on real time, in order.
      const stamps = entries.map((entry) => Date.parse(String(entry["timestamp"])))
      for (const stamp of stamps) expect(Math.abs(stamp - now)).toBeLessThan(60_000)
      expect([...stamps].sort((a, b) => a - b)).toEqual(stamps)
    })
  )
})
