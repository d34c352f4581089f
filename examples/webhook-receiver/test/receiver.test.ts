/**
 * The example receiver against a real delivery: an in-memory engine with the webhook worker sends
 * a "Payment updated" event to it; it verifies, answers 200 before it looks anything up, then
 * confirms with GET /payments/{id} on a small stand-in for the API that reads the engine.
 */
import { Accounts, Ids, Money, PaymentRequest, Payments, Transfers } from "@cobro/core"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { NodeTransport, Signature, Webhooks } from "@cobro/webhooks"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { type Confirmation, createReceiver } from "../src/receiver.js"

const TOKEN = "USR-test-token"
const API_DELAY_MS = 1500

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const listen = async (server: http.Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const engine = () => {
  const runtime = ManagedRuntime.make(
    Webhooks.layer().pipe(
      Layer.provideMerge(Layer.merge(NodeTransport.layer({ mode: "sandbox" }), SandboxEngine.layerMemory()))
    )
  )
  cleanups.push(() => runtime.dispose())
  return runtime
}
type Runtime = ReturnType<typeof engine>

/** GET /payments/{id} as the API answers it (envelope, bearer token), slowly, from the engine. */
const stubApi = async (runtime: Runtime) => {
  const requests: Array<{ path: string; authorization: string | undefined }> = []
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? "", authorization: req.headers.authorization })
    const match = /^\/payments\/([^/]+)$/.exec(req.url ?? "")
    if (req.method !== "GET" || match === null) {
      res.writeHead(404).end()
      return
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end()
      return
    }
    const id = Ids.PaymentId.make(decodeURIComponent(match[1]!))
    setTimeout(() => {
      runtime.runPromise(Effect.flatMap(Payments.Payments, (p) => p.get(Ids.UserId.make("u1"), id))).then(
        (payment) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(
            JSON.stringify({
              message: "ok",
              error: false,
              code: 200,
              data: { id: payment.id, payment_status: payment.payment_status }
            })
          )
        },
        () => res.writeHead(404).end()
      )
    }, API_DELAY_MS)
  })
  return { url: await listen(server), requests }
}

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = performance.now() + timeoutMs
  while (!condition() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10))
}

describe("example webhook receiver", () => {
  it("verifies the delivery, answers 200 at once, then confirms the payment with a GET; a repeat is handled once", async () => {
    const runtime = engine()
    const created = await runtime.runPromise(
      Effect.flatMap(Accounts.Accounts, (a) =>
        a.createUser(
          Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
            user_id: "u1",
            name: "Tienda Uno",
            email: "uno@example.com",
            cuit: "20123456786",
            account_status: "ACTIVE"
          })
        )
      )
    )
    const api = await stubApi(runtime)
    const confirmations: Array<Confirmation> = []
    const errors: Array<unknown> = []
    const receiverUrl = await listen(
      createReceiver({
        secret: created.client_secret,
        apiBaseUrl: api.url,
        apiToken: TOKEN,
        onConfirmed: (c) => {
          confirmations.push(c)
        },
        onError: (_, e) => errors.push(e)
      })
    )

    const payment = await runtime.runPromise(
      Effect.gen(function* () {
        const p = yield* (yield* Payments.Payments).create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "u1",
            external_id: "order-1",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            webhook_url: `${receiverUrl}/cobro`
          })
        )
        const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
          cvu: p.cvu,
          amount: Money.make(150000n, "ARS")
        })
        yield* (yield* Transfers.Transfers).ingest(t)
        return p
      })
    )
    const webhooks = await runtime.runPromise(Webhooks.Webhooks)
    expect(await runtime.runPromise(webhooks.deliverDue())).toMatchObject({ attempted: 1, delivered: 1 })
    const [delivery] = await runtime.runPromise(webhooks.list())
    const [attempt] = await runtime.runPromise(webhooks.attempts(delivery!.event_id))
    // The receiver answered before its GET (which takes API_DELAY_MS) had come back.
    expect(attempt).toMatchObject({ status_code: 200, outcome: "delivered" })
    expect(attempt!.duration_ms).toBeLessThan(API_DELAY_MS)
    expect(confirmations).toHaveLength(0)

    await until(() => confirmations.length > 0)
    expect(errors).toEqual([])
    expect(confirmations).toEqual([
      { eventId: delivery!.event_id, paymentId: payment.id, payment_status: "SUCCESS" }
    ])
    expect(api.requests).toEqual([{ path: `/payments/${payment.id}`, authorization: `Bearer ${TOKEN}` }])

    // A replay of the same event is answered 200 and not processed again.
    await runtime.runPromise(webhooks.replay(delivery!.event_id))
    expect(await runtime.runPromise(webhooks.deliverDue())).toMatchObject({ delivered: 1 })
    await new Promise((r) => setTimeout(r, API_DELAY_MS + 100))
    expect(confirmations).toHaveLength(1)
    expect(api.requests).toHaveLength(1)
  })

  it("refuses a request that is not signed with the merchant's secret", async () => {
    const confirmations: Array<Confirmation> = []
    const url = await listen(
      createReceiver({
        secret: "cs_the-real-secret",
        apiBaseUrl: "http://127.0.0.1:9",
        apiToken: TOKEN,
        onConfirmed: (c) => {
          confirmations.push(c)
        }
      })
    )
    const body = JSON.stringify({ message: "Payment updated", paymentId: "VAR-u1-x", externalId: "x" })
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
    const timestamp = Math.floor(Date.now() / 1000)
    const forged = Signature.headers({ secret: "cs_a-guess", eventId: "evt_1", timestamp, body })
    expect((await post(forged)).status).toBe(401)
    expect(await (await post({})).json()).toEqual({ error: "missing_signature" })
    const stale = Signature.headers({
      secret: "cs_the-real-secret",
      eventId: "evt_1",
      timestamp: timestamp - 600,
      body
    })
    expect(await (await post(stale)).json()).toEqual({ error: "timestamp_out_of_tolerance" })
    const genuine = Signature.headers({ secret: "cs_the-real-secret", eventId: "evt_1", timestamp, body })
    expect((await post(genuine)).status).toBe(200)
    expect((await fetch(url)).status).toBe(405)
  })
})
