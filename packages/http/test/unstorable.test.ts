/**
 * Text no store keeps as sent (a NUL, a lone surrogate), control characters in ids, and paths
 * the router cannot decode are refused at the edge with `400 request.invalid` naming the field,
 * on every route; the hosted pages answer their own HTML. (The same requests against Postgres
 * and SQLite: `packages/server/test/fuzzStorage.test.ts`.)
 */
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, merchant, raw, serverLayer, tokenFor } from "./support.js"

const invalid = (field: string) => ({
  message: "request.invalid",
  error: true,
  code: 400,
  data: { field, detail: expect.any(String) }
})

const paymentBody = (user_id: string, fields: Record<string, unknown> = {}) => ({
  user_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  ...fields
})

/** A user token of a fresh merchant. */
const userToken = (user_id: string) =>
  Effect.gen(function* () {
    const created = yield* merchant(user_id)
    return yield* tokenFor(user_id, created.client_id, created.client_secret)
  })

/** A raw path, sent as it is written (no encoding on the way). */
const rawPath = (method: "GET" | "PATCH" | "POST", path: string) => raw(HttpClientRequest.make(method)(path))

layer(serverLayer({ rateLimits: false }))((it) => {
  describe("unstorable input", () => {
    it.effect("a malformed percent-encoding in the path is 400 request.invalid naming the path", () =>
      Effect.gen(function* () {
        for (const [method, path, field] of [
          ["PATCH", "/customers/x%ZZ/alias", "customer_id"],
          ["GET", "/payments/%", "paymentId"],
          ["GET", "/payments/%E0%A4%A", "paymentId"],
          ["GET", "/payments/%ED%A0%80/public", "paymentId"],
          ["GET", "/nope/%ZZ", "path"],
          ["GET", "/pay/%ZZ", "path"]
        ] as const) {
          const response = yield* rawPath(method, path)
          expect([method, path, response.status, response.body]).toEqual([method, path, 400, invalid(field)])
        }
      })
    )

    it.effect("a control character in a path parameter is 400 naming the parameter", () =>
      Effect.gen(function* () {
        for (const [method, path, field] of [
          ["GET", "/payments/%00/public", "paymentId"],
          ["POST", "/users/%00/tokens", "id"],
          ["GET", "/payments/a%0Ab", "paymentId"],
          ["PATCH", "/customers/x%7F/alias", "customer_id"]
        ] as const) {
          const response = yield* rawPath(method, path)
          expect([path, response.status, response.body]).toEqual([path, 400, invalid(field)])
        }
      })
    )

    it.effect("a path parameter over 256 characters is 400; up to 256 it reaches the route", () =>
      Effect.gen(function* () {
        const long = yield* rawPath("GET", `/payments/${"x".repeat(257)}/public`)
        expect(long.body).toEqual(invalid("paymentId"))
        // Past the router's default limit of 100 characters, a payment id is still looked up.
        const found = yield* rawPath("GET", `/payments/VAR-${"u".repeat(64)}-${"e".repeat(64)}/public`)
        expect([found.status, (found.body as { message: string }).message]).toEqual([
          404,
          "payment.not.found"
        ])
      })
    )

    it.effect("a NUL or a lone surrogate anywhere in a JSON body is 400 naming the field", () =>
      Effect.gen(function* () {
        const token = yield* userToken("unstorable_1")
        const cases: ReadonlyArray<readonly [unknown, string]> = [
          [paymentBody("unstorable_1\u0000"), "user_id"],
          [paymentBody("unstorable_1", { motive: "pago \u0000" }), "motive"],
          [paymentBody("unstorable_1", { motive: "pago \ud800" }), "motive"],
          [paymentBody("unstorable_1", { motive: "\udfff pago" }), "motive"],
          [paymentBody("unstorable_1", { metadata: { "k\u0000": "v" } }), "metadata"],
          [paymentBody("unstorable_1", { metadata: { order: ["a", "b\u0000"] } }), "metadata.order.1"],
          ["\u0000", "body"]
        ]
        for (const [body, field] of cases) {
          const response = yield* call("POST", "/payments/", { token, body })
          expect([field, response.status, response.body]).toEqual([field, 400, invalid(field)])
        }
        // A pair of surrogates is one character (an emoji), and the escaped text "\u0000" is text.
        const fine = yield* call("POST", "/payments/", {
          token,
          body: paymentBody("unstorable_1", { motive: "pago 💥 \\u0000" })
        })
        expect(fine.status).toBe(200)
      })
    )

    it.effect("a control character in an id of the body is 400 naming it", () =>
      Effect.gen(function* () {
        const token = yield* userToken("unstorable_2")
        const response = yield* call("POST", "/payments/", { token, body: paymentBody("unstorable_2\u0001") })
        expect(response.body).toEqual(invalid("user_id"))
      })
    )

    it.effect("a NUL in a query parameter is 400 naming it", () =>
      Effect.gen(function* () {
        const token = yield* userToken("unstorable_3")
        const response = yield* call("GET", "/payments/?user_id=unstorable_3%00", { token })
        expect(response.body).toEqual(invalid("user_id"))
        const customers = yield* call("GET", "/customers/?user_id=%00", { token })
        expect(customers.body).toEqual(invalid("user_id"))
      })
    )
  })
})
