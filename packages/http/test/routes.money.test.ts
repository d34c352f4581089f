/**
 * The reads of issue 20 over HTTP: GET /customers/{id}, GET /customers/{id}/transactions (keyset
 * pages), GET /users/{user_id}/balance and GET /transactions/payouts. Each `layer` block has its
 * own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { Jobs } from "@cobro/core"
import { Effect, TestClock } from "effect"
import {
  bankHolder,
  call,
  client,
  type Json,
  merchant,
  merchantCuit,
  partner,
  partnerTokenFor,
  serverLayer,
  tokenFor
} from "./support.js"

const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

const withToken = (user_id: string, alias_prefix?: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id, alias_prefix === undefined ? {} : { alias_prefix })
    return { ...m, token: yield* tokenFor(user_id, m.client_id, m.client_secret) }
  })

const createCustomer = (token: string, body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/customers/", { token, body })
    expect(r.status).toBe(200)
    return (r.body as Json).data as { customer_id: string; bank_info: { cvu: string; alias: string } }
  })

layer(serverLayer())("GET /customers/{customer_id}", (it) => {
  it.effect("answers the customer with bank_info, balance and timestamps; absent fields are left out", () =>
    Effect.gen(function* () {
      const m = yield* withToken("mr_c1", "tienda")
      const full = yield* createCustomer(m.token, {
        user_id: "mr_c1",
        alias: ".juan",
        customer_id: "20111222",
        name: "Juan Perez",
        contact: { email: "juan@example.com" },
        webhook_url: "https://shop.example.com/hooks/customers"
      })
      yield* call("POST", `/cvu/${full.bank_info.cvu}/faucet`, { token: m.token, body: { amount: 1000 } })
      const r = yield* call("GET", "/customers/20111222", { token: m.token })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({
        message: "customer.found",
        error: false,
        code: 200,
        data: {
          customer_id: "20111222",
          user_id: "mr_c1",
          name: "Juan Perez",
          alias: ".juan",
          bank_info: full.bank_info,
          balance: 987.9,
          contact: { email: "juan@example.com" },
          webhook_url: "https://shop.example.com/hooks/customers",
          creation_timestamp: expect.any(String),
          last_modified_timestamp: expect.any(String)
        }
      })

      yield* createCustomer(m.token, {
        user_id: "mr_c1",
        alias: ".ana",
        customer_id: "27000111",
        name: "Ana"
      })
      const bare = yield* call("GET", "/customers/27000111", { token: m.token })
      expect(bare.status).toBe(200)
      expect(Object.keys((bare.body as Json).data)).not.toContain("contact")
      expect(Object.keys((bare.body as Json).data)).not.toContain("webhook_url")
      expect((bare.body as Json).data.balance).toBe(0)

      // The typed client reads it too.
      const typed = yield* (yield* client(m.token)).customers.get({
        path: { customer_id: "20111222" as never }
      })
      expect(typed.data.contact).toEqual({ email: "juan@example.com" })
    })
  )

  it.effect("another merchant's or an unknown customer is 404; no token is 401", () =>
    Effect.gen(function* () {
      const a = yield* withToken("mr_c2", "tiendab")
      const b = yield* withToken("mr_c3")
      yield* createCustomer(a.token, {
        user_id: "mr_c2",
        alias: ".pepe",
        customer_id: "20999888",
        name: "Pepe"
      })
      const foreign = yield* call("GET", "/customers/20999888", { token: b.token })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual(errorBody(404, "customer.not.found"))
      const unknown = yield* call("GET", "/customers/nobody", { token: a.token })
      expect(unknown.status).toBe(404)
      const bad = yield* call("GET", "/customers/bad%20id", { token: a.token })
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual(errorBody(400, "request.invalid", { field: "customer_id" }))
      expect((yield* call("GET", "/customers/20999888")).status).toBe(401)
    })
  )
})

layer(serverLayer())("GET /customers/{customer_id}/transactions", (it) => {
  it.effect("pages newest first; next_cursor leads to the next page and is absent on the last", () =>
    Effect.gen(function* () {
      const m = yield* withToken("mr_t1", "tiendat")
      const c = yield* createCustomer(m.token, {
        user_id: "mr_t1",
        alias: ".juan",
        customer_id: "20111333",
        name: "Juan"
      })
      const amounts = [100, 200, 300, 400, 500]
      for (const amount of amounts) {
        const sent = yield* call("POST", `/cvu/${c.bank_info.cvu}/faucet`, {
          token: m.token,
          body: { amount }
        })
        expect(sent.status).toBe(200)
        yield* TestClock.adjust("1 second")
      }
      const seen: Array<Json> = []
      const sizes: Array<number> = []
      let cursor: string | undefined = undefined
      for (let i = 0; i < 10; i++) {
        const query: string =
          cursor === undefined ? "?limit=2" : `?limit=2&cursor=${encodeURIComponent(cursor)}`
        const r = yield* call("GET", `/customers/20111333/transactions${query}`, { token: m.token })
        expect(r.status).toBe(200)
        const data = (r.body as Json).data
        expect((r.body as Json).message).toBe("customer.transactions.found")
        seen.push(...data.transactions)
        sizes.push(data.transactions.length)
        cursor = data.next_cursor
        if (cursor === undefined) {
          expect(Object.keys(data)).toEqual(["transactions"])
          break
        }
      }
      expect(sizes).toEqual([2, 2, 1])
      expect(seen.map((t) => t.amount)).toEqual(["500.00", "400.00", "300.00", "200.00", "100.00"])
      expect(seen[0]).toMatchObject({
        customer_id: "20111333",
        address: c.bank_info.cvu,
        credited_amount: "493.95",
        transaction_status: "PROCESSED"
      })
      // Each one is the SPEC'd read's transaction.
      const one = yield* call("GET", `/customers/20111333/transactions/${seen[2].transaction_id}`, {
        token: m.token
      })
      expect((one.body as Json).data).toEqual(seen[2])
      // Default limit: all five in one page.
      const all = yield* call("GET", "/customers/20111333/transactions", { token: m.token })
      expect((all.body as Json).data.transactions).toHaveLength(5)
      expect((all.body as Json).data.next_cursor).toBeUndefined()
    })
  )

  it.effect("a bad limit or cursor is 400 naming it; another merchant's customer is 404", () =>
    Effect.gen(function* () {
      const m = yield* withToken("mr_t2", "tiendau")
      const other = yield* withToken("mr_t3")
      yield* createCustomer(m.token, {
        user_id: "mr_t2",
        alias: ".juan",
        customer_id: "20111444",
        name: "Juan"
      })
      for (const limit of ["0", "101", "abc", "1.5"]) {
        const r = yield* call("GET", `/customers/20111444/transactions?limit=${limit}`, { token: m.token })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "limit" }))
      }
      for (const cursor of ["nope", "W10", "WzEsIiJd", "%21%21"]) {
        const r = yield* call("GET", `/customers/20111444/transactions?cursor=${cursor}`, { token: m.token })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "cursor" }))
      }
      const foreign = yield* call("GET", "/customers/20111444/transactions", { token: other.token })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual(errorBody(404, "customer.not.found"))
    })
  )
})

/** Friday 20 November 2026, 12:00 UTC (09:00 in Buenos Aires). */
const noon = Date.UTC(2026, 10, 20, 12, 0, 0)

/** A payment of `amount` pesos paid in full through the faucet. */
const paidPayment = (token: string, user_id: string, amount: number, external_id: string) =>
  Effect.gen(function* () {
    const created = yield* call("POST", "/payments/", {
      body: { user_id, price: { amount, currency: "ARS" }, payment_options: ["transfer"], external_id }
    })
    expect(created.status).toBe(200)
    const cvu = (created.body as Json).data.quotes[0].cvu
    expect((yield* call("POST", `/cvu/${cvu}/faucet`, { token, body: { amount } })).status).toBe(200)
  })

layer(serverLayer())("GET /users/{user_id}/balance and GET /transactions/payouts", (it) => {
  it.effect(
    "a schedule's sweeps show in the balance and in the payouts list, with partner or user token",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(noon)
        const m = yield* merchant("mr_p1")
        const p = yield* partner("Socio mr_p1")
        const own = yield* bankHolder("Tienda mr_p1", merchantCuit)
        let user = yield* tokenFor("mr_p1", m.client_id, m.client_secret)
        let par = yield* partnerTokenFor(p, "mr_p1")

        const empty = yield* call("GET", "/users/mr_p1/balance", { token: user })
        expect(empty.body).toEqual({
          message: "balance.found",
          error: false,
          code: 200,
          data: { user_id: "mr_p1", balances: [{ currency: "ARS", available: "0.00", in_transit: "0.00" }] }
        })
        const none = yield* call("GET", "/transactions/payouts", { token: user })
        expect((none.body as Json).data).toEqual({ payouts: [] })

        yield* paidPayment(user, "mr_p1", 1000, "order-1")
        const funded = yield* call("GET", "/users/mr_p1/balance", { token: par })
        expect((funded.body as Json).data.balances).toEqual([
          { currency: "ARS", available: "987.90", in_transit: "0.00" }
        ])

        const schedule = yield* call("POST", "/transactions/schedules", {
          token: par,
          body: { schedule_type: "payout", frequency: "daily", payload: { address: own } }
        })
        expect(schedule.status).toBe(200)
        const schedule_id = (schedule.body as Json).data.schedule_id
        const jobs = yield* Jobs.Jobs
        yield* TestClock.adjust("1 day")
        yield* jobs.runDue()
        user = yield* tokenFor("mr_p1", m.client_id, m.client_secret)
        par = yield* partnerTokenFor(p, "mr_p1")
        yield* paidPayment(user, "mr_p1", 500, "order-2")
        yield* TestClock.adjust("1 day")
        yield* jobs.runDue()
        user = yield* tokenFor("mr_p1", m.client_id, m.client_secret)
        par = yield* partnerTokenFor(p, "mr_p1")

        const after = yield* call("GET", "/users/mr_p1/balance", { token: user })
        expect((after.body as Json).data.balances).toEqual([
          { currency: "ARS", available: "0.00", in_transit: "0.00" }
        ])
        const list = yield* call("GET", "/transactions/payouts", { token: par })
        expect(list.status).toBe(200)
        const payouts = (list.body as Json).data.payouts as Array<Json>
        expect(payouts.map((x) => x.amount)).toEqual(["493.95", "987.90"])
        for (const x of payouts) {
          expect(x).toEqual({
            payout_id: expect.any(String),
            kind: "schedule",
            amount: x.amount,
            currency: "ARS",
            destination: own,
            status: "SUCCESS",
            bank_reference: expect.any(String),
            schedule_id,
            creation_timestamp: expect.any(String),
            executed_timestamp: expect.any(String)
          })
        }
        const first = yield* call("GET", "/transactions/payouts?limit=1&user_id=mr_p1", { token: user })
        const page1 = (first.body as Json).data
        expect(page1.payouts).toEqual([payouts[0]])
        const second = yield* call("GET", `/transactions/payouts?limit=1&cursor=${page1.next_cursor}`, {
          token: user
        })
        expect((second.body as Json).data).toEqual({ payouts: [payouts[1]] })
        const splits = yield* call("GET", "/transactions/payouts?kind=split", { token: user })
        expect((splits.body as Json).data).toEqual({ payouts: [] })
      })
  )

  it.effect("another user is 404 for both tokens; bad kind, limit or cursor is 400 naming it", () =>
    Effect.gen(function* () {
      const a = yield* withToken("mr_p2")
      const b = yield* withToken("mr_p3")
      const p = yield* partner("Socio mr_p2")
      const par = yield* partnerTokenFor(p, "mr_p2")
      for (const token of [b.token, par]) {
        const r = yield* call("GET", token === par ? "/users/mr_p3/balance" : "/users/mr_p2/balance", {
          token
        })
        expect(r.status).toBe(404)
        expect(r.body).toEqual(errorBody(404, "user.not.found"))
      }
      const foreign = yield* call("GET", "/transactions/payouts?user_id=mr_p2", { token: b.token })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual(errorBody(404, "user.not.found"))
      for (const [query, field] of [
        ["kind=refunds", "kind"],
        ["limit=500", "limit"],
        ["cursor=xyz", "cursor"]
      ] as const) {
        const r = yield* call("GET", `/transactions/payouts?${query}`, { token: a.token })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field }))
      }
      expect((yield* call("GET", "/users/mr_p2/balance")).status).toBe(401)
      expect((yield* call("GET", "/transactions/payouts")).status).toBe(401)
    })
  )
})
