/**
 * The edge of the API: body size and content type limits, malformed JSON, and the request rate
 * limits of the public and token routes (429 with `Retry-After`), driven by `TestClock`.
 */
import { HttpClientRequest, type HttpServerRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Stream, TestClock } from "effect"
import { call, type Json, merchant, raw, serverLayer, tokenFor } from "./support.js"

const MiB = 1024 * 1024

/** An error in the `{message, error, code, data}` envelope. */
const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

/** An error in the `{status, error, message, data}` envelope (partner and account routes). */
const statusErrorBody = (message: string, data: Record<string, unknown> = {}) => ({
  status: "error",
  error: true,
  message,
  data: { detail: expect.any(String), ...data }
})

const paymentBody = (user_id: string, fields: Record<string, unknown> = {}) => ({
  user_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  ...fields
})

/** A JSON payment body of exactly `bytes` bytes (its `motive` pads it). */
const paymentJsonOfSize = (user_id: string, bytes: number) => {
  const empty = JSON.stringify(paymentBody(user_id, { motive: "" }))
  return JSON.stringify(paymentBody(user_id, { motive: "a".repeat(bytes - empty.length) }))
}

const postText = (path: string, text: string, contentType = "application/json") =>
  raw(
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.bodyText(text, contentType),
      HttpClientRequest.setHeader("content-type", contentType)
    )
  )

const paymentIds = (user_id: string, token: string) =>
  Effect.gen(function* () {
    const r = yield* call("GET", `/payments/?user_id=${user_id}`, { token })
    expect(r.status).toBe(200)
    const body: Json = r.body
    return (body.data.payments as Array<{ id: string }>).map((p) => p.id)
  })

const withToken = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    const token = yield* tokenFor(user_id, m.client_id, m.client_secret)
    return { ...m, token }
  })

layer(serverLayer())("request bodies", (it) => {
  it.effect("refuses a body over 1 MiB with a declared Content-Length: 413 and nothing created", () =>
    Effect.gen(function* () {
      const m = yield* withToken("lim_b1")
      const text = paymentJsonOfSize("lim_b1", MiB + 1)
      expect(new TextEncoder().encode(text).length).toBe(MiB + 1)
      const r = yield* postText("/payments/", text)
      expect(r.status).toBe(413)
      expect(r.body).toEqual(errorBody(413, "request.body.too_large", { field: "body" }))
      expect(yield* paymentIds("lim_b1", m.token)).toEqual([])

      // Exactly 1 MiB is read and validated: here the padded motive is too long (400, not 413).
      const atLimit = yield* postText("/payments/", paymentJsonOfSize("lim_b1", MiB))
      expect(atLimit.status).toBe(400)
      expect(atLimit.body).toEqual(errorBody(400, "request.invalid", { field: "motive" }))
    })
  )

  it.effect("refuses a chunked body over 1 MiB that declares no length: 413", () =>
    Effect.gen(function* () {
      const m = yield* withToken("lim_b2")
      const text = paymentJsonOfSize("lim_b2", 2 * MiB)
      const bytes = new TextEncoder().encode(text)
      const chunks = Array.from({ length: 32 }, (_, i) =>
        bytes.subarray(i * (bytes.length / 32), (i + 1) * (bytes.length / 32))
      )
      const request = HttpClientRequest.post("/payments/").pipe(
        HttpClientRequest.bodyStream(Stream.fromIterable(chunks), { contentType: "application/json" })
      )
      expect(request.headers["content-length"]).toBeUndefined()
      const r = yield* raw(request)
      expect(r.status).toBe(413)
      expect(r.body).toEqual(errorBody(413, "request.body.too_large", { field: "body" }))
      expect(yield* paymentIds("lim_b2", m.token)).toEqual([])

      // A small chunked body goes through.
      const small = new TextEncoder().encode(JSON.stringify(paymentBody("lim_b2")))
      const ok = yield* raw(
        HttpClientRequest.post("/payments/").pipe(
          HttpClientRequest.bodyStream(Stream.make(small.subarray(0, 10), small.subarray(10)), {
            contentType: "application/json"
          })
        )
      )
      expect(ok.status).toBe(200)
      expect(yield* paymentIds("lim_b2", m.token)).toHaveLength(1)

      // A chunked body is validated like any other.
      const chunked = (text: string) =>
        raw(
          HttpClientRequest.post("/payments/").pipe(
            HttpClientRequest.bodyStream(Stream.make(new TextEncoder().encode(text)), {
              contentType: "application/json"
            })
          )
        )
      const malformed = yield* chunked('{"user_id": ')
      expect(malformed.body).toEqual(errorBody(400, "request.body.malformed", { field: "body" }))
      const invalid = yield* chunked(JSON.stringify(paymentBody("lim_b2", { payment_options: [] })))
      expect(invalid.body).toEqual(errorBody(400, "request.invalid", { field: "payment_options" }))
    })
  )

  it.effect("answers a too large body on POST /auth/tokens in the status envelope", () =>
    Effect.gen(function* () {
      const r = yield* postText(
        "/auth/tokens",
        JSON.stringify({ code: "c".repeat(MiB), client_id: "x", client_secret: "y" })
      )
      expect(r.status).toBe(413)
      expect(r.body).toEqual(statusErrorBody("request.body.too_large", { field: "body" }))
    })
  )

  it.effect("refuses a body that is not JSON with 415 request.content_type.unsupported", () =>
    Effect.gen(function* () {
      yield* merchant("lim_b3")
      const r = yield* postText("/payments/", JSON.stringify(paymentBody("lim_b3")), "text/plain")
      expect(r.status).toBe(415)
      expect(r.body).toEqual(errorBody(415, "request.content_type.unsupported", { field: "content-type" }))

      const form = yield* postText("/payments/", "user_id=lim_b3", "application/x-www-form-urlencoded")
      expect(form.status).toBe(415)

      // JSON with parameters, and +json types, are JSON.
      const withCharset = yield* postText(
        "/payments/",
        JSON.stringify(paymentBody("lim_b3")),
        "application/json; charset=utf-8"
      )
      expect(withCharset.status).toBe(200)
    })
  )

  it.effect("answers malformed JSON with 400 request.body.malformed", () =>
    Effect.gen(function* () {
      yield* merchant("lim_b4")
      for (const text of ['{"user_id": "lim_b4", ', "{user_id: 'lim_b4'}", "not json"]) {
        const r = yield* postText("/payments/", text)
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.body.malformed", { field: "body" }))
      }
      const partner = yield* postText("/auth/tokens", "{")
      expect(partner.status).toBe(400)
      expect(partner.body).toEqual(statusErrorBody("request.body.malformed", { field: "body" }))
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Rate limits. The tests name the client's address in a header, as a host behind a trusted proxy
// configures `clientAddress` to read its forwarding header.

const clientAddress = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["x-test-address"] ?? Option.getOrElse(request.remoteAddress, () => "unknown")

const from = (address: string) => ({ "x-test-address": address })

const createFrom = (address: string, user_id: string) =>
  call("POST", "/payments/", { body: paymentBody(user_id), headers: from(address) })

/** A 429 in the envelope, with `Retry-After` equal to `data.retry_after` (at most the window). */
const expectLimited = (
  r: { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: unknown },
  style: "envelope" | "status" = "envelope"
) => {
  expect(r.status).toBe(429)
  expect(r.body).toEqual(
    style === "envelope"
      ? errorBody(429, "rate.limit.exceeded", { retry_after: expect.any(Number) })
      : statusErrorBody("rate.limit.exceeded", { retry_after: expect.any(Number) })
  )
  const body: Json = r.body
  const seconds: number = body.data.retry_after
  expect(Number.isInteger(seconds)).toBe(true)
  expect(seconds).toBeGreaterThanOrEqual(1)
  expect(seconds).toBeLessThanOrEqual(60)
  expect(r.headers["retry-after"]).toBe(String(seconds))
}

const tokenRequest = (user_id: string, client_id: string, client_secret: string, address: string) =>
  call("POST", `/users/${user_id}/tokens`, { body: { client_id, client_secret }, headers: from(address) })

layer(
  serverLayer({
    clientAddress,
    rateLimits: {
      publicPerAddress: { limit: 3, window: "1 minute" },
      publicPerUser: { limit: 5, window: "1 minute" },
      tokensPerAddress: { limit: 4, window: "1 minute" },
      tokensPerUser: { limit: 10, window: "1 minute" }
    }
  })
)("rate limits", (it) => {
  it.effect("limits POST /payments/ per address: the 4th is a 429 until the window passes", () =>
    Effect.gen(function* () {
      const m = yield* withToken("lim_r1")
      for (let i = 0; i < 3; i++) expect((yield* createFrom("10.0.1.1", "lim_r1")).status).toBe(200)
      const limited = yield* createFrom("10.0.1.1", "lim_r1")
      expectLimited(limited)
      expect(yield* paymentIds("lim_r1", m.token)).toHaveLength(3)

      // The payer's view shares the address's budget.
      const ids = yield* paymentIds("lim_r1", m.token)
      expectLimited(yield* call("GET", `/payments/${ids[0]}/public`, { headers: from("10.0.1.1") }))
      // Another address is not limited.
      expect((yield* call("GET", `/payments/${ids[0]}/public`, { headers: from("10.0.1.2") })).status).toBe(
        200
      )

      yield* TestClock.adjust("1 minute")
      expect((yield* createFrom("10.0.1.1", "lim_r1")).status).toBe(200)
    })
  )

  it.effect("limits POST /payments/ per merchant whatever the address", () =>
    Effect.gen(function* () {
      yield* merchant("lim_r2")
      yield* merchant("lim_r2b")
      for (let i = 1; i <= 5; i++) expect((yield* createFrom(`10.0.2.${i}`, "lim_r2")).status).toBe(200)
      expectLimited(yield* createFrom("10.0.2.6", "lim_r2"))
      // That address is under its own limit: another merchant's payment goes through.
      expect((yield* createFrom("10.0.2.6", "lim_r2b")).status).toBe(200)

      yield* TestClock.adjust("1 minute")
      expect((yield* createFrom("10.0.2.7", "lim_r2")).status).toBe(200)
    })
  )

  it.effect("limits POST /auth/tokens per address, answering in the status envelope", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 4; i++) {
        const r = yield* call("POST", "/auth/tokens", {
          body: { code: `bogus-${i}`, client_id: `cli_${i}`, client_secret: "nope" },
          headers: from("10.0.3.1")
        })
        expect(r.status).toBe(401)
        expect(r.body).toMatchObject({ status: "error", error: true })
      }
      const limited = yield* call("POST", "/auth/tokens", {
        body: { code: "bogus-5", client_id: "cli_5", client_secret: "nope" },
        headers: from("10.0.3.1")
      })
      expectLimited(limited, "status")

      yield* TestClock.adjust("1 minute")
      const after = yield* call("POST", "/auth/tokens", {
        body: { code: "bogus-6", client_id: "cli_6", client_secret: "nope" },
        headers: from("10.0.3.1")
      })
      expect(after.status).toBe(401)
    })
  )
})

layer(serverLayer({ clientAddress }))("the default limits on POST /users/{id}/tokens", (it) => {
  it.effect("stop guessing a secret after 10 tries per user, from any address, for a minute", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_t1")
      const other = yield* merchant("lim_t2")
      for (let i = 0; i < 10; i++) {
        const r = yield* tokenRequest("lim_t1", m.client_id, `wrong-${i}`, "10.0.4.1")
        expect(r.status).toBe(401)
        expect(r.body).toEqual(errorBody(401, "auth.credentials.invalid"))
      }
      expectLimited(yield* tokenRequest("lim_t1", m.client_id, "wrong-11", "10.0.4.1"))
      // Even the right secret, and from another address: the user is locked for the window.
      expectLimited(yield* tokenRequest("lim_t1", m.client_id, m.client_secret, "10.0.4.1"))
      expectLimited(yield* tokenRequest("lim_t1", m.client_id, m.client_secret, "10.0.4.2"))
      // Another user from the same address is not.
      const theirs = yield* tokenRequest("lim_t2", other.client_id, other.client_secret, "10.0.4.1")
      expect(theirs.status).toBe(200)

      yield* TestClock.adjust("1 minute")
      const after = yield* tokenRequest("lim_t1", m.client_id, m.client_secret, "10.0.4.1")
      expect(after.status).toBe(200)
      const body: Json = after.body
      expect(body.data.token).toMatch(/^USR-/)
    })
  )

  it.effect("limit one address to 30 token requests a minute across users", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_t3")
      for (let i = 0; i < 30; i++) {
        const r = yield* tokenRequest(`lim_guess_${i}`, m.client_id, "wrong", "10.0.5.1")
        expect(r.status).toBe(401)
      }
      expectLimited(yield* tokenRequest("lim_t3", m.client_id, m.client_secret, "10.0.5.1"))
      expect((yield* tokenRequest("lim_t3", m.client_id, m.client_secret, "10.0.5.2")).status).toBe(200)
    })
  )
})

layer(serverLayer({ rateLimits: false }))("rateLimits: false", (it) => {
  it.effect("turns limiting off for the public and token routes", () =>
    Effect.gen(function* () {
      const m = yield* withToken("lim_off")
      for (let i = 0; i < 40; i++) {
        const r = yield* call("POST", "/payments/", { body: paymentBody("lim_off") })
        expect(r.status).toBe(200)
      }
      expect(yield* paymentIds("lim_off", m.token)).toHaveLength(40)
      for (let i = 0; i < 40; i++) {
        const r = yield* call("POST", "/users/lim_off/tokens", {
          body: { client_id: m.client_id, client_secret: "wrong" }
        })
        expect(r.status).toBe(401)
      }
    })
  )
})
