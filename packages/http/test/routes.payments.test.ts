/**
 * The payment routes over HTTP: POST /payments/, GET /payments/{id}, GET /payments/?user_id=,
 * GET /payments/{id}/public and the three PUTs, with the exact wire shapes SPEC shows. Each
 * `layer` block has its own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { BankAccount, Ids, Jobs, Outbox } from "@cobro/core"
import { DateTime, Duration, Effect, TestClock } from "effect"
import { call, client, type Json, merchant, serverLayer, tokenFor } from "./support.js"

/** A merchant and a user token for it. */
const withToken = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    const token = yield* tokenFor(user_id, m.client_id, m.client_secret)
    return { ...m, token }
  })

/** A new user token for a merchant (after the clock moved past an older token's hour). */
const freshToken = (m: {
  readonly user: { readonly user_id: string }
  readonly client_id: string
  readonly client_secret: string
}) => tokenFor(m.user.user_id, m.client_id, m.client_secret)

const createBody = (user_id: string, fields: Record<string, unknown> = {}) => ({
  user_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  ...fields
})

/** POST /payments/ (no Authorization header); `data` of the answer. */
const createPayment = (user_id: string, fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/payments/", { body: createBody(user_id, fields) })
    expect(r.status).toBe(200)
    const body: Json = r.body
    return body.data as { id: string; quotes: Array<{ cvu: string; alias: string }>; [k: string]: Json }
  })

const iso = (dt: DateTime.DateTime) => DateTime.formatIso(dt)

/**
 * Every field a payment always has on the wire (SPEC's Payment), before any transfer. The
 * optional ones (`webhook_url`, `redirect_url`, `motive`, `client_data`, `team_id`,
 * `partner_id`) are there only when they have a value: absent, never `null`.
 */
const paymentKeys = [
  "id",
  "payment_status",
  "price",
  "payment_options",
  "external_id",
  "payment_url",
  "expiration_timestamp",
  "creation_timestamp",
  "last_modified_timestamp",
  "is_deleted",
  "user_id",
  "quotes",
  "transactions",
  "metadata",
  "tags"
].sort()

/** `paymentKeys` plus the optional fields a payment was given. */
const keysWith = (...optional: ReadonlyArray<string>) => [...paymentKeys, ...optional].sort()

/** An error in the `{message, error, code, data}` envelope. */
const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

layer(serverLayer())("POST /payments/", (it) => {
  it.effect("creates a PENDING payment without a token and answers SPEC's data shape", () =>
    Effect.gen(function* () {
      yield* merchant("pay_c1")
      const now = yield* DateTime.now
      const r = yield* call("POST", "/payments/", {
        body: createBody("pay_c1", { external_id: "order-1", motive: "Pedido 1" })
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["code", "data", "error", "message"])
      expect(body).toMatchObject({ message: "payment.created", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual(
        ["expiration_timestamp", "id", "payment_status", "payment_url", "quotes"].sort()
      )
      expect(body.data.id).toBe("VAR-pay_c1-order-1")
      expect(body.data.payment_status).toBe("PENDING")
      expect(body.data.payment_url).toBe("http://localhost:3000/pay/VAR-pay_c1-order-1")
      expect(body.data.expiration_timestamp).toBe(iso(DateTime.add(now, { days: 5 })))
      expect(body.data.quotes).toHaveLength(1)
      expect(Object.keys(body.data.quotes[0]).sort()).toEqual(["alias", "cvu"])
      expect(BankAccount.isValidCvu(body.data.quotes[0].cvu)).toBe(true)
      expect(BankAccount.isValidAlias(body.data.quotes[0].alias)).toBe(true)
    })
  )

  it.effect("answers 503 in the envelope for the deprecated crypto and PIX methods", () =>
    Effect.gen(function* () {
      yield* merchant("pay_c2")
      for (const option of ["crypto", "pix", "PIX"]) {
        const r = yield* call("POST", "/payments/", {
          body: createBody("pay_c2", { payment_options: ["transfer", option] })
        })
        expect(r.status).toBe(503)
        expect(r.body).toEqual(errorBody(503, "payment.method.deprecated"))
      }
    })
  )

  it.effect("refuses a non-positive or over-precise amount with 400 naming the price field", () =>
    Effect.gen(function* () {
      yield* merchant("pay_c3")
      for (const amount of [-5, 0, 10.001]) {
        const r = yield* call("POST", "/payments/", {
          body: createBody("pay_c3", { price: { amount, currency: "ARS" } })
        })
        expect(r.status).toBe(400)
        const body: Json = r.body
        expect(body).toMatchObject({ message: "request.invalid", error: true, code: 400 })
        expect(body.data.field).toMatch(/^price(\.amount)?$/)
      }
      const text = yield* call("POST", "/payments/", {
        body: createBody("pay_c3", { price: { amount: "1500", currency: "ARS" } })
      })
      expect(text.status).toBe(400)
      expect(text.body).toEqual(errorBody(400, "request.invalid", { field: "price.amount" }))
      const currency = yield* call("POST", "/payments/", {
        body: createBody("pay_c3", { price: { amount: 10, currency: "EUR" } })
      })
      expect(currency.status).toBe(400)
      expect(currency.body).toEqual(errorBody(400, "request.invalid", { field: "price.currency" }))
    })
  )

  it.effect("refuses a missing required field and an unknown payment option with 400", () =>
    Effect.gen(function* () {
      yield* merchant("pay_c4")
      const { payment_options: _, ...withoutOptions } = createBody("pay_c4")
      const missing = yield* call("POST", "/payments/", { body: withoutOptions })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "payment_options" }))
      const unknown = yield* call("POST", "/payments/", {
        body: createBody("pay_c4", { payment_options: ["cash"] })
      })
      expect(unknown.status).toBe(400)
      expect(unknown.body).toEqual(errorBody(400, "request.invalid", { field: "payment_options" }))
    })
  )

  it.effect("answers 404 user.not.found for an unknown merchant", () =>
    Effect.gen(function* () {
      const r = yield* call("POST", "/payments/", { body: createBody("pay_nobody") })
      expect(r.status).toBe(404)
      expect(r.body).toEqual(errorBody(404, "user.not.found"))
    })
  )

  it.effect("a repeated external_id with the same body answers the same payment; another body is 409", () =>
    Effect.gen(function* () {
      yield* merchant("pay_c5")
      const first = yield* createPayment("pay_c5", { external_id: "order-7", motive: "Pedido 7" })
      const again = yield* createPayment("pay_c5", { motive: "Pedido 7", external_id: "order-7" })
      expect(again.id).toBe(first.id)
      expect(again.quotes).toEqual(first.quotes)
      const other = yield* call("POST", "/payments/", {
        body: createBody("pay_c5", { external_id: "order-7", motive: "Pedido 8" })
      })
      expect(other.status).toBe(409)
      expect(other.body).toEqual(errorBody(409, "payment.external_id.conflict"))
    })
  )
})

layer(serverLayer())("GET /payments/{paymentId}", (it) => {
  it.effect("answers the whole payment with user_info in the envelope, without internal fields", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_g1")
      const created = yield* createPayment("pay_g1", {
        external_id: "order-1",
        motive: "Pedido 1",
        webhook_url: "https://shop.example.com/hooks",
        redirect_url: "https://shop.example.com/thanks",
        tags: ["a"],
        team_id: "team-1",
        client_data: { first_name: "Ana", email: "ana@example.com" }
      })
      const r = yield* call("GET", `/payments/${created.id}`, { token: m.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "payment.found", error: false, code: 200 })
      const data = body.data
      expect(Object.keys(data).sort()).toEqual(
        keysWith(
          "motive",
          "webhook_url",
          "redirect_url",
          "team_id",
          "client_data",
          "user_info",
          "refunds",
          "refunded_amount"
        )
      )
      expect(data).not.toHaveProperty("partner_id")
      expect(data).not.toHaveProperty("cvu_released")
      expect(data).not.toHaveProperty("creation_request")
      expect(data).not.toHaveProperty("transaction_fields")
      expect(data).toMatchObject({
        id: created.id,
        payment_status: "PENDING",
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        external_id: "order-1",
        webhook_url: "https://shop.example.com/hooks",
        redirect_url: "https://shop.example.com/thanks",
        motive: "Pedido 1",
        payment_url: created.payment_url,
        expiration_timestamp: created.expiration_timestamp,
        is_deleted: false,
        user_id: "pay_g1",
        transactions: [],
        metadata: { motive: [] },
        client_data: { first_name: "Ana", email: "ana@example.com" },
        team_id: "team-1",
        tags: ["a"],
        refunds: [],
        refunded_amount: "0.00"
      })
      expect(data.quotes).toEqual([
        {
          currency: "ARS",
          network: "CVU",
          amount: "1500.00",
          amountReadable: "$ 1.500,00",
          address: created.quotes[0]!.cvu,
          alias: created.quotes[0]!.alias
        }
      ])
      expect(data.user_info).toEqual({
        email: "pay_g1@example.com",
        fiat_payments_enabled: true,
        payment_notifications: true,
        user_id: "pay_g1",
        provider: "cobro",
        payment_url: created.payment_url,
        payment_options: ["transfer"],
        expiration_timestamp: created.expiration_timestamp,
        transactions: []
      })
    })
  )

  it.effect("the typed client decodes the same read", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_g2")
      const created = yield* createPayment("pay_g2", { external_id: "typed-1" })
      const api = yield* client(m.token)
      const read = yield* api.payments.get({ path: { paymentId: Ids.PaymentId.make(created.id) } })
      expect(read.message).toBe("payment.found")
      expect(read.data.id).toBe(created.id)
      expect(read.data.quotes[0]!.address).toBe(created.quotes[0]!.cvu)
      expect(read.data.price.minor).toBe(150000n)
      expect(read.data.user_info.payment_notifications).toBe(false)
    })
  )

  it.effect("another merchant's payment and an unknown id are 404 payment.not.found", () =>
    Effect.gen(function* () {
      yield* merchant("pay_g3")
      const other = yield* withToken("pay_g4")
      const created = yield* createPayment("pay_g3")
      const theirs = yield* call("GET", `/payments/${created.id}`, { token: other.token })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "payment.not.found"))
      const unknown = yield* call("GET", "/payments/VAR-pay_g4-nope", { token: other.token })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(errorBody(404, "payment.not.found"))
    })
  )

  it.effect("without a token is 401 auth.token.missing", () =>
    Effect.gen(function* () {
      yield* merchant("pay_g5")
      const created = yield* createPayment("pay_g5")
      const r = yield* call("GET", `/payments/${created.id}`)
      expect(r.status).toBe(401)
      expect(r.body).toEqual(errorBody(401, "auth.token.missing"))
    })
  )
})

layer(serverLayer())("GET /payments/?user_id=", (it) => {
  it.effect("lists only the caller's payments, oldest first, with SPEC's list fields", () =>
    Effect.gen(function* () {
      const a = yield* withToken("pay_l1")
      yield* merchant("pay_l2")
      const p1 = yield* createPayment("pay_l1", { external_id: "l-1" })
      yield* createPayment("pay_l2", { external_id: "l-x" })
      yield* TestClock.adjust("1 second")
      const p2 = yield* createPayment("pay_l1", { external_id: "l-2" })
      const r = yield* call("GET", "/payments/?user_id=pay_l1", { token: a.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["code", "data", "error", "message"])
      expect(body).toMatchObject({ message: "payments.found", error: false, code: 200 })
      expect(Object.keys(body.data)).toEqual(["payments"])
      expect(body.data.payments.map((p: Json) => p.id)).toEqual([p1.id, p2.id])
      const item = body.data.payments[0]
      expect(Object.keys(item).sort()).toEqual(
        [
          "id",
          "external_id",
          "payment_status",
          "price",
          "quotes",
          "payment_options",
          "payment_url",
          "creation_timestamp",
          "last_modified_timestamp",
          "is_deleted"
        ].sort()
      )
      expect(item).toMatchObject({
        id: p1.id,
        external_id: "l-1",
        payment_status: "PENDING",
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        payment_url: p1.payment_url,
        is_deleted: false
      })
      expect(item.quotes[0]).toMatchObject({ address: p1.quotes[0]!.cvu, amount: "1500.00" })
    })
  )

  it.effect("another user's user_id is 404 user.not.found; a missing user_id is 400", () =>
    Effect.gen(function* () {
      const a = yield* withToken("pay_l3")
      yield* merchant("pay_l4")
      const other = yield* call("GET", "/payments/?user_id=pay_l4", { token: a.token })
      expect(other.status).toBe(404)
      expect(other.body).toEqual(errorBody(404, "user.not.found"))
      const missing = yield* call("GET", "/payments/", { token: a.token })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "user_id" }))
    })
  )

  it.effect("filters by start_date and end_date, both inclusive, and by team_id", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_l5")
      const p1 = yield* createPayment("pay_l5", { external_id: "d-1", team_id: "t1" })
      yield* TestClock.adjust("10 minutes")
      const middle = encodeURIComponent(iso(yield* DateTime.now))
      const p2 = yield* createPayment("pay_l5", { external_id: "d-2" })
      yield* TestClock.adjust("10 minutes")
      const p3 = yield* createPayment("pay_l5", { external_id: "d-3", team_id: "t1" })
      const list = (query: string) =>
        Effect.gen(function* () {
          const r = yield* call("GET", `/payments/?user_id=pay_l5${query}`, { token: m.token })
          expect(r.status).toBe(200)
          return ((r.body as Json).data.payments as Array<Json>).map((p) => p.id)
        })
      expect(yield* list(`&start_date=${middle}&end_date=${middle}`)).toEqual([p2.id])
      expect(yield* list(`&start_date=${middle}`)).toEqual([p2.id, p3.id])
      expect(yield* list(`&end_date=${middle}`)).toEqual([p1.id, p2.id])
      expect(yield* list("&team_id=t1")).toEqual([p1.id, p3.id])
      const bad = yield* call("GET", "/payments/?user_id=pay_l5&start_date=yesterday", { token: m.token })
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual(errorBody(400, "request.invalid", { field: "start_date" }))
    })
  )
})

// Rate limits off: the list needs more creations than a minute's public limit.
layer(serverLayer({ rateLimits: false }))("GET /payments/?user_id= over several storage pages", (it) => {
  it.effect("an empty list is []; a list over several storage pages is one array, oldest first", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_l6")
      const empty = yield* call("GET", "/payments/?user_id=pay_l6", { token: m.token })
      expect(empty.status).toBe(200)
      expect(empty.body).toEqual({
        message: "payments.found",
        error: false,
        code: 200,
        data: { payments: [] }
      })
      const created: Array<string> = []
      for (let i = 0; i < 401; i++) {
        created.push((yield* createPayment("pay_l6", { external_id: `p-${String(i).padStart(3, "0")}` })).id)
      }
      const r = yield* call("GET", "/payments/?user_id=pay_l6", { token: m.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body.data.payments.map((p: Json) => p.id)).toEqual(created)
    })
  )
})

layer(serverLayer())("GET /payments/{paymentId}/public", (it) => {
  it.effect("answers the payer's view without a token", () =>
    Effect.gen(function* () {
      yield* merchant("pay_p1")
      const created = yield* createPayment("pay_p1", {
        external_id: "pub-1",
        motive: "Pedido publico",
        redirect_url: "https://shop.example.com/thanks",
        webhook_url: "https://shop.example.com/hooks",
        client_data: { email: "ana@example.com" }
      })
      const r = yield* call("GET", `/payments/${created.id}/public`)
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "payment.found", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual(
        [
          "id",
          "payment_status",
          "price",
          "quotes",
          "expiration_timestamp",
          "motive",
          "redirect_url",
          "merchant_name"
        ].sort()
      )
      expect(body.data).toMatchObject({
        id: created.id,
        payment_status: "PENDING",
        price: { amount: 1500, currency: "ARS" },
        expiration_timestamp: created.expiration_timestamp,
        motive: "Pedido publico",
        redirect_url: "https://shop.example.com/thanks",
        merchant_name: "Tienda pay_p1"
      })
      expect(body.data.quotes[0]).toMatchObject({
        address: created.quotes[0]!.cvu,
        alias: created.quotes[0]!.alias,
        amount: "1500.00"
      })
      const unknown = yield* call("GET", "/payments/VAR-pay_p1-nope/public")
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(errorBody(404, "payment.not.found"))
    })
  )
})

layer(serverLayer())("PUT /payments/{paymentId}/expiration", (it) => {
  it.effect("extends a PENDING payment and answers the bare payment object", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_e1")
      const created = yield* createPayment("pay_e1", { external_id: "exp-1" })
      const later = iso(DateTime.add(yield* DateTime.now, { days: 7 }))
      const r = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token: m.token,
        body: { expiration_timestamp: later }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(paymentKeys)
      expect(body).not.toHaveProperty("message")
      expect(body).not.toHaveProperty("code")
      expect(body).not.toHaveProperty("data")
      expect(body).toMatchObject({ id: created.id, payment_status: "PENDING", expiration_timestamp: later })
      const read = yield* call("GET", `/payments/${created.id}`, { token: m.token })
      expect((read.body as Json).data.expiration_timestamp).toBe(later)
    })
  )

  it.effect("a time not later than the current expiry, or not a timestamp, is 400 on the field", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_e2")
      const created = yield* createPayment("pay_e2", { external_id: "exp-2" })
      for (const expiration_timestamp of [
        created.expiration_timestamp,
        iso(DateTime.add(yield* DateTime.now, { days: 1 })),
        "next week"
      ]) {
        const r = yield* call("PUT", `/payments/${created.id}/expiration`, {
          token: m.token,
          body: { expiration_timestamp }
        })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "expiration_timestamp" }))
      }
    })
  )

  it.effect("another merchant's payment is 404; a paid payment is 409 payment.not.pending", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_e3")
      const other = yield* withToken("pay_e4")
      const created = yield* createPayment("pay_e3", { external_id: "exp-3" })
      const later = iso(DateTime.add(yield* DateTime.now, { days: 9 }))
      const theirs = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token: other.token,
        body: { expiration_timestamp: later }
      })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "payment.not.found"))
      const paid = yield* call("POST", `/cvu/${created.quotes[0]!.cvu}/faucet`, {
        token: m.token,
        body: { amount: 1500 }
      })
      expect(paid.status).toBe(200)
      const r = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token: m.token,
        body: { expiration_timestamp: later }
      })
      expect(r.status).toBe(409)
      expect(r.body).toEqual(errorBody(409, "payment.not.pending"))
    })
  )
})

layer(serverLayer())("PUT /payments/{paymentId}/price", (it) => {
  it.effect("reprices a PENDING payment: bare payment, price and quote text updated, still PENDING", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_r1")
      const created = yield* createPayment("pay_r1", { external_id: "price-1" })
      const r = yield* call("PUT", `/payments/${created.id}/price`, {
        token: m.token,
        body: { currency: "ARS", amount: 2000.5 }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(paymentKeys)
      expect(body).not.toHaveProperty("message")
      expect(body).not.toHaveProperty("code")
      expect(body).toMatchObject({
        id: created.id,
        payment_status: "PENDING",
        price: { amount: 2000.5, currency: "ARS" }
      })
      expect(body.quotes).toEqual([
        {
          currency: "ARS",
          network: "CVU",
          amount: "2000.50",
          amountReadable: "$ 2.000,50",
          address: created.quotes[0]!.cvu,
          alias: created.quotes[0]!.alias
        }
      ])
    })
  )

  it.effect("a paid payment's state is recalculated on every reprice and a webhook event written", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_r2")
      const created = yield* createPayment("pay_r2", { external_id: "price-2" })
      const paid = yield* call("POST", `/cvu/${created.quotes[0]!.cvu}/faucet`, {
        token: m.token,
        body: { amount: 1500 }
      })
      expect(paid.status).toBe(200)
      const reprice = (amount: number) =>
        Effect.gen(function* () {
          const r = yield* call("PUT", `/payments/${created.id}/price`, {
            token: m.token,
            body: { currency: "ARS", amount }
          })
          expect(r.status).toBe(200)
          return r.body as Json
        })
      const over = yield* reprice(1000)
      expect(over.payment_status).toBe("OVERPAID")
      expect(over.quotes[0].amount).toBe("1000.00")
      expect(over.transaction_fields).toMatchObject({
        amount: "1000.00",
        total_paid: { amount: "1500.00" }
      })
      const under = yield* reprice(2000)
      expect(under.payment_status).toBe("UNDERPAID")
      expect(under.transaction_fields.amount).toBe("2000.00")
      const exact = yield* reprice(1500)
      expect(exact.payment_status).toBe("SUCCESS")
      const outbox = yield* Outbox.Outbox
      const updates = (yield* outbox.list(0, 100_000))
        .map((e) => e.event)
        .filter((e) => e.type === "payment.updated" && e.payload["paymentId"] === created.id)
      // One for the transfer, one per reprice of the paid payment.
      expect(updates).toHaveLength(4)
      expect(updates[3]!.payload).toEqual({
        message: "Payment updated",
        paymentId: created.id,
        externalId: "price-2"
      })
    })
  )

  it.effect(
    "a currency other than ARS or a non-positive amount is 400 on the field; a stranger gets 404",
    () =>
      Effect.gen(function* () {
        const m = yield* withToken("pay_r3")
        const other = yield* withToken("pay_r4")
        const created = yield* createPayment("pay_r3", { external_id: "price-3" })
        const usd = yield* call("PUT", `/payments/${created.id}/price`, {
          token: m.token,
          body: { currency: "USD", amount: 10 }
        })
        expect(usd.status).toBe(400)
        expect(usd.body).toEqual(errorBody(400, "request.invalid", { field: "currency" }))
        for (const amount of [0, -1, 1.005]) {
          const r = yield* call("PUT", `/payments/${created.id}/price`, {
            token: m.token,
            body: { currency: "ARS", amount }
          })
          expect(r.status).toBe(400)
          expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "amount" }))
        }
        const theirs = yield* call("PUT", `/payments/${created.id}/price`, {
          token: other.token,
          body: { currency: "ARS", amount: 10 }
        })
        expect(theirs.status).toBe(404)
        expect(theirs.body).toEqual(errorBody(404, "payment.not.found"))
      })
  )
})

layer(serverLayer())("PUT /payments/{paymentId}/metadata", (it) => {
  it.effect("changes the motive and answers the whole payment with the motive history in the envelope", () =>
    Effect.gen(function* () {
      const m = yield* withToken("pay_m1")
      const created = yield* createPayment("pay_m1", { external_id: "meta-1", motive: "Primero" })
      const at = iso(yield* DateTime.now)
      const r = yield* call("PUT", `/payments/${created.id}/metadata`, {
        token: m.token,
        body: { motive: "Segundo" }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["code", "data", "error", "message"])
      expect(body).toMatchObject({ message: "payment.metadata.updated", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual(keysWith("motive"))
      expect(body.data.motive).toBe("Segundo")
      expect(body.data.metadata).toEqual({
        motive: [{ value: "Segundo", previous: "Primero", modified_by: "pay_m1", modification_timestamp: at }]
      })
      yield* TestClock.adjust("1 minute")
      yield* call("PUT", `/payments/${created.id}/metadata`, {
        token: m.token,
        body: { motive: "Tercero" }
      })
      const read = yield* call("GET", `/payments/${created.id}`, { token: m.token })
      const data = (read.body as Json).data
      expect(data.motive).toBe("Tercero")
      expect(data.metadata.motive).toHaveLength(2)
      expect(data.metadata.motive[1]).toMatchObject({
        value: "Tercero",
        previous: "Segundo",
        modified_by: "pay_m1"
      })
    })
  )

  it.effect("a non-owner is 403 payment.metadata.forbidden and nothing changes; an unknown id is 404", () =>
    Effect.gen(function* () {
      const owner = yield* withToken("pay_m2")
      const other = yield* withToken("pay_m3")
      const created = yield* createPayment("pay_m2", { external_id: "meta-2", motive: "Original" })
      const r = yield* call("PUT", `/payments/${created.id}/metadata`, {
        token: other.token,
        body: { motive: "Hackeado" }
      })
      expect(r.status).toBe(403)
      expect(r.body).toEqual(errorBody(403, "payment.metadata.forbidden"))
      const read = yield* call("GET", `/payments/${created.id}`, { token: owner.token })
      expect((read.body as Json).data).toMatchObject({ motive: "Original", metadata: { motive: [] } })
      const unknown = yield* call("PUT", "/payments/VAR-pay_m3-nope/metadata", {
        token: other.token,
        body: { motive: "x" }
      })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(errorBody(404, "payment.not.found"))
      const missing = yield* call("PUT", `/payments/${created.id}/metadata`, {
        token: owner.token,
        body: {}
      })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "motive" }))
    })
  )
})

layer(serverLayer())("expired payments", (it) => {
  it.effect("after the job expires it: GET shows EXPIRED, PUT price is 409 payment.expired", () =>
    Effect.gen(function* () {
      const owner = yield* merchant("pay_x1")
      const created = yield* createPayment("pay_x1", { external_id: "x-1" })
      yield* TestClock.adjust(Duration.sum(Duration.days(5), Duration.millis(1)))
      const report = yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
      expect(report.expired).toBe(1)
      const m = yield* freshToken(owner)
      const read = yield* call("GET", `/payments/${created.id}`, { token: m })
      expect((read.body as Json).data.payment_status).toBe("EXPIRED")
      const price = yield* call("PUT", `/payments/${created.id}/price`, {
        token: m,
        body: { currency: "ARS", amount: 10 }
      })
      expect(price.status).toBe(409)
      expect(price.body).toEqual(errorBody(409, "payment.expired"))
      const extend = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token: m,
        body: { expiration_timestamp: iso(DateTime.add(yield* DateTime.now, { days: 1 })) }
      })
      expect(extend.status).toBe(409)
      expect(extend.body).toEqual(errorBody(409, "payment.not.pending"))
      // The motive stays editable (the state machine allows it on EXPIRED).
      const motive = yield* call("PUT", `/payments/${created.id}/metadata`, {
        token: m,
        body: { motive: "x" }
      })
      expect(motive.status).toBe(200)
    })
  )

  it.effect("past its expiry before the job runs, a PENDING payment is already treated as EXPIRED", () =>
    Effect.gen(function* () {
      const owner = yield* merchant("pay_x2")
      const created = yield* createPayment("pay_x2", { external_id: "x-2" })
      yield* TestClock.adjust(Duration.days(5))
      const token = yield* freshToken(owner)
      const price = yield* call("PUT", `/payments/${created.id}/price`, {
        token,
        body: { currency: "ARS", amount: 10 }
      })
      expect(price.status).toBe(409)
      expect(price.body).toEqual(errorBody(409, "payment.expired"))
      const extend = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token,
        body: { expiration_timestamp: iso(DateTime.add(yield* DateTime.now, { days: 1 })) }
      })
      expect(extend.status).toBe(409)
      expect(extend.body).toEqual(errorBody(409, "payment.not.pending"))
      // The job has not run: the stored state is still PENDING.
      const read = yield* call("GET", `/payments/${created.id}`, { token })
      expect((read.body as Json).data.payment_status).toBe("PENDING")
    })
  )

  it.effect("an extended payment outlives its first expiry", () =>
    Effect.gen(function* () {
      const owner = yield* merchant("pay_x3")
      const created = yield* createPayment("pay_x3", { external_id: "x-3" })
      const later = iso(DateTime.add(yield* DateTime.now, { days: 6 }))
      const extended = yield* call("PUT", `/payments/${created.id}/expiration`, {
        token: yield* freshToken(owner),
        body: { expiration_timestamp: later }
      })
      expect(extended.status).toBe(200)
      yield* TestClock.adjust(Duration.sum(Duration.days(5), Duration.hours(1)))
      yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
      const read = yield* call("GET", `/payments/${created.id}`, { token: yield* freshToken(owner) })
      expect((read.body as Json).data).toMatchObject({
        payment_status: "PENDING",
        expiration_timestamp: later
      })
    })
  )
})
