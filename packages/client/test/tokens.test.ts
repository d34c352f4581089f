/**
 * The client's tokens, over real HTTP to a scripted server: one fetch for concurrent calls, a new
 * token shortly before expiry, one new token and one more attempt after a 401, a token request
 * retried on 5xx, and a fixed token sent as is.
 */
import { Cobro, CobroError } from "@cobro/client"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { marginOf } from "../src/internal/tokens.js"
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

const payment = { message: "payment.found", error: false, code: 200, data: { id: "VAR-shop-1" } }
const tokenRequests = () => server.received.filter((r) => r.path === "/users/shop/tokens")
const bearers = () =>
  server.received.filter((r) => r.path !== "/users/shop/tokens").map((r) => r.headers.authorization)

/** Tokens numbered in order; `expiresIn` seconds; `refuse(token)` answers 401 for that token. */
const tokenServer = (expiresIn: number, refuse: (token: string | undefined) => boolean = () => false) => {
  let issued = 0
  server.answer = (r, res) => {
    if (r.path === "/users/shop/tokens") return tokenAnswer(res, `tok-${++issued}`, expiresIn)
    const token = r.headers.authorization?.replace(/^Bearer /, "")
    if (refuse(token)) return envelopeError(res, 401, "auth.token.expired")
    json(res, 200, payment)
  }
}

describe("tokens", () => {
  it("concurrent calls share one token request", async () => {
    tokenServer(3600)
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    await Promise.all([1, 2, 3, 4, 5].map(() => cobro.getPayment("VAR-shop-1")))
    expect(tokenRequests()).toHaveLength(1)
    expect(new Set(bearers())).toEqual(new Set(["Bearer tok-1"]))
  })

  it("a token is replaced a tenth of its lifetime (at most a minute) before it expires", async () => {
    expect(marginOf(3_600_000)).toBe(60_000)
    expect(marginOf(100_000)).toBe(10_000)
    tokenServer(100)
    let now = 1_000_000
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast, now: () => now })
    await cobro.getPayment("VAR-shop-1")
    now += 89_999
    await cobro.getPayment("VAR-shop-1")
    now += 1
    await cobro.getPayment("VAR-shop-1")
    expect(bearers()).toEqual(["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"])
  })

  it("after a 401 one new token and one more attempt; a second 401 is the caller's", async () => {
    tokenServer(3600, (token) => token === "tok-1")
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    expect((await cobro.getPayment("VAR-shop-1")).data.id).toBe("VAR-shop-1")
    expect(bearers()).toEqual(["Bearer tok-1", "Bearer tok-2"])
    tokenServer(3600, () => true)
    const error = await cobro.getPayment("VAR-shop-1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CobroError)
    expect(error).toMatchObject({ status: 401, message: "auth.token.expired" })
    expect(tokenRequests()).toHaveLength(3)
  })

  it("the token request is retried on 5xx; refused credentials throw the server's key", async () => {
    let n = 0
    server.answer = (r, res) =>
      r.path === "/users/shop/tokens"
        ? ++n === 1
          ? envelopeError(res, 503, "service.unavailable")
          : tokenAnswer(res, "tok-x")
        : json(res, 200, payment)
    const cobro = new Cobro({ baseUrl: server.base, credentials, ...fast })
    await cobro.getPayment("VAR-shop-1")
    expect(tokenRequests()).toHaveLength(2)
    server.answer = (_, res) => envelopeError(res, 401, "auth.credentials.invalid")
    const other = new Cobro({ baseUrl: server.base, credentials, ...fast })
    await expect(other.getPayment("VAR-shop-1")).rejects.toMatchObject({
      status: 401,
      message: "auth.credentials.invalid",
      method: "POST"
    })
  })

  it("a fixed token is sent as is, and a 401 is not retried", async () => {
    server.answer = (_, res) => envelopeError(res, 401, "auth.token.invalid")
    const cobro = new Cobro({ baseUrl: server.base, token: "PAR-abc", ...fast })
    await expect(cobro.getAccount("shop")).rejects.toMatchObject({
      status: 401,
      message: "auth.token.invalid"
    })
    expect(server.received.map((r) => r.headers.authorization)).toEqual(["Bearer PAR-abc"])
    expect(() => new Cobro({ baseUrl: server.base, token: "t", credentials })).toThrow(TypeError)
  })
})
