/**
 * The sandbox faucet over HTTP: POST /cvu/{cvu}/faucet simulates an incoming transfer to one of
 * the caller's CVUs, and the payment read afterwards shows it as SPEC's transactions and
 * transaction_fields. Each `layer` block has its own server and engine.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import {
  BankAccount,
  Crypto,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  Jobs,
  SecondFactor
} from "@cobro/core"
import { Duration, Effect, Layer, TestClock } from "effect"
import { CobroHttp } from "../src/index.js"
import { SandboxBank } from "@cobro/bank-sandbox"
import { call, type Json, merchant, serverLayer, tokenFor } from "./support.js"

const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

const withToken = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    return { ...m, token: yield* tokenFor(user_id, m.client_id, m.client_secret) }
  })

/** POST /payments/ for 1500 ARS; `data` of the answer. */
const createPayment = (user_id: string, external_id: string) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/payments/", {
      body: { user_id, price: { amount: 1500, currency: "ARS" }, payment_options: ["transfer"], external_id }
    })
    expect(r.status).toBe(200)
    return (r.body as Json).data as { id: string; quotes: Array<{ cvu: string; alias: string }> }
  })

const faucet = (
  token: string,
  cvu: string,
  body: Record<string, unknown>,
  headers?: Record<string, string>
) => call("POST", `/cvu/${cvu}/faucet`, { token, body, ...(headers === undefined ? {} : { headers }) })

layer(serverLayer())("POST /cvu/{cvu}/faucet", (it) => {
  it.effect("credits a payment: GET shows SUCCESS with SPEC's transactions and transaction_fields", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_f1")
      const payment = yield* createPayment("sbx_f1", "order-1")
      const cvu = payment.quotes[0]!.cvu
      const r = yield* faucet(m.token, cvu, { amount: 1500, cuit: "20123456786" })
      expect(r.status).toBe(200)
      const sent: Json = r.body
      expect(sent).toEqual({
        message: "faucet.transfer.sent",
        error: false,
        code: 200,
        data: {
          transaction_id: expect.any(String),
          cvu,
          amount: 1500,
          currency: "ARS",
          sender_cuit: "20123456786",
          sender_account: expect.stringMatching(/^\d{22}$/),
          outcome: "credited",
          target: "payment",
          target_id: payment.id
        }
      })
      const read = yield* call("GET", `/payments/${payment.id}`, { token: m.token })
      expect(read.status).toBe(200)
      const data = (read.body as Json).data
      expect(data.payment_status).toBe("SUCCESS")
      expect(data.transactions).toEqual([
        {
          address: cvu,
          amount: "1500.00",
          commission: 0.01,
          commission_amount: "15.00",
          commission_taxes: [{ tax_amount: 3.15, tax_rate: 0.21, tax_type: "IVA" }],
          commission_tax_amount: "3.15",
          creation_timestamp: expect.any(String),
          credited_amount: "1481.85",
          currency: "ARS",
          network: "CVU",
          sender_address: expect.any(String),
          taxes: [],
          tax_amount: "0.00",
          transaction_status: "PROCESSED",
          transaction_data: {
            PROCESSED: {
              amount: 1500,
              currency: "ARS",
              recipient: cvu,
              recipientCuit: m.user.cuit,
              recipientTitular: "Tienda sbx_f1",
              sender: data.transactions[0].sender_address,
              senderCuit: "20123456786",
              senderTitular: "Pagador Sandbox",
              trxId: sent.data.transaction_id
            }
          }
        }
      ])
      expect(BankAccount.isValidCbu(data.transactions[0].sender_address)).toBe(true)
      expect(data.transaction_fields).toEqual({
        amount: "1500.00",
        amountReadable: "$ 1.500,00",
        commission_amount: "15.00",
        credited_amount: "1481.85",
        currency: "ARS",
        network: "CVU",
        total_paid: { amount: "1500.00", currency: "ARS" }
      })
      expect(data.user_info.transactions).toEqual(data.transactions)
    })
  )

  it.effect("more and less than the quote give OVERPAID and UNDERPAID; transfers add up", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_f2")
      const under = yield* createPayment("sbx_f2", "under")
      yield* faucet(m.token, under.quotes[0]!.cvu, { amount: 1000 })
      const read = (id: string) =>
        Effect.map(call("GET", `/payments/${id}`, { token: m.token }), (r) => (r.body as Json).data)
      expect((yield* read(under.id)).payment_status).toBe("UNDERPAID")
      yield* faucet(m.token, under.quotes[0]!.cvu, { amount: 500 })
      const settled = yield* read(under.id)
      expect(settled.payment_status).toBe("SUCCESS")
      expect(settled.transactions).toHaveLength(2)
      expect(settled.transaction_fields.total_paid).toEqual({ amount: "1500.00", currency: "ARS" })
      const over = yield* createPayment("sbx_f2", "over")
      yield* faucet(m.token, over.quotes[0]!.cvu, { amount: 1500.01 })
      expect((yield* read(over.id)).payment_status).toBe("OVERPAID")
    })
  )

  it.effect("a CVU you do not own, or nobody's, is 404 cvu.not.found and nothing is credited", () =>
    Effect.gen(function* () {
      yield* merchant("sbx_f3")
      const stranger = yield* withToken("sbx_f4")
      const payment = yield* createPayment("sbx_f3", "theirs")
      const theirs = yield* faucet(stranger.token, payment.quotes[0]!.cvu, { amount: 1500 })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "cvu.not.found"))
      const nobody = BankAccount.makeCvu("0000003", "1234567890123")
      const unknown = yield* faucet(stranger.token, nobody, { amount: 1500 })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(errorBody(404, "cvu.not.found"))
      const state = yield* call("GET", `/payments/${payment.id}/public`)
      expect((state.body as Json).data.payment_status).toBe("PENDING")
    })
  )

  it.effect("a bad amount or sender CUIT is 400 on the field; a malformed CVU is 400 on cvu", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_f5")
      const payment = yield* createPayment("sbx_f5", "bad")
      const cvu = payment.quotes[0]!.cvu
      for (const amount of [0, -10, 1.001]) {
        const r = yield* faucet(m.token, cvu, { amount })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(errorBody(400, "request.invalid", { field: "amount" }))
      }
      const cuit = yield* faucet(m.token, cvu, { amount: 10, cuit: "20123456780" })
      expect(cuit.status).toBe(400)
      expect(cuit.body).toEqual(errorBody(400, "request.invalid", { field: "cuit" }))
      const cbu = yield* faucet(m.token, cvu, { amount: 10, cbu: "2850590940090418135202" })
      expect(cbu.status).toBe(400)
      expect(cbu.body).toEqual(errorBody(400, "request.invalid", { field: "cbu" }))
      const malformed = yield* faucet(m.token, "12345", { amount: 10 })
      expect(malformed.status).toBe(400)
      expect(malformed.body).toEqual(errorBody(400, "request.invalid", { field: "cvu" }))
      const anonymous = yield* call("POST", `/cvu/${cvu}/faucet`, { body: { amount: 10 } })
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual(errorBody(401, "auth.token.missing"))
    })
  )

  it.effect("the sender's account is the body's cbu, on the transfer and the payment's transaction", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_f9")
      const payment = yield* createPayment("sbx_f9", "order-cbu")
      const cvu = payment.quotes[0]!.cvu
      const from = BankAccount.makeCbu("0170099", "0000000000042")
      const r = yield* faucet(m.token, cvu, { amount: 1500, cbu: from })
      expect(r.status).toBe(200)
      expect((r.body as Json).data.sender_account).toBe(from)
      const read = yield* call("GET", `/payments/${payment.id}`, { token: m.token })
      expect((read.body as Json).data.transactions[0].sender_address).toBe(from)
    })
  )

  it.effect("an Idempotency-Key replays the first answer and credits once", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_f6")
      const payment = yield* createPayment("sbx_f6", "idem")
      const cvu = payment.quotes[0]!.cvu
      const first = yield* faucet(m.token, cvu, { amount: 700 }, { "idempotency-key": "faucet-1" })
      const again = yield* faucet(m.token, cvu, { amount: 700 }, { "idempotency-key": "faucet-1" })
      expect(first.status).toBe(200)
      expect(again.status).toBe(200)
      expect(again.headers["idempotent-replayed"]).toBe("true")
      expect(again.body).toEqual(first.body)
      const read = yield* call("GET", `/payments/${payment.id}`, { token: m.token })
      expect((read.body as Json).data.transactions).toHaveLength(1)
      const reused = yield* faucet(m.token, cvu, { amount: 800 }, { "idempotency-key": "faucet-1" })
      expect(reused.status).toBe(422)
      expect(reused.body).toEqual(errorBody(422, "idempotency.key.reused"))
    })
  )
})

layer(serverLayer())("faucet after expiry", (it) => {
  it.effect("a transfer to an expired payment's CVU bounces back to the sender", () =>
    Effect.gen(function* () {
      const m = yield* merchant("sbx_x1")
      const payment = yield* createPayment("sbx_x1", "late")
      yield* TestClock.adjust(Duration.days(5))
      yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
      const token = yield* tokenFor("sbx_x1", m.client_id, m.client_secret)
      const r = yield* faucet(token, payment.quotes[0]!.cvu, { amount: 1500 })
      expect(r.status).toBe(200)
      expect((r.body as Json).data).toMatchObject({ outcome: "bounced", reason: expect.any(String) })
      expect((r.body as Json).data).not.toHaveProperty("target")
      expect((r.body as Json).data).not.toHaveProperty("target_id")
      const returned = yield* (yield* SandboxBank.SandboxBank).returnedTransfers
      expect(returned.map((t) => t.bank_transaction_id)).toEqual([(r.body as Json).data.transaction_id])
      const read = yield* call("GET", `/payments/${payment.id}`, { token })
      expect((read.body as Json).data).toMatchObject({ payment_status: "EXPIRED", transactions: [] })
    })
  )
})

/** The same server over an engine without the sandbox's `Faucet` (a production engine). */
const withoutFaucet = HttpApiBuilder.serve().pipe(
  Layer.provide(CobroHttp.layer()),
  Layer.provideMerge(
    Engine.services.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          Engine.layerMemoryStorage,
          FeePolicy.layer(),
          ExchangeRates.layerFixed(),
          Crypto.layerWebCrypto(Crypto.sandboxKey),
          EngineConfig.layer(),
          SandboxBank.layer,
          SecondFactor.layerSandbox
        )
      )
    )
  ),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

layer(withoutFaucet)("an engine without the faucet", (it) => {
  it.effect("answers 404 route.not.found", () =>
    Effect.gen(function* () {
      const m = yield* withToken("sbx_n1")
      const payment = yield* createPayment("sbx_n1", "prod")
      const r = yield* faucet(m.token, payment.quotes[0]!.cvu, { amount: 1500 })
      expect(r.status).toBe(404)
      expect(r.body).toEqual(errorBody(404, "route.not.found"))
    })
  )
})
