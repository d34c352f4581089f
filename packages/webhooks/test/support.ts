/**
 * Real HTTP receivers on 127.0.0.1 (random ports) and an engine with the webhook worker, for the
 * tests. A receiver records every request with its raw body and answers as told.
 */
import {
  Accounts,
  type BankAccount,
  Engine,
  Ids,
  Money,
  Outbox,
  type Payment,
  PaymentRequest,
  Payments,
  Transfers
} from "@cobro/core"
import { type ConfigError, Effect, Layer, Schema } from "effect"
import * as http from "node:http"
import { NodeTransport, Webhooks, type WebhooksConfig, type WebhookTransport } from "../src/index.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  /** Real time of arrival (performance.now()). */
  readonly arrivedAt: number
}

/** How to answer: a status (and headers), or hold the request open until `release()`. */
export type Reply = { readonly status: number; readonly headers?: Record<string, string> } | "hold"

export interface TestReceiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** Replaces the answer rule. */
  readonly answer: (rule: (request: Received, index: number) => Reply) => void
  /** Answers every held request with this status. */
  readonly release: (status: number) => void
  /** Resolves once `count` requests have arrived. */
  readonly waitFor: (count: number) => Effect.Effect<void>
}

/** A receiver on 127.0.0.1, closed with the scope. */
export const testReceiver = (rule: (request: Received, index: number) => Reply = () => ({ status: 200 })) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly receiver: TestReceiver }>((resume) => {
      let answer = rule
      const received: Array<Received> = []
      const held: Array<http.ServerResponse> = []
      const waiters: Array<{ readonly count: number; readonly done: () => void }> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const request: Received = {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            arrivedAt: performance.now()
          }
          received.push(request)
          for (const w of waiters.filter((w) => received.length >= w.count)) {
            waiters.splice(waiters.indexOf(w), 1)
            w.done()
          }
          const reply = answer(request, received.length - 1)
          if (reply === "hold") {
            held.push(res)
            return
          }
          res.writeHead(reply.status, reply.headers ?? {})
          res.end("ok")
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as { port: number }).port
        resume(
          Effect.succeed({
            server,
            receiver: {
              url: `http://127.0.0.1:${port}/hooks`,
              port,
              received,
              answer: (next) => {
                answer = next
              },
              release: (status) => {
                for (const res of held.splice(0)) {
                  if (!res.destroyed) {
                    res.writeHead(status)
                    res.end()
                  }
                }
              },
              waitFor: (count) =>
                Effect.async<void>((done) => {
                  if (received.length >= count) return done(Effect.void)
                  waiters.push({ count, done: () => done(Effect.void) })
                })
            }
          })
        )
      })
    }),
    ({ server }) =>
      Effect.async<void>((done) => {
        server.closeAllConnections()
        server.close(() => done(Effect.void))
      })
  ).pipe(Effect.map(({ receiver }) => receiver))

/** Every engine service and port (as `SandboxEngine.layerSandbox` provides them). */
export type EngineContext = Layer.Layer.Success<ReturnType<typeof SandboxEngine.layerSandbox>>

/** The sandbox engine over `storage`, with the webhook service over a transport (sandbox mode by default). */
export const webhooksOver = <E, R>(
  storage: Layer.Layer<Engine.Storage, E, R>,
  settings: Partial<WebhooksConfig.WebhooksSettings> = {},
  transport: NodeTransport.Options = { mode: "sandbox" }
): Layer.Layer<
  Webhooks.Webhooks | WebhooksConfig.WebhooksConfig | WebhookTransport.WebhookTransport | EngineContext,
  E | ConfigError.ConfigError,
  R
> =>
  Webhooks.layer(settings).pipe(
    Layer.provideMerge(Layer.merge(NodeTransport.layer(transport), SandboxEngine.layerSandbox(storage)))
  )

export const u1 = Ids.UserId.make("u1")

/** An ACTIVE merchant with an API credential; returns its client secret. */
export const merchant = (
  fields: Record<string, unknown> = {}
): Effect.Effect<Accounts.CreatedUser, unknown, Accounts.Accounts> =>
  Effect.flatMap(Accounts.Accounts, (accounts) =>
    accounts.createUser(
      Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
        user_id: "u1",
        name: "Tienda Uno",
        email: "uno@example.com",
        cuit: "20123456786",
        account_status: "ACTIVE",
        ...fields
      })
    )
  )

/** A payment of u1 with `webhook_url`, paid in full: writes one "Payment updated" event. */
export const paidPayment = (
  externalId: string,
  webhookUrl: string
): Effect.Effect<
  Payment.Payment,
  unknown,
  Payments.Payments | SandboxBank.SandboxBank | Transfers.Transfers
> =>
  Effect.gen(function* () {
    const payment = yield* (yield* Payments.Payments).create(
      Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
        user_id: "u1",
        external_id: externalId,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        webhook_url: webhookUrl
      })
    )
    yield* transfer(payment.cvu, 150000n)
    return payment
  })

/** Another transfer to a payment's CVU: writes another "Payment updated" event. */
export const transfer = (
  cvu: BankAccount.Cvu,
  minor: bigint
): Effect.Effect<void, unknown, SandboxBank.SandboxBank | Transfers.Transfers> =>
  Effect.gen(function* () {
    const incoming = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu,
      amount: Money.make(minor, "ARS")
    })
    yield* (yield* Transfers.Transfers).ingest(incoming)
  })

/** An event appended straight to the outbox (as the engine does inside its units of work). */
export const appendEvent = (
  webhookUrl: string,
  payload: Record<string, unknown>
): Effect.Effect<Outbox.OutboxEvent, never, Outbox.Outbox> =>
  Effect.gen(function* () {
    const event = yield* Outbox.makeEvent({
      type: "payment.updated",
      user_id: u1,
      webhook_url: webhookUrl,
      payload
    })
    yield* (yield* Outbox.Outbox).append(event)
    return event
  })
