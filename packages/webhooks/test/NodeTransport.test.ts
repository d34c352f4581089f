/**
 * The node transport against real receivers on loopback: sandbox mode reaches them, production
 * mode refuses every non-public destination (checked at connect time, after DNS), redirects are
 * reported and never followed, and the timeout is a real one. Over HTTPS every certificate is
 * verified, with one TLS context for all connections.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as https from "node:https"
import { createRequire } from "node:module"
import * as net from "node:net"
import { NodeTransport, WebhookTransport } from "../src/index.js"
import { testReceiver } from "./support.js"

const post = (url: string, timeout: Duration.DurationInput = "3 seconds") =>
  Effect.flatMap(WebhookTransport.WebhookTransport, (t) =>
    t.send({
      url,
      headers: { "content-type": "application/json", "webhook-id": "evt_1" },
      body: '{"message":"x"}',
      timeout: Duration.decode(timeout)
    })
  )

const production = (resolve?: NodeTransport.Resolver) =>
  NodeTransport.layer(resolve === undefined ? { mode: "production" } : { mode: "production", resolve })
const sandbox = NodeTransport.layer({ mode: "sandbox" })

/** A port nothing listens on. */
const closedPort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("NodeTransport in production mode (SSRF guard)", () => {
  it.scoped(
    "forbids what the URL names, in any notation: non-public IP literals, localhost, any scheme but https; nothing reaches them",
    () =>
      Effect.gen(function* () {
        const receiver = yield* testReceiver()
        const p = receiver.port
        const forbidden: ReadonlyArray<readonly [string, string]> = [
          [`https://127.0.0.1:${p}/hooks`, "127.0.0.1 is a loopback address"],
          [`https://localhost:${p}/hooks`, "localhost is a loopback name"],
          [`https://LocalHost.:${p}/hooks`, "localhost is a loopback name"],
          [`https://api.localhost:${p}/hooks`, "api.localhost is a loopback name"],
          [`https://169.254.169.254/latest/meta-data/`, "169.254.169.254 is a link-local address"],
          [`https://10.0.0.1/hooks`, "10.0.0.1 is a private address"],
          [`https://[::1]:${p}/hooks`, "::1 is a loopback address"],
          [`https://[::ffff:127.0.0.1]:${p}/hooks`, "::ffff:7f00:1 is a loopback address"],
          [`https://[0:0:0:0:0:ffff:a00:1]/hooks`, "::ffff:a00:1 is a private address"],
          [`https://[fe80::1]/hooks`, "fe80::1 is a link-local address"],
          [`https://[fd00::1]/hooks`, "fd00::1 is a private address"],
          [`https://100.64.0.1/hooks`, "100.64.0.1 is a carrier-grade NAT (shared) address"],
          [`https://0.0.0.0:${p}/hooks`, "0.0.0.0 is an unspecified address"],
          [`https://192.168.1.10/hooks`, "192.168.1.10 is a private address"],
          // Notations the URL parser reads as 127.0.0.1.
          [`https://0x7f.1:${p}/hooks`, "127.0.0.1 is a loopback address"],
          [`https://2130706433:${p}/hooks`, "127.0.0.1 is a loopback address"],
          [`https://0177.0.0.1:${p}/hooks`, "127.0.0.1 is a loopback address"],
          [`https://127.1:${p}/hooks`, "127.0.0.1 is a loopback address"],
          // Any scheme but https, also to a public host.
          [`http://127.0.0.1:${p}/hooks`, "production webhooks must use https"],
          [`http://hooks.example.com/cobro`, "production webhooks must use https"],
          [`http://93.184.216.34/cobro`, "production webhooks must use https"]
        ]
        for (const [url, why] of forbidden) {
          const error = yield* Effect.flip(post(url))
          expect({ url, reason: error.reason, message: error.message }).toEqual({
            url,
            reason: "forbidden",
            message: `refused: ${why}`
          })
          const checked = yield* Effect.flip(NodeTransport.checkDestination(url, { mode: "production" }))
          expect({ url, reason: checked.reason }).toEqual({ url, reason: "forbidden" })
        }
        expect(receiver.received).toHaveLength(0)
      }).pipe(Effect.provide(production()))
  )

  it.effect("an https URL of a public name or address passes the URL policy and the DNS check", () =>
    Effect.gen(function* () {
      const resolve: NodeTransport.Resolver = async () => [{ address: "93.184.216.34", family: 4 }]
      for (const url of [
        "https://hooks.example.com/cobro",
        "https://hooks.example.com.:8443/cobro?x=1",
        "https://93.184.216.34/cobro",
        "https://[2606:2800:220:1:248:1893:25c8:1946]/cobro"
      ]) {
        yield* NodeTransport.checkDestination(url, { mode: "production", resolve })
      }
    })
  )

  it.scoped("checks the address a name resolves to when connecting (DNS rebinding), not only the URL", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver()
      // A name that looked public when it was registered and now points at the loopback receiver.
      let answers: ReadonlyArray<NodeTransport.ResolvedAddress> = [{ address: "93.184.216.34", family: 4 }]
      const resolve: NodeTransport.Resolver = async () => answers
      yield* NodeTransport.checkDestination("https://hooks.example.test/cobro", {
        mode: "production",
        resolve
      })
      answers = [{ address: "127.0.0.1", family: 4 }]
      const error = yield* Effect.flip(post(`https://hooks.example.test:${receiver.port}/hooks`)).pipe(
        Effect.provide(production(resolve))
      )
      // Refused after DNS, not forbidden: the name may point elsewhere later.
      expect(error.reason).toBe("refused")
      expect(error.message).toContain("hooks.example.test resolves to 127.0.0.1, a loopback address")
      // One private address among public ones is enough to refuse.
      answers = [
        { address: "93.184.216.34", family: 4 },
        { address: "::ffff:10.0.0.1", family: 6 }
      ]
      expect(
        (yield* Effect.flip(
          NodeTransport.checkDestination("https://hooks.example.test/", { mode: "production", resolve })
        )).reason
      ).toBe("refused")
      expect(receiver.received).toHaveLength(0)
      // The same URL is reachable in sandbox mode.
      answers = [{ address: "127.0.0.1", family: 4 }]
      const ok = yield* post(`http://hooks.example.test:${receiver.port}/hooks`).pipe(
        Effect.provide(NodeTransport.layer({ mode: "sandbox", resolve }))
      )
      expect(ok.status).toBe(200)
      expect(receiver.received).toHaveLength(1)
    })
  )

  it.scoped(
    "a redirect to a private address is refused: the loopback origin is refused, and redirects are never followed",
    () =>
      Effect.gen(function* () {
        const target = yield* testReceiver()
        const redirector = yield* testReceiver(() => ({
          status: 302,
          headers: { location: "http://10.0.0.1/steal" }
        }))
        const toLoopback = yield* testReceiver(() => ({ status: 307, headers: { location: target.url } }))
        expect((yield* Effect.flip(post(redirector.url).pipe(Effect.provide(production())))).reason).toBe(
          "forbidden"
        )
        expect(redirector.received).toHaveLength(0)
        // In sandbox mode the origin answers; its 3xx is the result, and nobody follows it.
        const redirected = yield* post(redirector.url).pipe(Effect.provide(sandbox))
        expect(redirected).toMatchObject({ status: 302, location: "http://10.0.0.1/steal" })
        const again = yield* post(toLoopback.url).pipe(Effect.provide(sandbox))
        expect(again).toMatchObject({ status: 307, location: target.url })
        expect(redirector.received).toHaveLength(1)
        expect(toLoopback.received).toHaveLength(1)
        expect(target.received).toHaveLength(0)
      })
  )

  it.effect("refuses URLs it cannot or must not use", () =>
    Effect.gen(function* () {
      for (const url of [
        "not a url",
        "ftp://example.com/x",
        "http://user:pw@example.com/hooks",
        "/relative"
      ]) {
        expect((yield* Effect.flip(post(url))).reason).toBe("invalid_url")
        expect((yield* Effect.flip(NodeTransport.checkDestination(url, { mode: "production" }))).reason).toBe(
          "invalid_url"
        )
      }
    }).pipe(Effect.provide(production()))
  )
})

describe("NodeTransport in sandbox mode", () => {
  it.scoped("posts the body and headers as given and reports any status with its duration", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver((_, i) => ({ status: [200, 204, 404, 500][i] ?? 200 }))
      const statuses = []
      for (let i = 0; i < 4; i++) statuses.push((yield* post(receiver.url)).status)
      expect(statuses).toEqual([200, 204, 404, 500])
      const first = receiver.received[0]!
      expect(first).toMatchObject({ method: "POST", path: "/hooks", body: '{"message":"x"}' })
      expect(first.headers).toMatchObject({
        "content-type": "application/json",
        "webhook-id": "evt_1",
        "content-length": "15"
      })
      const { durationMs } = yield* post(receiver.url)
      expect(durationMs).toBeGreaterThanOrEqual(0)
      expect(durationMs).toBeLessThan(3000)
    }).pipe(Effect.provide(sandbox))
  )

  it.scoped("a receiver that does not answer in time is a timeout (real time, not the test clock)", () =>
    Effect.gen(function* () {
      const receiver = yield* testReceiver(() => "hold")
      const started = performance.now()
      const error = yield* Effect.flip(post(receiver.url, "400 millis"))
      const elapsed = performance.now() - started
      expect(error).toMatchObject({ reason: "timeout" })
      expect(error.durationMs).toBeGreaterThanOrEqual(390)
      expect(elapsed).toBeGreaterThanOrEqual(390)
      expect(elapsed).toBeLessThan(2000)
      expect(receiver.received).toHaveLength(1)
    }).pipe(Effect.provide(sandbox))
  )

  it.scoped("a closed port is a network error", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const error = yield* Effect.flip(post(`http://127.0.0.1:${port}/hooks`))
      expect(error.reason).toBe("network")
      expect(error.message).toContain("ECONNREFUSED")
    }).pipe(Effect.provide(sandbox))
  )
})

/** An HTTPS receiver on 127.0.0.1 whose certificate (for localhost and 127.0.0.1) signs itself. */
const selfSignedReceiver = Effect.acquireRelease(
  Effect.async<{
    readonly server: https.Server
    readonly port: number
    readonly requests: { count: number }
  }>((resume) => {
    const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
    const requests = { count: 0 }
    const server = https.createServer(
      { key: fixture("self-signed.key.pem"), cert: fixture("self-signed.cert.pem") },
      (_req, res) => {
        requests.count++
        res.writeHead(200).end()
      }
    )
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, port: (server.address() as net.AddressInfo).port, requests }))
    )
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

/** node:tls as node's own TLS client calls it (the CommonJS module object, not an ES namespace). */
const tlsModule = createRequire(import.meta.url)("node:tls") as typeof import("node:tls")

/** Counts the TLS contexts node builds while the scope is open. */
const countTlsContexts = Effect.acquireRelease(
  Effect.sync(() => {
    const original = tlsModule.createSecureContext
    const counted = { count: 0, original }
    tlsModule.createSecureContext = (...args) => {
      counted.count++
      return original(...args)
    }
    return counted
  }),
  ({ original }) => Effect.sync(() => void (tlsModule.createSecureContext = original))
)

describe("NodeTransport over HTTPS", () => {
  it.scoped("a receiver whose certificate no trusted root signed is never sent the event", () =>
    Effect.gen(function* () {
      const receiver = yield* selfSignedReceiver
      for (const host of ["127.0.0.1", "localhost"]) {
        const error = yield* Effect.flip(post(`https://${host}:${receiver.port}/hooks`))
        expect(error.reason).toBe("network")
        expect(error.message).toContain("DEPTH_ZERO_SELF_SIGNED_CERT")
      }
      expect(receiver.requests.count).toBe(0)
    }).pipe(Effect.provide(sandbox))
  )

  it.scoped("new connections share the transport's TLS context: none is built per connection", () =>
    Effect.gen(function* () {
      const transport = yield* NodeTransport.make({ mode: "sandbox" })
      const receiver = yield* selfSignedReceiver
      const port = yield* closedPort
      const contexts = yield* countTlsContexts
      // Each attempt opens a new connection: one refused, one whose certificate fails.
      for (let i = 0; i < 3; i++) {
        for (const url of [`https://127.0.0.1:${port}/hooks`, `https://127.0.0.1:${receiver.port}/hooks`]) {
          const error = yield* Effect.flip(
            transport.send({ url, headers: {}, body: "{}", timeout: Duration.seconds(3) })
          )
          expect(error.reason).toBe("network")
        }
      }
      expect(contexts.count).toBe(0)
      expect(receiver.requests.count).toBe(0)
    })
  )
})
