/**
 * `Idempotency-Key` over HTTP (DESIGN, decisions "Idempotency keys"): a retry of the same request
 * replays the first response without running it again, another request under the same key is a
 * 422, a malformed key a 400, failures are not stored, concurrent duplicates run once, and keys
 * belong to their caller.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import {
  Accounts,
  Crypto,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  Ids,
  Principal,
  SecondFactor
} from "@cobro/core"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { CobroHttp } from "../src/index.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { call, type Json, merchant, serverLayer, tokenFor } from "./support.js"

/** A merchant (optionally with an alias prefix, for customers) and a user token for it. */
const withToken = (user_id: string, fields: { alias_prefix?: string } = {}) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id, fields)
    const token = yield* tokenFor(user_id, m.client_id, m.client_secret)
    return { ...m, token }
  })

/** A payment body without `external_id`: without a key, every POST creates another payment. */
const paymentBody = (user_id: string, fields: Record<string, unknown> = {}) => ({
  user_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  ...fields
})

const createPayment = (body: unknown, key?: string) =>
  call("POST", "/payments/", {
    body,
    ...(key === undefined ? {} : { headers: { "idempotency-key": key } })
  })

/** The ids of the merchant's payments, read through GET /payments/?user_id=. */
const paymentIds = (user_id: string, token: string) =>
  Effect.gen(function* () {
    const r = yield* call("GET", `/payments/?user_id=${user_id}`, { token })
    expect(r.status).toBe(200)
    const body: Json = r.body
    return (body.data.payments as Array<{ id: string }>).map((p) => p.id)
  })

const customerBody = (user_id: string, customer_id: string, alias: string) => ({
  user_id,
  alias,
  customer_id,
  name: "Juan Pérez",
  contact: { email: "juan@example.com" }
})

const customerIds = (user_id: string, token: string) =>
  Effect.gen(function* () {
    const r = yield* call("GET", `/customers/?user_id=${user_id}`, { token })
    expect(r.status).toBe(200)
    const body: Json = r.body
    return (body.data.customers as Array<{ customer_id: string }>).map((c) => c.customer_id)
  })

const replayed = (r: { readonly headers: Readonly<Record<string, string>> }) =>
  r.headers["idempotent-replayed"]

/** An error in the `{message, error, code, data}` envelope. */
const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

layer(serverLayer())("Idempotency-Key on POST /payments/", (it) => {
  it.effect("replays the first response for the same key and body, and creates one payment", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_p1")
      const first = yield* createPayment(paymentBody("idem_p1", { motive: "Pedido 1" }), "order-1-attempt")
      expect(first.status).toBe(200)
      expect(replayed(first)).toBeUndefined()
      const firstBody: Json = first.body
      expect(firstBody).toMatchObject({ message: "payment.created", error: false, code: 200 })

      // The retry sends the same fields in another order: it is the same request.
      const retry = yield* createPayment(
        {
          motive: "Pedido 1",
          payment_options: ["transfer"],
          price: { currency: "ARS", amount: 1500 },
          user_id: "idem_p1"
        },
        "order-1-attempt"
      )
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBe("true")
      expect(retry.headers["content-type"]).toMatch(/^application\/json/)
      expect(retry.body).toEqual(first.body)

      expect(yield* paymentIds("idem_p1", m.token)).toEqual([firstBody.data.id])

      // Another key is another request: a second payment.
      const other = yield* createPayment(paymentBody("idem_p1", { motive: "Pedido 1" }), "order-1-other")
      expect(other.status).toBe(200)
      expect(replayed(other)).toBeUndefined()
      const otherBody: Json = other.body
      expect(otherBody.data.id).not.toBe(firstBody.data.id)
      expect((yield* paymentIds("idem_p1", m.token)).sort()).toEqual(
        [firstBody.data.id, otherBody.data.id].sort()
      )
    })
  )

  it.effect("answers 422 idempotency.key.reused for the same key with another body", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_p2")
      const first = yield* createPayment(paymentBody("idem_p2"), "key-p2")
      expect(first.status).toBe(200)

      const changed = yield* createPayment(
        paymentBody("idem_p2", { price: { amount: 1600, currency: "ARS" } }),
        "key-p2"
      )
      expect(changed.status).toBe(422)
      expect(changed.body).toEqual(errorBody(422, "idempotency.key.reused"))
      expect(replayed(changed)).toBeUndefined()

      // The key stays bound to its first request, which still replays.
      const retry = yield* createPayment(paymentBody("idem_p2"), "key-p2")
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBe("true")
      expect(yield* paymentIds("idem_p2", m.token)).toHaveLength(1)
    })
  )

  it.effect("refuses a malformed key with 400 on field Idempotency-Key and creates nothing", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_p3")
      for (const key of ["k".repeat(256), "k".repeat(300), "clave-ñ", "tab\there"]) {
        const r = yield* createPayment(paymentBody("idem_p3"), key)
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "Idempotency-Key" }))
      }
      expect(yield* paymentIds("idem_p3", m.token)).toEqual([])

      // 255 printable ASCII characters, space included, is the longest valid key.
      const longest = `${"k".repeat(127)} ${"k".repeat(127)}`
      const ok = yield* createPayment(paymentBody("idem_p3"), longest)
      expect(ok.status).toBe(200)
      const again = yield* createPayment(paymentBody("idem_p3"), longest)
      expect(replayed(again)).toBe("true")
      expect(yield* paymentIds("idem_p3", m.token)).toHaveLength(1)
    })
  )

  it.effect("does not store a failed request: the retry after fixing the cause runs", () =>
    Effect.gen(function* () {
      // The merchant does not exist yet: 404.
      const missing = yield* createPayment(paymentBody("idem_p4"), "key-p4")
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual(errorBody(404, "user.not.found"))

      const m = yield* withToken("idem_p4")
      const retry = yield* createPayment(paymentBody("idem_p4"), "key-p4")
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBeUndefined()
      const body: Json = retry.body
      expect(yield* paymentIds("idem_p4", m.token)).toEqual([body.data.id])

      // A request refused before it ran (a body that does not decode) does not bind the key either.
      const invalid = yield* createPayment(
        paymentBody("idem_p4", { price: { amount: -1, currency: "ARS" } }),
        "key-p4b"
      )
      expect(invalid.status).toBe(400)
      const fixed = yield* createPayment(paymentBody("idem_p4"), "key-p4b")
      expect(fixed.status).toBe(200)
      expect(replayed(fixed)).toBeUndefined()
      expect(yield* paymentIds("idem_p4", m.token)).toHaveLength(2)
    })
  )

  it.effect("runs concurrent requests with one key once: the others are 409 or the replay", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_p5")
      const responses = yield* Effect.all(
        Array.from({ length: 6 }, () => createPayment(paymentBody("idem_p5"), "key-p5")),
        { concurrency: "unbounded" }
      )
      const ran = responses.filter((r) => r.status === 200 && replayed(r) === undefined)
      expect(ran).toHaveLength(1)
      for (const r of responses) {
        if (r === ran[0]) continue
        if (r.status === 409) {
          expect(r.body).toEqual(errorBody(409, "idempotency.request.in_progress"))
        } else {
          expect(r.status).toBe(200)
          expect(replayed(r)).toBe("true")
          expect(r.body).toEqual(ran[0]!.body)
        }
      }
      const body: Json = ran[0]!.body
      expect(yield* paymentIds("idem_p5", m.token)).toEqual([body.data.id])
    })
  )

  it.effect("scopes keys to the merchant: two merchants' equal keys do not meet", () =>
    Effect.gen(function* () {
      const a = yield* withToken("idem_p6a")
      const b = yield* withToken("idem_p6b")
      const ra = yield* createPayment(paymentBody("idem_p6a"), "shared-key")
      const rb = yield* createPayment(paymentBody("idem_p6b"), "shared-key")
      expect([ra.status, rb.status]).toEqual([200, 200])
      expect(replayed(ra)).toBeUndefined()
      expect(replayed(rb)).toBeUndefined()
      const bodyA: Json = ra.body
      const bodyB: Json = rb.body
      expect(yield* paymentIds("idem_p6a", a.token)).toEqual([bodyA.data.id])
      expect(yield* paymentIds("idem_p6b", b.token)).toEqual([bodyB.data.id])
    })
  )
})

layer(serverLayer())("Idempotency-Key on POST /customers/", (it) => {
  it.effect("replays the creation instead of answering customer.exists", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_c1", { alias_prefix: "idemuno" })
      const body = customerBody("idem_c1", "cust-1", ".juan")
      const first = yield* call("POST", "/customers/", {
        body,
        token: m.token,
        headers: { "idempotency-key": "cust-1-create" }
      })
      expect(first.status).toBe(200)
      expect(replayed(first)).toBeUndefined()
      expect(first.body).toMatchObject({ message: "customer.created", error: false, code: 200 })

      const retry = yield* call("POST", "/customers/", {
        body,
        token: m.token,
        headers: { "idempotency-key": "cust-1-create" }
      })
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBe("true")
      expect(retry.body).toEqual(first.body)

      // Without the key the same body is a second creation, which the engine refuses.
      const unkeyed = yield* call("POST", "/customers/", { body, token: m.token })
      expect(unkeyed.status).toBe(409)
      expect(unkeyed.body).toEqual(errorBody(409, "customer.exists"))

      const reused = yield* call("POST", "/customers/", {
        body: customerBody("idem_c1", "cust-2", ".pedro"),
        token: m.token,
        headers: { "idempotency-key": "cust-1-create" }
      })
      expect(reused.status).toBe(422)
      expect(reused.body).toEqual(errorBody(422, "idempotency.key.reused"))
      expect(yield* customerIds("idem_c1", m.token)).toEqual(["cust-1"])
    })
  )

  it.effect("does not store a 400: after the merchant sets its alias prefix the retry runs", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_c2")
      const body = customerBody("idem_c2", "cust-1", ".ana")
      const headers = { "idempotency-key": "cust-ana" }
      const refused = yield* call("POST", "/customers/", { body, token: m.token, headers })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ message: "user.alias.prefix.not.set", code: 400 })

      const accounts = yield* Accounts.Accounts
      yield* accounts.updateAccount(
        Principal.Principal.User({ user_id: Ids.UserId.make("idem_c2") }),
        Ids.UserId.make("idem_c2"),
        Schema.decodeUnknownSync(Accounts.AccountPatch)({ alias_prefix: "idemdos" })
      )
      const retry = yield* call("POST", "/customers/", { body, token: m.token, headers })
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBeUndefined()
      expect(yield* customerIds("idem_c2", m.token)).toEqual(["cust-1"])
    })
  )

  it.effect("scopes keys to the authenticated merchant", () =>
    Effect.gen(function* () {
      const a = yield* withToken("idem_c3a", { alias_prefix: "idemtra" })
      const b = yield* withToken("idem_c3b", { alias_prefix: "idemtrb" })
      const headers = { "idempotency-key": "same-key" }
      const ra = yield* call("POST", "/customers/", {
        body: customerBody("idem_c3a", "cust-a", ".uno"),
        token: a.token,
        headers
      })
      const rb = yield* call("POST", "/customers/", {
        body: customerBody("idem_c3b", "cust-b", ".dos"),
        token: b.token,
        headers
      })
      expect([ra.status, rb.status]).toEqual([200, 200])
      expect(replayed(rb)).toBeUndefined()
      expect(yield* customerIds("idem_c3a", a.token)).toEqual(["cust-a"])
      expect(yield* customerIds("idem_c3b", b.token)).toEqual(["cust-b"])
    })
  )
})

layer(serverLayer())("Idempotency-Key on POST /cvu/{cvu}/faucet", (it) => {
  it.effect("sends the simulated transfer once for a retried request", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_f1")
      const created = yield* createPayment(
        paymentBody("idem_f1", { price: { amount: 1000, currency: "ARS" } })
      )
      const payment: Json = created.body
      const cvu: string = payment.data.quotes[0].cvu
      const headers = { "idempotency-key": "faucet-1" }

      const first = yield* call("POST", `/cvu/${cvu}/faucet`, {
        body: { amount: 400 },
        token: m.token,
        headers
      })
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ message: "faucet.transfer.sent", data: { outcome: "credited" } })
      const retry = yield* call("POST", `/cvu/${cvu}/faucet`, {
        body: { amount: 400 },
        token: m.token,
        headers
      })
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBe("true")
      expect(retry.body).toEqual(first.body)

      const changed = yield* call("POST", `/cvu/${cvu}/faucet`, {
        body: { amount: 500 },
        token: m.token,
        headers
      })
      expect(changed.status).toBe(422)
      expect(changed.body).toEqual(errorBody(422, "idempotency.key.reused"))

      // One transfer of 400 reached the payment: it is UNDERPAID with one transaction.
      const read = yield* call("GET", `/payments/${payment.data.id}`, { token: m.token })
      const detail: Json = read.body
      expect(detail.data.payment_status).toBe("UNDERPAID")
      expect(detail.data.transactions).toHaveLength(1)
    })
  )
})

// ---------------------------------------------------------------------------------------------
// A request held in flight: the sandbox engine whose exchange rates (asked on every payment
// creation, after the key is claimed) wait at a gate the test opens.

interface Hold {
  readonly entered: Deferred.Deferred<void>
  readonly release: Deferred.Deferred<void>
}

let hold: Hold | undefined

const sandboxRates = ExchangeRates.fixed(ExchangeRates.sandboxRates)

const gatedRates = Layer.succeed(ExchangeRates.ExchangeRates, {
  toArs: (price) =>
    Effect.suspend(() => {
      const h = hold
      if (h === undefined) return sandboxRates.toArs(price)
      hold = undefined
      return Deferred.succeed(h.entered, undefined).pipe(
        Effect.zipRight(Deferred.await(h.release)),
        Effect.zipRight(sandboxRates.toArs(price))
      )
    })
})

const gatedEngine = SandboxEngine.sandboxServices.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Engine.layerMemoryStorage,
      FeePolicy.layer(),
      gatedRates,
      Crypto.layerWebCrypto(Crypto.sandboxKey),
      EngineConfig.layer()
    )
  ),
  Layer.provideMerge(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
)

const gatedServer = HttpApiBuilder.serve().pipe(
  Layer.provide(CobroHttp.layer()),
  Layer.provideMerge(gatedEngine),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

layer(gatedServer)("Idempotency-Key while the first request is in flight", (it) => {
  it.effect("answers 409 to the same request and 422 to another, then replays once it is done", () =>
    Effect.gen(function* () {
      const m = yield* withToken("idem_g1")
      const h: Hold = { entered: yield* Deferred.make<void>(), release: yield* Deferred.make<void>() }
      hold = h
      const first = yield* Effect.fork(createPayment(paymentBody("idem_g1"), "key-g1"))
      yield* Deferred.await(h.entered)

      const duplicate = yield* createPayment(paymentBody("idem_g1"), "key-g1")
      expect(duplicate.status).toBe(409)
      expect(duplicate.body).toEqual(errorBody(409, "idempotency.request.in_progress"))
      const other = yield* createPayment(paymentBody("idem_g1", { motive: "otro" }), "key-g1")
      expect(other.status).toBe(422)
      expect(other.body).toEqual(errorBody(422, "idempotency.key.reused"))
      expect(yield* paymentIds("idem_g1", m.token)).toEqual([])

      yield* Deferred.succeed(h.release, undefined)
      const done = yield* Fiber.join(first)
      expect(done.status).toBe(200)
      expect(replayed(done)).toBeUndefined()

      const retry = yield* createPayment(paymentBody("idem_g1"), "key-g1")
      expect(retry.status).toBe(200)
      expect(replayed(retry)).toBe("true")
      expect(retry.body).toEqual(done.body)
      const body: Json = done.body
      expect(yield* paymentIds("idem_g1", m.token)).toEqual([body.data.id])
    })
  )
})
