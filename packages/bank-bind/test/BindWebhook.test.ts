/**
 * The incoming-transfer webhook as the simulator sends it, over real HTTP to a receiver that
 * authenticates and parses it: the shared secret, the mapping to `IncomingTransfer`, a duplicate
 * carrying the same transfer id, and malformed bodies.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount } from "@cobro/core"
import { Effect, Either, Option, Redacted } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { BindWebhook } from "../src/index.js"
import { BindSimulator } from "../src/testing.js"

const settings = {
  webhookSecret: Option.some(Redacted.make("hook-secret")),
  webhookSecretHeader: "x-bind-webhook-secret"
}
const sender = {
  cuit: "20123456786",
  name: "Ana Gómez",
  cbu: BankAccount.makeCbu("0170099", "2200000123456")
}
const cvu = BankAccount.makeCvu("0000322", "0000000000001")

/** A receiver that answers 200, 401 or 400 as `BindWebhook.verify` says, and keeps what it got. */
const receiver = Effect.acquireRelease(
  Effect.async<{
    url: string
    seen: Array<Either.Either<unknown, BindWebhook.WebhookRejected>>
    server: http.Server
  }>((resume) => {
    const seen: Array<Either.Either<unknown, BindWebhook.WebhookRejected>> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const result = BindWebhook.verify(settings, req.headers, Buffer.concat(chunks).toString("utf8"))
        seen.push(result)
        res.writeHead(Either.isRight(result) ? 200 : result.left.reason === "unauthenticated" ? 401 : 400)
        res.end()
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bind`,
          seen,
          server
        })
      )
    )
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

describe("BindWebhook", () => {
  it.live("authenticates the simulator's notification and maps it to an IncomingTransfer", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        const { url, seen } = yield* receiver
        const auth = { header: "x-bind-webhook-secret", secret: "hook-secret" }
        const notice = { cvu, amount: 1500.5, sender, id: "coelsa-1" }
        expect(yield* Effect.promise(() => sim.sendIncomingTransfer(url, notice, auth))).toBe(200)
        expect(yield* Effect.promise(() => sim.sendIncomingTransfer(url, notice, auth))).toBe(200)
        const [first, second] = seen.map((r) => Either.getOrThrow(r)) as Array<{
          bank_transaction_id: string
        }>
        expect(first).toMatchObject({
          bank_transaction_id: "coelsa-1",
          cvu,
          amount: { minor: 150_050n, currency: "ARS" },
          sender_cuit: sender.cuit,
          sender_name: sender.name,
          sender_account: sender.cbu
        })
        // BIND's retry of the same transfer carries the same id: ingest credits it once.
        expect(second?.bank_transaction_id).toBe(first?.bank_transaction_id)
        expect(yield* Effect.promise(() => sim.sendIncomingTransfer(url, notice))).toBe(401)
        expect(
          yield* Effect.promise(() =>
            sim.sendIncomingTransfer(url, notice, { ...auth, secret: "hook-secreT" })
          )
        ).toBe(401)
      })
    )
  )

  it("refuses every notification when no secret is configured", () => {
    const result = BindWebhook.authenticate(
      { ...settings, webhookSecret: Option.none() },
      { "x-bind-webhook-secret": "" }
    )
    expect(Either.isLeft(result) && result.left.reason).toBe("unauthenticated")
  })

  it("malformed bodies are malformed, with what is wrong", () => {
    const reasons = [
      "not json",
      JSON.stringify({ id: "m", created: "2024-01-01T00:00:00Z", data: { id: "x" } }),
      JSON.stringify({
        id: "m",
        created: "2024-01-01T00:00:00Z",
        data: {
          id: "coelsa-2",
          type: "TRANSFER",
          from: { bank_id: "322", account_id: "owner" },
          counterparty: {
            id: "20123456789",
            name: "X",
            account_routing: { scheme: "CBU", address: sender.cbu }
          },
          value: { currency: "ARS", amount: 10 },
          to: { cvu }
        }
      })
    ].map((body) => BindWebhook.parse(body))
    for (const r of reasons) expect(Either.isLeft(r) && r.left.reason).toBe("malformed")
    const last = reasons[2]!
    expect(Either.isLeft(last) && last.left.message).toContain("data.counterparty.id")
  })
})
