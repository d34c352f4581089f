/**
 * The client's requests over real HTTP to a scripted server: which are retried (GET, HEAD, POSTs
 * that take an Idempotency-Key) on which failures (network errors, time-outs, 500/502/503/504),
 * which never are (4xx, PUT, PATCH, the partner code exchange, a final 503), the Idempotency-Key
 * of every POST, and how a failure surfaces (`CobroError` with the envelope, `CobroNetworkError`).
 */
import { Cobro, CobroError, CobroNetworkError } from "@cobro/client"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { delayOf, retryPolicy } from "../src/internal/backoff.js"
import {
  credentials,
  envelopeError,
  fast,
  json,
  type Scripted,
  startScripted,
  tokenAnswer
} from "./support.js"

let server: Scripted
beforeEach(async () => {
  server = await startScripted()
})
afterEach(() => server.close())

const payment = {
  message: "payment.found",
  error: false,
  code: 200,
  data: { id: "VAR-shop-1", payment_status: "PENDING" }
}
const created = {
  message: "payment.created",
  error: false,
  code: 200,
  data: {
    id: "VAR-shop-1",
    payment_status: "PENDING",
    quotes: [],
    payment_url: "x",
    expiration_timestamp: "x"
  }
}
const newPayment = {
  user_id: "shop",
  price: { amount: 10, currency: "ARS" as const },
  payment_options: ["transfer" as const]
}

/** Token requests answered; others by `rest`. */
const withTokens =
  (rest: (r: Scripted["received"][number], res: import("node:http").ServerResponse, i: number) => void) =>
  (r: Scripted["received"][number], res: import("node:http").ServerResponse, i: number) =>
    r.path === "/users/shop/tokens" ? tokenAnswer(res, "tok-1") : rest(r, res, i)

const calls = () => server.received.filter((r) => r.path !== "/users/shop/tokens")

describe("retries", () => {
  it("a GET is retried on 503 and 502, then answers", async () => {
    server.answer = withTokens((_, res) =>
      calls().length <= 2
        ? envelopeError(res, calls().length === 1 ? 503 : 502, "bank.unavailable")
        : json(res, 200, payment)
    )
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    expect((await cobro.getPayment("VAR-shop-1")).data.id).toBe("VAR-shop-1")
    expect(calls().map((r) => r.method)).toEqual(["GET", "GET", "GET"])
  })

  it("a GET gives up after the retries with the last error answer", async () => {
    server.answer = withTokens((_, res) => envelopeError(res, 500, "internal.error"))
    const cobro = new Cobro({
      baseUrl: server.base,
      credentials,
      ...fast,
      retry: { retries: 2, baseDelayMs: 1 }
    })
    const error = await cobro.getPayment("VAR-shop-1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CobroError)
    expect(error).toMatchObject({ status: 500, message: "internal.error", method: "GET" })
    expect(calls()).toHaveLength(3)
  })

  it("a POST that takes an Idempotency-Key is retried with the same key", async () => {
    server.answer = (_, res, i) =>
      i < 2 ? envelopeError(res, 502, "bank.unavailable") : json(res, 200, created)
    const cobro = new Cobro({ baseUrl: server.base, ...fast })
    expect((await cobro.createPayment(newPayment)).data.id).toBe("VAR-shop-1")
    const keys = server.received.map((r) => r.headers["idempotency-key"])
    expect(keys).toHaveLength(3)
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(server.received.map((r) => JSON.parse(r.body))).toEqual([newPayment, newPayment, newPayment])
    // Another call, another key; a key of the caller's is sent as given.
    server.answer = (_, res) => json(res, 200, created)
    await cobro.createPayment(newPayment)
    await cobro.createPayment(newPayment, { idempotencyKey: "order-77" })
    expect(server.received[3]!.headers["idempotency-key"]).not.toBe(keys[0])
    expect(server.received[4]!.headers["idempotency-key"]).toBe("order-77")
  })

  it("never a 4xx, a PUT, a PATCH or the partner code exchange", async () => {
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    server.answer = withTokens((_, res) => envelopeError(res, 409, "payment.external_id.conflict"))
    await expect(cobro.createPayment(newPayment)).rejects.toMatchObject({ status: 409 })
    server.answer = withTokens((_, res) => envelopeError(res, 429, "rate.limited", { retry_after: 3 }))
    await expect(cobro.getPayment("VAR-shop-1")).rejects.toMatchObject({
      status: 429,
      details: { retry_after: 3 }
    })
    server.answer = withTokens((_, res) => envelopeError(res, 503, "bank.unavailable"))
    await expect(cobro.repricePayment("VAR-shop-1", { amount: 5, currency: "ARS" })).rejects.toMatchObject({
      status: 503
    })
    await expect(
      cobro.changeCustomerAlias("c1", { alias: "x", create_new_cvu: false })
    ).rejects.toMatchObject({
      status: 503
    })
    await expect(cobro.exchangeCode({ code: "c", client_id: "a", client_secret: "b" })).rejects.toMatchObject(
      {
        status: 503
      }
    )
    expect(calls().map((r) => r.method)).toEqual(["POST", "GET", "PUT", "PATCH", "POST"])
    // PUT and PATCH carry no Idempotency-Key; every POST does.
    expect(calls().map((r) => r.headers["idempotency-key"] !== undefined)).toEqual([
      true,
      false,
      false,
      false,
      true
    ])
  })

  it("a 503 that is final (a deprecated payment method) is not retried", async () => {
    server.answer = (_, res) => envelopeError(res, 503, "payment.method.deprecated")
    const cobro = new Cobro({ baseUrl: server.base, ...fast })
    await expect(cobro.createPayment(newPayment)).rejects.toMatchObject({
      message: "payment.method.deprecated"
    })
    expect(server.received).toHaveLength(1)
  })

  it("a dropped connection is retried; past the retries a CobroNetworkError", async () => {
    server.answer = withTokens((_, res, i) => (i < 3 ? res.socket?.destroy() : json(res, 200, payment)))
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    expect((await cobro.getPayment("VAR-shop-1")).data.id).toBe("VAR-shop-1")
    server.answer = withTokens((_, res) => res.socket?.destroy())
    const error = await cobro.getPayment("VAR-shop-1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CobroNetworkError)
    expect(error).toMatchObject({ method: "GET", attempts: 4 })
  })

  it("a refused connection is a CobroNetworkError", async () => {
    const base = server.base
    await server.close()
    const cobro = new Cobro({ baseUrl: base, ...fast, retry: { retries: 1, baseDelayMs: 1 } })
    const error = await cobro.getPublicPayment("VAR-shop-1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CobroNetworkError)
    expect(error).toMatchObject({ attempts: 2 })
  })

  it("an attempt past timeoutMs is abandoned and retried", async () => {
    server.answer = (_, res, i) => (i === 0 ? undefined : json(res, 200, payment)) // the first never answers
    const cobro = new Cobro({ baseUrl: server.base, ...fast, timeoutMs: 200 })
    expect((await cobro.getPublicPayment("VAR-shop-1")).data.id).toBe("VAR-shop-1")
    expect(server.received).toHaveLength(2)
  })

  it("the caller's abort stops at once, without retries", async () => {
    server.answer = () => undefined // never answers
    const cobro = new Cobro({ baseUrl: server.base, ...fast })
    const controller = new AbortController()
    const pending = cobro
      .getPublicPayment("VAR-shop-1", { signal: controller.signal })
      .catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 50))
    controller.abort()
    const error = await pending
    expect(error).toMatchObject({ name: "AbortError" })
    expect(server.received).toHaveLength(1)
  })

  it("a non-envelope error answer keeps its status and text", async () => {
    server.answer = (_, res) => {
      res.writeHead(404, { "content-type": "text/html" })
      res.end("<h1>no such thing</h1>")
    }
    const cobro = new Cobro({ baseUrl: server.base, ...fast })
    const error = await cobro.getPublicPayment("VAR-shop-1").catch((e: unknown) => e)
    expect(error).toMatchObject({
      status: 404,
      message: "http.404",
      details: { detail: "<h1>no such thing</h1>" }
    })
  })
})

describe("backoff", () => {
  it("doubles its ceiling per retry up to the maximum, with full jitter and Retry-After as a floor", () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000 })
    expect(policy.retries).toBe(3)
    expect([1, 2, 3, 4, 5].map((n) => delayOf(policy, n, () => 0.999999))).toEqual(
      [100, 200, 400, 800, 1000].map((ms) => ms * 0.999999)
    )
    expect(delayOf(policy, 3, () => 0)).toBe(0)
    expect(delayOf(policy, 1, () => 0, 0.5)).toBe(500)
    expect(delayOf(policy, 1, () => 0, 60)).toBe(1_000)
  })
})

describe("base URL with a prefix", () => {
  it("routes are matched below the prefix: the token goes only to secured routes", async () => {
    server.answer = (r, res) =>
      r.path === "/api/cobro/users/shop/tokens" ? tokenAnswer(res, "tok-p") : json(res, 200, payment)
    const cobro = new Cobro({ baseUrl: `${server.base}/api/cobro/`, credentials, ...fast })
    await cobro.getPublicPayment("VAR-shop-1")
    await cobro.getPayment("VAR-shop-1")
    expect(server.received.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([
      ["GET", "/api/cobro/payments/VAR-shop-1/public", undefined],
      ["POST", "/api/cobro/users/shop/tokens", undefined],
      ["GET", "/api/cobro/payments/VAR-shop-1", "Bearer tok-p"]
    ])
    expect(JSON.parse(server.received[1]!.body)).toEqual({ client_id: "ci_1", client_secret: "cs_1" })
  })
})
