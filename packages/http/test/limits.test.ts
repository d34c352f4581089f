/**
 * The edge of the API: body size and content type limits, malformed JSON, and the request rate
 * limits of the public and token routes (429 with `Retry-After`) in the in-process store, on real
 * time with windows of three seconds.
 */
import { HttpClientRequest, type HttpServerRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Auth, Ids } from "@cobro/core"
import { Duration, Effect, Option, Stream } from "effect"
import { call, type Json, merchant, partner, raw, serverLayer, tokenFor } from "./support.js"

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

const exchange = (body: { code: string; client_id: string; client_secret: string }, address: string) =>
  call("POST", "/auth/tokens", { body, headers: from(address) })

/** Waits out a window of real time (the limits count on the system's clock, not on `TestClock`). */
const windowPasses = (window: Duration.DurationInput) =>
  Effect.sleep(Duration.sum(Duration.decode(window), Duration.millis(200)))

const SHORT = "3 seconds"

layer(
  serverLayer({
    clientAddress,
    rateLimits: {
      publicPerAddress: { limit: 3, window: SHORT },
      publicPerUser: { limit: 5, window: SHORT },
      tokensPerUser: { limit: 40, window: "1 minute" },
      failuresPerClient: { limit: 4, window: SHORT },
      failuresPerAddress: { limit: 6, window: SHORT }
    }
  }),
  // The live clock: the windows pass in real time.
  { excludeTestServices: true }
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

      yield* windowPasses(SHORT)
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

      yield* windowPasses(SHORT)
      expect((yield* createFrom("10.0.2.7", "lim_r2")).status).toBe(200)
    })
  )

  it.effect("counts wrong secrets per user: locked even with the right secret until the window passes", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_f1")
      // Successes are not failures: they neither count nor reset the count.
      for (let i = 0; i < 3; i++) {
        expect((yield* tokenRequest("lim_f1", m.client_id, `wrong-${i}`, `10.0.3.${i}`)).status).toBe(401)
      }
      for (let i = 0; i < 10; i++) {
        expect((yield* tokenRequest("lim_f1", m.client_id, m.client_secret, "10.0.3.9")).status).toBe(200)
      }
      const fourth = yield* tokenRequest("lim_f1", m.client_id, "wrong-3", "10.0.3.3")
      expect(fourth.status).toBe(401)
      expect(fourth.body).toEqual(errorBody(401, "auth.credentials.invalid"))
      // Four failures from four addresses: the user is locked, for the right secret too, anywhere.
      expectLimited(yield* tokenRequest("lim_f1", m.client_id, "wrong-4", "10.0.3.4"))
      expectLimited(yield* tokenRequest("lim_f1", m.client_id, m.client_secret, "10.0.3.9"))
      expectLimited(yield* tokenRequest("lim_f1", m.client_id, m.client_secret, "10.0.3.10"))

      yield* windowPasses(SHORT)
      const after = yield* tokenRequest("lim_f1", m.client_id, m.client_secret, "10.0.3.9")
      expect(after.status).toBe(200)
      const body: Json = after.body
      expect(body.data.token).toMatch(/^USR-/)
    })
  )

  it.effect("counts wrong secrets per address across users, and other addresses go on", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_f2")
      for (let i = 0; i < 6; i++) {
        expect((yield* tokenRequest(`lim_guess_${i}`, m.client_id, "wrong", "10.0.4.1")).status).toBe(401)
      }
      expectLimited(yield* tokenRequest("lim_f2", m.client_id, m.client_secret, "10.0.4.1"))
      // The partner route shares the address's failures.
      expectLimited(
        yield* exchange({ code: "c", client_id: "cli_x", client_secret: "nope" }, "10.0.4.1"),
        "status"
      )
      expect((yield* tokenRequest("lim_f2", m.client_id, m.client_secret, "10.0.4.2")).status).toBe(200)

      yield* windowPasses(SHORT)
      expect((yield* tokenRequest("lim_f2", m.client_id, m.client_secret, "10.0.4.1")).status).toBe(200)
    })
  )

  it.effect("counts wrong partner secrets per client id on POST /auth/tokens, in the status envelope", () =>
    Effect.gen(function* () {
      const p = yield* partner("Socia limitada")
      yield* merchant("lim_f3")
      // A bad code with the right secret is the partner's mistake, not a guess: not counted.
      for (let i = 0; i < 6; i++) {
        const r = yield* exchange(
          { code: `bogus-${i}`, client_id: p.client_id, client_secret: p.client_secret },
          `10.0.5.${i}`
        )
        expect(r.status).toBe(401)
        expect(r.body).toMatchObject({ status: "error", error: true, message: "auth.code.invalid" })
      }
      for (let i = 0; i < 4; i++) {
        const r = yield* exchange(
          { code: "c", client_id: p.client_id, client_secret: `nope-${i}` },
          `10.0.5.${i}`
        )
        expect(r.status).toBe(401)
        expect(r.body).toMatchObject({ status: "error", error: true, message: "auth.credentials.invalid" })
      }
      // Locked: a real code with the right secret is refused, and stays unused.
      const { code } = yield* Effect.flatMap(Auth.Auth, (auth) =>
        auth.issueCode(p.partner.partner_id, Ids.UserId.make("lim_f3"))
      )
      const body = { code, client_id: p.client_id, client_secret: p.client_secret }
      expectLimited(yield* exchange(body, "10.0.5.9"), "status")

      yield* windowPasses(SHORT)
      const granted = yield* exchange(body, "10.0.5.9")
      expect(granted.status).toBe(200)
      expect(granted.body).toMatchObject({ status: "success", data: { user_id: "lim_f3" } })
    })
  )

  it.effect("caps token issuance per user far above a fleet's needs", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_f4")
      const statuses = yield* Effect.all(
        Array.from({ length: 41 }, (_, i) =>
          tokenRequest("lim_f4", m.client_id, m.client_secret, `10.0.6.${i}`)
        ),
        { concurrency: 8 }
      )
      expect(statuses.filter((r) => r.status === 200)).toHaveLength(40)
      expectLimited(statuses.find((r) => r.status !== 200)!)
    })
  )
})

layer(serverLayer({ clientAddress }))("the default limits on the token routes", (it) => {
  it.effect("let a fleet in: 25 token requests of one merchant at once all answer 200", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_t1")
      const issued = yield* Effect.all(
        Array.from({ length: 25 }, () => tokenRequest("lim_t1", m.client_id, m.client_secret, "10.0.7.1")),
        { concurrency: "unbounded" }
      )
      expect(issued.map((r) => r.status)).toEqual(Array(25).fill(200))
      const tokens = new Set(issued.map((r) => (r.body as Json).data.token))
      expect(tokens.size).toBe(25)
      // And 25 more one after another, in the same minute.
      for (let i = 0; i < 25; i++) {
        expect((yield* tokenRequest("lim_t1", m.client_id, m.client_secret, "10.0.7.1")).status).toBe(200)
      }
    })
  )

  it.effect("stop guessing a secret after 10 wrong ones per user, from any address", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_t2")
      const other = yield* merchant("lim_t3")
      for (let i = 0; i < 10; i++) {
        const r = yield* tokenRequest("lim_t2", m.client_id, `wrong-${i}`, `10.0.8.${i}`)
        expect(r.status).toBe(401)
        expect(r.body).toEqual(errorBody(401, "auth.credentials.invalid"))
      }
      expectLimited(yield* tokenRequest("lim_t2", m.client_id, "wrong-11", "10.0.8.20"))
      expectLimited(yield* tokenRequest("lim_t2", m.client_id, m.client_secret, "10.0.8.21"))
      // Another user from the same addresses is not locked.
      expect((yield* tokenRequest("lim_t3", other.client_id, other.client_secret, "10.0.8.1")).status).toBe(
        200
      )
    })
  )

  it.effect("stop one address after 30 wrong secrets across users", () =>
    Effect.gen(function* () {
      const m = yield* merchant("lim_t4")
      for (let i = 0; i < 30; i++) {
        expect((yield* tokenRequest(`lim_guess_t${i}`, m.client_id, "wrong", "10.0.9.1")).status).toBe(401)
      }
      expectLimited(yield* tokenRequest("lim_t4", m.client_id, m.client_secret, "10.0.9.1"))
      expect((yield* tokenRequest("lim_t4", m.client_id, m.client_secret, "10.0.9.2")).status).toBe(200)
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
