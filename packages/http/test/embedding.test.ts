/**
 * The three ways to mount the API behave alike: the fetch-style handler (`toWebHandler`), the
 * node:http listener under a path prefix (`toNodeListener`) and the Layer for Effect hosts
 * (`layer`, served with `HttpApiBuilder.serve`), which also serves `/openapi.json` and `/docs`.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"
import { CobroHttp } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { NodeHttp } from "../src/node.js"
import { call, type Json, merchant, serverLayer } from "./support.js"

/** An in-memory engine whose services the test uses too (to create merchants). */
const sharedEngine = Effect.map(Layer.build(SandboxEngine.layerMemory()), (context) => ({
  context,
  layer: Layer.succeedContext(context)
}))

const paymentBody = (user_id: string, fields: Record<string, unknown> = {}) => ({
  user_id,
  price: { amount: 2500, currency: "ARS" },
  payment_options: ["transfer"],
  ...fields
})

/** An error in the `{message, error, code, data}` envelope. */
const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data },
  request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/)
})

const jsonInit = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

/** The answer; every one carries `Request-Id`, and an error envelope the same id. */
const read = (response: Response) =>
  Effect.promise(async () => {
    const body = (await response.json()) as { readonly error?: unknown; readonly request_id?: unknown }
    const requestId = response.headers.get("request-id")
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/)
    if (body.error === true) expect(body.request_id).toBe(requestId)
    return { status: response.status, headers: response.headers, body }
  })

describe("CobroHttp.toWebHandler", () => {
  it.scopedLive("creates and reads a payment with Request and Response", () =>
    Effect.gen(function* () {
      const engine = yield* sharedEngine
      const { handler, dispose } = CobroHttp.toWebHandler(engine.layer)
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const send = (path: string, init: RequestInit = {}) =>
        Effect.flatMap(
          Effect.promise(() => handler(new Request(`http://x${path}`, init))),
          read
        )
      const m = yield* Effect.provide(merchant("web_1"), engine.context)

      const created = yield* send("/payments/", jsonInit(paymentBody("web_1", { external_id: "o-1" })))
      expect(created.status).toBe(200)
      expect(created.headers.get("content-type")).toMatch(/^application\/json/)
      expect(created.body).toMatchObject({
        message: "payment.created",
        error: false,
        code: 200,
        data: { id: "VAR-web_1-o-1", payment_status: "PENDING" }
      })

      const issued = yield* send(
        "/users/web_1/tokens",
        jsonInit({ client_id: m.client_id, client_secret: m.client_secret })
      )
      expect(issued.status).toBe(200)
      const token: string = (issued.body as Json).data.token
      const found = yield* send("/payments/VAR-web_1-o-1", { headers: { authorization: `Bearer ${token}` } })
      expect(found.status).toBe(200)
      expect(found.body).toMatchObject({
        message: "payment.found",
        data: { id: "VAR-web_1-o-1", external_id: "o-1", user_id: "web_1", user_info: { user_id: "web_1" } }
      })

      // A streamed body (no Content-Length) is read like any other.
      const bytes = new TextEncoder().encode(JSON.stringify(paymentBody("web_1", { external_id: "o-2" })))
      const streamed = yield* send("/payments/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(bytes.subarray(0, 7))
            controller.enqueue(bytes.subarray(7))
            controller.close()
          }
        }),
        duplex: "half"
      } as RequestInit)
      expect(streamed.status).toBe(200)
      expect((streamed.body as Json).data.id).toBe("VAR-web_1-o-2")
    })
  )

  it.scopedLive("answers errors with the envelopes", () =>
    Effect.gen(function* () {
      const engine = yield* sharedEngine
      const { handler, dispose } = CobroHttp.toWebHandler(engine.layer)
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const send = (path: string, init: RequestInit = {}) =>
        Effect.flatMap(
          Effect.promise(() => handler(new Request(`http://x${path}`, init))),
          read
        )
      yield* Effect.provide(merchant("web_2"), engine.context)

      const anonymous = yield* send("/payments/VAR-web_2-o-1")
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual(errorBody(401, "auth.token.missing"))

      const missing = yield* send("/payments/VAR-web_2-o-1", {
        headers: { authorization: "Bearer USR-nope" }
      })
      expect(missing.status).toBe(401)
      expect(missing.body).toEqual(errorBody(401, "auth.token.invalid"))

      const invalid = yield* send("/payments/", jsonInit(paymentBody("web_2", { payment_options: [] })))
      expect(invalid.status).toBe(400)
      expect(invalid.body).toEqual(errorBody(400, "request.invalid", { field: "payment_options" }))

      const malformed = yield* send("/payments/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{"
      })
      expect(malformed.body).toEqual(errorBody(400, "request.body.malformed", { field: "body" }))

      const unknownUser = yield* send("/payments/", jsonInit(paymentBody("web_nobody")))
      expect(unknownUser.status).toBe(404)
      expect(unknownUser.body).toEqual(errorBody(404, "user.not.found"))

      const route = yield* send("/nowhere")
      expect(route.status).toBe(404)
      expect(route.body).toEqual(errorBody(404, "route.not.found"))

      const partner = yield* send("/auth/tokens", jsonInit({ code: "c", client_id: "x", client_secret: "y" }))
      expect(partner.status).toBe(401)
      expect(partner.body).toMatchObject({
        status: "error",
        error: true,
        data: { detail: expect.any(String) }
      })

      // A streamed body over the limit is refused, not read into memory.
      const chunk = new Uint8Array(64 * 1024).fill(0x20)
      let sent = 0
      const tooLarge = yield* send("/payments/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new ReadableStream({
          pull(controller) {
            if (sent >= 2 * 1024 * 1024) return controller.close()
            sent += chunk.length
            controller.enqueue(chunk)
          }
        }),
        duplex: "half"
      } as RequestInit)
      expect(tooLarge.status).toBe(413)
      expect(tooLarge.body).toEqual(errorBody(413, "request.body.too_large", { field: "body" }))
    })
  )
})

/** `server` listening on a free port of 127.0.0.1 for the scope; closed, connections and all, after. */
const listening = (server: Http.Server) =>
  Effect.acquireRelease(
    Effect.async<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  )

describe("NodeHttp.toNodeListener", () => {
  it.scopedLive("serves the API under a prefix of a node:http server", () =>
    Effect.gen(function* () {
      const engine = yield* sharedEngine
      yield* Effect.provide(merchant("node_1"), engine.context)
      const cobro = yield* Effect.acquireRelease(
        Effect.promise(() => NodeHttp.toNodeListener(engine.layer, { prefix: "/api/cobro/" })),
        (mounted) => Effect.promise(mounted.dispose)
      )
      const server = Http.createServer(cobro.listener)
      yield* listening(server)
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const send = (path: string, init: RequestInit = {}) =>
        Effect.flatMap(
          Effect.promise(() => fetch(`${base}${path}`, init)),
          read
        )

      const created = yield* send(
        "/api/cobro/payments/",
        jsonInit(paymentBody("node_1", { external_id: "n-1" }))
      )
      expect(created.status).toBe(200)
      expect((created.body as Json).data.id).toBe("VAR-node_1-n-1")
      const view = yield* send("/api/cobro/payments/VAR-node_1-n-1/public")
      expect(view.status).toBe(200)
      expect((view.body as Json).data.id).toBe("VAR-node_1-n-1")

      // Only a whole path segment is the prefix.
      const lookalike = yield* send("/api/cobrox/payments/VAR-node_1-n-1/public")
      expect(lookalike.status).toBe(404)
      expect(lookalike.body).toEqual(errorBody(404, "route.not.found"))
      const bare = yield* send("/api/cobro")
      expect(bare.body).toEqual(errorBody(404, "route.not.found"))
      // A wrong method is told apart under the prefix too.
      const wrongMethod = yield* send("/api/cobro/payments/", { method: "DELETE" })
      expect([wrongMethod.status, (wrongMethod.body as Json).message]).toEqual([405, "method.not.allowed"])
      // The status envelope is chosen on the path without the prefix.
      const partner = yield* send(
        "/api/cobro/auth/tokens",
        jsonInit({ code: "c", client_id: "x", client_secret: "y" })
      )
      expect(partner.body).toMatchObject({ status: "error", error: true })
    })
  )
})

describe("NodeHttp.toNodeListener, node's request and response once answered", () => {
  /** The listeners left on node's request: each one keeps the finished request's fiber reachable. */
  const listeners = (request: Http.IncomingMessage) =>
    Object.fromEntries(
      ["data", "end", "error", "readable"].map((event) => [event, request.listenerCount(event)])
    )
  const none = { data: 0, end: 0, error: 0, readable: 0 }

  it.scopedLive("keep no listener, whether the body is whole, chunked, too large or cut off", () =>
    Effect.gen(function* () {
      const engine = yield* sharedEngine
      yield* Effect.provide(merchant("node_2"), engine.context)
      const cobro = yield* Effect.acquireRelease(
        Effect.promise(() => NodeHttp.toNodeListener(engine.layer, { maxBodyBytes: 4096 })),
        (mounted) => Effect.promise(mounted.dispose)
      )
      const requests: Array<Http.IncomingMessage> = []
      const responses: Array<Http.ServerResponse> = []
      const server = Http.createServer((request, response) => {
        requests.push(request)
        responses.push(response)
        cobro.listener(request, response)
      })
      yield* listening(server)
      const port = (server.address() as AddressInfo).port
      /** Sends `head` and `body` on a connection of its own; the status line's code, or `undefined` if cut off. */
      const exchange = (head: string, body: string, cut = false) =>
        Effect.async<number | undefined>((resume) => {
          const socket = Net.connect(port, "127.0.0.1", () => {
            socket.write(`${head}\r\n\r\n${body}`)
            if (cut) setTimeout(() => socket.destroy(), 50)
          })
          let answer = ""
          socket.on("data", (chunk) => {
            answer += chunk.toString()
            if (answer.includes("\r\n\r\n")) socket.end()
          })
          socket.on("close", () => {
            const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]
            resume(Effect.succeed(status === undefined ? undefined : Number(status)))
          })
          socket.on("error", () => {})
        })
      const json = JSON.stringify(paymentBody("node_2", { external_id: "l-1" }))
      const post = (headers: string) =>
        `POST /payments/ HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}`
      const chunked = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`

      expect(yield* exchange(post(`content-length: ${json.length}`), json)).toBe(200)
      expect(yield* exchange(post("transfer-encoding: chunked"), chunked(json.replace("l-1", "l-2")))).toBe(
        200
      )
      expect(yield* exchange(post("transfer-encoding: chunked"), chunked("x".repeat(5000)))).toBe(413)
      // The client goes away with half of its body sent: nothing answers, and nothing is left.
      expect(yield* exchange(post(`content-length: ${json.length}`), json.slice(0, 20), true)).toBeUndefined()
      yield* Effect.sleep("100 millis")

      expect(requests).toHaveLength(4)
      for (const request of requests) expect(listeners(request)).toEqual(none)
      // platform-node's `close` listener (it interrupts the fiber of a request the client left).
      expect(responses.map((response) => response.listenerCount("close"))).toEqual([0, 0, 0, 0])
    })
  )
})

layer(serverLayer())("CobroHttp.layer served by an Effect host", (it) => {
  it.effect("serves the OpenAPI document at /openapi.json", () =>
    Effect.gen(function* () {
      const r = yield* call("GET", "/openapi.json")
      expect(r.status).toBe(200)
      expect(r.headers["content-type"]).toMatch(/^application\/json/)
      const spec: Json = r.body
      expect(spec.openapi).toMatch(/^3\.1\./)
      expect(spec.info).toMatchObject({ title: "cobro", version: "1.0.0" })
      for (const path of [
        "/payments/",
        "/payments/{paymentId}",
        "/payments/{paymentId}/public",
        "/customers/",
        "/users/{id}/tokens",
        "/auth/tokens",
        "/transactions/schedules",
        "/split/payments",
        "/cvu/{cvu}/faucet"
      ]) {
        expect(Object.keys(spec.paths)).toContain(path)
      }
      expect(Object.keys(spec.paths["/payments/"]).sort()).toEqual(["get", "post"])
      expect(spec.components.securitySchemes).toMatchObject({ bearer: { type: "http", scheme: "bearer" } })
    })
  )

  it.effect("serves the interactive reference at /docs with the document inside", () =>
    Effect.gen(function* () {
      const r = yield* call("GET", "/docs")
      expect(r.status).toBe(200)
      expect(r.headers["content-type"]).toMatch(/^text\/html/)
      expect(r.text).toContain('<script id="api-reference" type="application/json">')
      expect(r.text).toContain("/payments/{paymentId}/public")
    })
  )
})

layer(serverLayer({ docs: false }))("CobroHttp.layer with docs: false", (it) => {
  it.effect("serves neither /openapi.json nor /docs", () =>
    Effect.gen(function* () {
      for (const path of ["/openapi.json", "/docs"]) {
        const r = yield* call("GET", path)
        expect(r.status).toBe(404)
        expect(r.body).toMatchObject({ message: "route.not.found", error: true, code: 404 })
      }
    })
  )
})
