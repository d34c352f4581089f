/**
 * Amounts at the top of their range over HTTP: every amount a client sends (a price, a new
 * price, a faucet transfer, a transfer tolerance, a payout) is at most 99,999,999,999.99 ARS
 * (`Money.maxMinor`); the maximum itself is taken and answered exactly, anything above it is
 * `400 request.invalid` naming the field, never a 500 and never a price no transfer can pay.
 * The same bounds on SQLite and Postgres: the storage contract's "money" scenarios.
 */
import { HttpClientRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  bankHolder,
  call,
  type Json,
  merchant,
  partner,
  partnerTokenFor,
  raw,
  secondFactorCode,
  serverLayer,
  tokenFor
} from "./support.js"

const MAX = 99_999_999_999.99
/** Above the maximum: one centavo more, JSON numbers far beyond it, 2^64-ish centavos. */
const tooLarge: ReadonlyArray<number> = [100_000_000_000, 1e21, 1e308, 12_345_678_901_234_567_000]

const invalid = (field: string) => ({
  message: "request.invalid",
  error: true,
  code: 400,
  data: { field, detail: expect.stringMatching(/at most 99999999999\.99/) }
})

const withToken = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    return { ...m, token: yield* tokenFor(user_id, m.client_id, m.client_secret) }
  })

const createBody = (user_id: string, price: unknown, external_id = "order-1") => ({
  user_id,
  price,
  payment_options: ["transfer"],
  external_id
})

/** A body sent as raw JSON text, so a number literal reaches the server as written. */
const sendText = (method: "POST" | "PUT", path: string, token: string, text: string) =>
  raw(
    HttpClientRequest.make(method)(path).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyText(text, "application/json")
    )
  )

layer(serverLayer())("amounts above the maximum", (it) => {
  it.effect(
    "POST /payments/: the maximum price is quoted exactly; above it, or a quote above it, is 400",
    () =>
      Effect.gen(function* () {
        const m = yield* withToken("amt_p1")
        const ok = yield* call("POST", "/payments/", {
          body: createBody("amt_p1", { amount: MAX, currency: "ARS" })
        })
        expect(ok.status).toBe(200)
        const id = ((ok.body as Json).data as { id: string }).id
        const read = yield* call("GET", `/payments/${id}`, { token: m.token })
        expect((read.body as Json).data).toMatchObject({
          price: { amount: MAX, currency: "ARS" },
          quotes: [{ amount: "99999999999.99", amountReadable: "$ 99.999.999.999,99" }]
        })
        for (const [i, amount] of tooLarge.entries()) {
          const r = yield* call("POST", "/payments/", {
            body: createBody("amt_p1", { amount, currency: "ARS" }, `big-${i}`)
          })
          expect(r.status).toBe(400)
          expect(r.body).toEqual(invalid("price.amount"))
        }
        // In the currency's own scale: USDT has 6 decimals, so its maximum is 9,999,999.999999.
        const usdt = yield* call("POST", "/payments/", {
          body: createBody("amt_p1", { amount: 10_000_000, currency: "USDT" }, "usdt")
        })
        expect(usdt.status).toBe(400)
        expect(usdt.body).toMatchObject({ message: "request.invalid", data: { field: "price.amount" } })
        expect((usdt.body as Json).data.detail).toMatch(/USDT amounts are at most 9999999\.999999/)
        // BRL 50,000,000,000 is within the maximum, but its ARS quote (at 220) is not.
        const brl = yield* call("POST", "/payments/", {
          body: createBody("amt_p1", { amount: 50_000_000_000, currency: "BRL" }, "brl")
        })
        expect(brl.status).toBe(400)
        expect(brl.body).toEqual(invalid("price.amount"))
        expect((brl.body as Json).data.detail).toMatch(/^the price is 11000000000000\.00 in ARS; /)
      })
  )

  it.effect(
    "PUT /payments/{id}/price: the maximum is taken, above it is 400 on amount and the price stays",
    () =>
      Effect.gen(function* () {
        const m = yield* withToken("amt_r1")
        const created = yield* call("POST", "/payments/", {
          body: createBody("amt_r1", { amount: 1500, currency: "ARS" })
        })
        const id = ((created.body as Json).data as { id: string }).id
        for (const amount of tooLarge) {
          const r = yield* call("PUT", `/payments/${id}/price`, {
            token: m.token,
            body: { currency: "ARS", amount }
          })
          expect(r.status).toBe(400)
          expect(r.body).toEqual(invalid("amount"))
        }
        const read = yield* call("GET", `/payments/${id}`, { token: m.token })
        expect((read.body as Json).data).toMatchObject({ price: { amount: 1500 } })
        const ok = yield* call("PUT", `/payments/${id}/price`, {
          token: m.token,
          body: { currency: "ARS", amount: MAX }
        })
        expect(ok.status).toBe(200)
        expect(ok.body).toMatchObject({ price: { amount: MAX }, quotes: [{ amount: "99999999999.99" }] })
      })
  )

  it.effect(
    "POST /cvu/{cvu}/faucet: the maximum is credited; above it (also as raw JSON text) is 400 on amount",
    () =>
      Effect.gen(function* () {
        const m = yield* withToken("amt_f1")
        const created = yield* call("POST", "/payments/", {
          body: createBody("amt_f1", { amount: MAX, currency: "ARS" })
        })
        const { id, quotes } = (created.body as Json).data as { id: string; quotes: Array<{ cvu: string }> }
        const cvu = quotes[0]!.cvu
        for (const amount of tooLarge) {
          const r = yield* call("POST", `/cvu/${cvu}/faucet`, { token: m.token, body: { amount } })
          expect(r.status).toBe(400)
          expect(r.body).toEqual(invalid("amount"))
        }
        const text = yield* sendText(
          "POST",
          `/cvu/${cvu}/faucet`,
          m.token,
          '{"amount": 123456789012345678901234567890.12}'
        )
        expect(text.status).toBe(400)
        expect(text.body).toEqual(invalid("amount"))
        const unpaid = yield* call("GET", `/payments/${id}`, { token: m.token })
        expect((unpaid.body as Json).data).toMatchObject({ payment_status: "PENDING", transactions: [] })

        const sent = yield* call("POST", `/cvu/${cvu}/faucet`, { token: m.token, body: { amount: MAX } })
        expect(sent.status).toBe(200)
        expect((sent.body as Json).data).toMatchObject({ amount: MAX, outcome: "credited" })
        const paid = yield* call("GET", `/payments/${id}`, { token: m.token })
        expect((paid.body as Json).data).toMatchObject({
          payment_status: "SUCCESS",
          transaction_fields: { amount: "99999999999.99" }
        })
      })
  )

  it.effect(
    "PATCH /users/{id}: a transfer_tolerance above the maximum is 400 on the field; the maximum is kept",
    () =>
      Effect.gen(function* () {
        yield* merchant("amt_u1")
        const token = yield* partnerTokenFor(yield* partner("Socio Montos"), "amt_u1")
        for (const transfer_tolerance of tooLarge) {
          const r = yield* call("PATCH", "/users/amt_u1", { token, body: { transfer_tolerance } })
          expect(r.status).toBe(400)
          expect(r.body).toEqual({
            status: "error",
            error: true,
            message: "request.invalid",
            data: { field: "transfer_tolerance", detail: expect.stringMatching(/at most 99999999999\.99/) }
          })
        }
        const ok = yield* call("PATCH", "/users/amt_u1", { token, body: { transfer_tolerance: MAX } })
        expect(ok.status).toBe(200)
        expect((ok.body as Json).data).toMatchObject({ transfer_tolerance: MAX })
      })
  )

  it.effect("POST /split/payments/{id}/payouts: a payout amount above the maximum is 400 on its field", () =>
    Effect.gen(function* () {
      const m = yield* withToken("amt_s1")
      const split = yield* call("POST", "/split/payments", {
        token: m.token,
        body: { external_id: "order-1" }
      })
      const splitId = ((split.body as Json).data as { split_payment_id: string }).split_payment_id
      const created = yield* call("POST", "/split/accounts", {
        token: m.token,
        body: [{ address: yield* bankHolder("Hugo") }]
      })
      const request_id = (created.body as Json).data.request_id as string
      const verified = yield* call("POST", "/split/accounts/verify", {
        token: m.token,
        body: { request_id, code: yield* secondFactorCode(request_id) }
      })
      const account_id = ((verified.body as Json).data.accounts as Array<Json>)[0]!.account_id as string
      for (const amount of tooLarge) {
        const r = yield* call("POST", `/split/payments/${splitId}/payouts`, {
          token: m.token,
          body: { payouts: [{ account_id, amount }] }
        })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(invalid("payouts.0.amount"))
      }
    })
  )
})
