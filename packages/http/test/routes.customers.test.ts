/**
 * The fixed-customer routes over HTTP: POST /customers/, PATCH /customers/{id}/alias,
 * GET /customers/?user_id= and GET /customers/{id}/transactions/{tid}. Each `layer` block has
 * its own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { BankAccount, Customer, Outbox } from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Effect } from "effect"
import { call, client, type Json, merchant, serverLayer, tokenFor } from "./support.js"

/** An ACTIVE merchant (with `alias_prefix` when given) and a user token for it. */
const withToken = (user_id: string, alias_prefix?: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id, alias_prefix === undefined ? {} : { alias_prefix })
    const token = yield* tokenFor(user_id, m.client_id, m.client_secret)
    return { ...m, token }
  })

const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

/** POST /customers/ and its `data`. */
const createCustomer = (token: string, body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/customers/", { token, body })
    expect(r.status).toBe(200)
    return (r.body as Json).data as { customer_id: string; bank_info: { cvu: string; alias: string } }
  })

layer(serverLayer())("POST /customers/", (it) => {
  it.effect("without an alias prefix on the account is 400 user.alias.prefix.not.set", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_c1")
      const r = yield* call("POST", "/customers/", {
        token: m.token,
        body: { user_id: "cus_c1", alias: "juan", customer_id: "20111222", name: "Juan" }
      })
      expect(r.status).toBe(400)
      expect(r.body).toEqual(errorBody(400, "user.alias.prefix.not.set", { field: "alias" }))
    })
  )

  it.effect("creates a customer with a permanent CVU and the prefixed alias, balance 0", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_c2", "shop_a")
      const r = yield* call("POST", "/customers/", {
        token: m.token,
        body: {
          user_id: "cus_c2",
          alias: "juan",
          customer_id: "20111222",
          name: "Juan Perez",
          contact: { email: "juan@example.com" },
          webhook_url: "https://shop.example.com/hooks/customers"
        }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "customer.created", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual([
        "balance",
        "bank_info",
        "creation_timestamp",
        "customer_id"
      ])
      expect(body.data).toMatchObject({
        customer_id: "20111222",
        bank_info: { alias: "shop.ajuan" },
        balance: 0
      })
      expect(Object.keys(body.data.bank_info).sort()).toEqual(["alias", "cvu"])
      expect(BankAccount.isValidCvu(body.data.bank_info.cvu)).toBe(true)
      expect(typeof body.data.creation_timestamp).toBe("string")
    })
  )

  it.effect("a taken customer_id is 409 customer.exists; a taken alias is 409 customer.alias.taken", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_c3", "shop_b")
      yield* createCustomer(m.token, { user_id: "cus_c3", alias: "ana", customer_id: "c-1", name: "Ana" })
      const sameId = yield* call("POST", "/customers/", {
        token: m.token,
        body: { user_id: "cus_c3", alias: "otra", customer_id: "c-1", name: "Ana" }
      })
      expect(sameId.status).toBe(409)
      expect(sameId.body).toEqual(errorBody(409, "customer.exists"))
      const sameAlias = yield* call("POST", "/customers/", {
        token: m.token,
        body: { user_id: "cus_c3", alias: "ana", customer_id: "c-2", name: "Ana Dos" }
      })
      expect(sameAlias.status).toBe(409)
      expect(sameAlias.body).toEqual(errorBody(409, "customer.alias.taken"))
    })
  )

  it.effect("bad fields are 400 naming them; another user's user_id is 404; no token is 401", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_c4", "shop_c")
      yield* merchant("cus_c5", { alias_prefix: "shop_d" })
      const base = { user_id: "cus_c4", alias: "pepe", customer_id: "c-9", name: "Pepe" }
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...base, contact: {} }, "contact.email"],
        [{ ...base, contact: { email: "not-an-email" } }, "contact.email"],
        [{ ...base, webhook_url: "ftp://shop.example.com" }, "webhook_url"],
        [{ ...base, alias: "Pepe!" }, "alias"],
        [{ ...base, customer_id: "a b" }, "customer_id"]
      ]
      for (const [body, field] of cases) {
        const r = yield* call("POST", "/customers/", { token: m.token, body })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field }))
      }
      // The prefix plus the suffix must stay within 20 characters.
      const long = yield* call("POST", "/customers/", {
        token: m.token,
        body: { ...base, alias: "abcdefghijklmnop" }
      })
      expect(long.status).toBe(400)
      expect(long.body).toEqual(errorBody(400, "customer.alias.invalid", { field: "alias" }))
      const other = yield* call("POST", "/customers/", {
        token: m.token,
        body: { ...base, user_id: "cus_c5" }
      })
      expect(other.status).toBe(404)
      expect(other.body).toEqual(errorBody(404, "user.not.found"))
      const anonymous = yield* call("POST", "/customers/", { body: base })
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual(errorBody(401, "auth.token.missing"))
    })
  )
})

layer(serverLayer())("PATCH /customers/{customer_id}/alias", (it) => {
  it.effect("create_new_cvu false keeps the CVU and changes the alias", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_a1", "tienda_a")
      const created = yield* createCustomer(m.token, {
        user_id: "cus_a1",
        alias: "juan",
        customer_id: "c-1",
        name: "Juan"
      })
      const r = yield* call("PATCH", "/customers/c-1/alias", {
        token: m.token,
        body: { alias: "juanito", create_new_cvu: false }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "customer.alias.updated", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual([
        "alias",
        "bank_info",
        "customer_id",
        "last_modified_timestamp"
      ])
      expect(body.data).toMatchObject({
        customer_id: "c-1",
        alias: "juanito",
        bank_info: { cvu: created.bank_info.cvu, alias: "tienda.ajuanito" }
      })
    })
  )

  it.effect("create_new_cvu true assigns a new CVU with the new alias and releases the old one", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_a2", "tienda_b")
      const created = yield* createCustomer(m.token, {
        user_id: "cus_a2",
        alias: "maria",
        customer_id: "c-2",
        name: "Maria"
      })
      const r = yield* call("PATCH", "/customers/c-2/alias", {
        token: m.token,
        body: { alias: "mariana", create_new_cvu: true }
      })
      expect(r.status).toBe(200)
      const data = (r.body as Json).data
      expect(data.alias).toBe("mariana")
      expect(data.bank_info.alias).toBe("tienda.bmariana")
      expect(data.bank_info.cvu).not.toBe(created.bank_info.cvu)
      expect(BankAccount.isValidCvu(data.bank_info.cvu)).toBe(true)
      const bank = yield* SandboxBank.SandboxBank
      expect(yield* bank.isOpen(BankAccount.Cvu.make(created.bank_info.cvu))).toBe(false)
      // The same alias again with a new CVU is refused: nothing would change.
      const same = yield* call("PATCH", "/customers/c-2/alias", {
        token: m.token,
        body: { alias: "mariana", create_new_cvu: true }
      })
      expect(same.status).toBe(400)
      expect(same.body).toEqual(errorBody(400, "customer.alias.unchanged", { field: "alias" }))
    })
  )

  it.effect("create_new_cvu false falls back to a new CVU when the bank refuses the alias change", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_a3", "tienda_c")
      const created = yield* createCustomer(m.token, {
        user_id: "cus_a3",
        alias: "pedro",
        customer_id: "c-3",
        name: "Pedro"
      })
      yield* (yield* SandboxBank.SandboxBank).refuseAliasChange(BankAccount.Cvu.make(created.bank_info.cvu))
      const r = yield* call("PATCH", "/customers/c-3/alias", {
        token: m.token,
        body: { alias: "pedrito", create_new_cvu: false }
      })
      expect(r.status).toBe(200)
      const data = (r.body as Json).data
      expect(data.bank_info.alias).toBe("tienda.cpedrito")
      expect(data.bank_info.cvu).not.toBe(created.bank_info.cvu)
    })
  )

  it.effect("another merchant's customer is 404; a missing create_new_cvu is 400", () =>
    Effect.gen(function* () {
      const owner = yield* withToken("cus_a4", "tienda_d")
      const other = yield* withToken("cus_a5", "tienda_e")
      yield* createCustomer(owner.token, {
        user_id: "cus_a4",
        alias: "luis",
        customer_id: "c-4",
        name: "Luis"
      })
      const theirs = yield* call("PATCH", "/customers/c-4/alias", {
        token: other.token,
        body: { alias: "luisito", create_new_cvu: false }
      })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "customer.not.found"))
      const missing = yield* call("PATCH", "/customers/c-4/alias", {
        token: owner.token,
        body: { alias: "luisito" }
      })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "create_new_cvu" }))
    })
  )
})

layer(serverLayer())("GET /customers/ and customer transactions", (it) => {
  it.effect("lists only the caller's customers with SPEC's fields; another user_id is 404", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_l1", "lista_a")
      const other = yield* withToken("cus_l2", "lista_b")
      const first = yield* createCustomer(m.token, {
        user_id: "cus_l1",
        alias: "uno",
        customer_id: "c-1",
        name: "Uno"
      })
      const second = yield* createCustomer(m.token, {
        user_id: "cus_l1",
        alias: "dos",
        customer_id: "c-2",
        name: "Dos"
      })
      yield* createCustomer(other.token, {
        user_id: "cus_l2",
        alias: "tres",
        customer_id: "c-3",
        name: "Tres"
      })
      const r = yield* call("GET", "/customers/?user_id=cus_l1", { token: m.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "customers.found", error: false, code: 200 })
      expect(Object.keys(body.data)).toEqual(["customers"])
      expect(body.data.customers).toEqual([
        {
          customer_id: "c-1",
          name: "Uno",
          bank_info: first.bank_info,
          balance: 0,
          creation_timestamp: expect.any(String)
        },
        {
          customer_id: "c-2",
          name: "Dos",
          bank_info: second.bank_info,
          balance: 0,
          creation_timestamp: expect.any(String)
        }
      ])
      const theirs = yield* call("GET", "/customers/?user_id=cus_l2", { token: m.token })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "user.not.found"))
    })
  )

  it.effect("a transfer to the customer's CVU is readable as a transaction and adds to the balance", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_t1", "cobra_a")
      const created = yield* createCustomer(m.token, {
        user_id: "cus_t1",
        alias: "socio",
        customer_id: "20333444",
        name: "Socio"
      })
      const sent = yield* call("POST", `/cvu/${created.bank_info.cvu}/faucet`, {
        token: m.token,
        body: { amount: 1000, cuit: "20123456786" }
      })
      expect(sent.status).toBe(200)
      const faucet = (sent.body as Json).data
      expect(faucet).toMatchObject({ outcome: "credited", target: "customer" })
      // The "Customer payment received" webhook carries the transaction id to read.
      const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
      const received = events.find((e) => e.type === "customer.payment_received")!
      expect(received.payload).toEqual({
        message: "Customer payment received",
        transactionId: expect.any(String),
        customerId: "20333444"
      })
      const transactionId = received.payload["transactionId"] as string
      const r = yield* call("GET", `/customers/20333444/transactions/${transactionId}`, { token: m.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "customer.transaction.found", error: false, code: 200 })
      expect(body.data).toEqual({
        transaction_id: transactionId,
        customer_id: "20333444",
        user_id: "cus_t1",
        address: created.bank_info.cvu,
        amount: "1000.00",
        commission: 0.01,
        commission_amount: "10.00",
        commission_taxes: [{ tax_amount: 2.1, tax_rate: 0.21, tax_type: "IVA" }],
        commission_tax_amount: "2.10",
        taxes: [],
        tax_amount: "0.00",
        credited_amount: "987.90",
        currency: "ARS",
        network: "CVU",
        sender_address: expect.any(String),
        sender_cuit: "20123456786",
        sender_name: expect.any(String),
        bank_transaction_id: faucet.transaction_id,
        transaction_status: "PROCESSED",
        creation_timestamp: expect.any(String)
      })
      const list = yield* call("GET", "/customers/?user_id=cus_t1", { token: m.token })
      expect((list.body as Json).data.customers[0].balance).toBe(987.9)
      // The typed client reads the same record.
      const api = yield* client(m.token)
      const typed = yield* api.customers.getTransaction({
        path: {
          customer_id: Customer.CustomerId.make("20333444"),
          transaction_id: Customer.CustomerTransactionId.make(transactionId)
        }
      })
      expect(typed.data.credited_amount.minor).toBe(98790n)
    })
  )

  it.effect("an unknown transaction and another merchant's customer are 404", () =>
    Effect.gen(function* () {
      const m = yield* withToken("cus_t2", "cobra_b")
      const other = yield* withToken("cus_t3", "cobra_c")
      const created = yield* createCustomer(m.token, {
        user_id: "cus_t2",
        alias: "cliente",
        customer_id: "c-7",
        name: "C"
      })
      yield* call("POST", `/cvu/${created.bank_info.cvu}/faucet`, { token: m.token, body: { amount: 50 } })
      const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
      const transactionId = events.find(
        (e) => e.type === "customer.payment_received" && e.payload["customerId"] === "c-7"
      )!.payload["transactionId"] as string
      const unknown = yield* call("GET", "/customers/c-7/transactions/ctx_nope", { token: m.token })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(errorBody(404, "transaction.not.found"))
      const theirs = yield* call("GET", `/customers/c-7/transactions/${transactionId}`, {
        token: other.token
      })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "customer.not.found"))
    })
  )
})
