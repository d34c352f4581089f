/**
 * Refunds end to end over real HTTP on the whole server (SQLite, the job loop running): a SUCCESS
 * payment refunded in full and an OVERPAID payment's excess, each SUCCESS with balances exact,
 * `cobro ledger verify` clean, listed as payouts (HTTP and `cobro payouts list`) and each change
 * delivered as "Payment updated" to a real receiver; an `Idempotency-Key` retry answers the first
 * refund; bad input gets the 4xx envelope naming the problem and writes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClientRequest } from "@effect/platform"
import { BankAccount } from "@cobro/core"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect, Schedule } from "effect"
import { Admin } from "../src/index.js"
import { cliJson, configOf, get, postJson, request, serverLayer, tempDb } from "./support.js"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/** A receiver on a random loopback port answering 200; the bodies it received. */
const receiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; received: Array<Json>; server: http.Server }>((resolve) => {
        const received: Array<Json> = []
        const server = http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk: Buffer) => (body += chunk.toString()))
          req.on("end", () => {
            received.push(JSON.parse(body))
            res.writeHead(200).end()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ url: `http://127.0.0.1:${port}/hook`, received, server })
        })
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** Retries `check` (which fails while its condition does not hold) for up to 20 s. */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => check).pipe(
    Effect.retry(Schedule.spaced(Duration.millis(200))),
    Effect.timeout(Duration.seconds(20)),
    Effect.orDie
  )

const merchant = (user_id: string) =>
  Admin.createUser({
    user_id,
    name: `Tienda ${user_id}`,
    email: `${user_id}@example.com`,
    cuit: "30712345671",
    status: "ACTIVE"
  })

const tokenOf = (created: { user_id: string; client_id: string; client_secret: string }) =>
  Effect.map(
    postJson(`/users/${created.user_id}/tokens`, {
      client_id: created.client_id,
      client_secret: created.client_secret
    }),
    (r) => (r.body["data"] as { token: string }).token
  )

const payerCbu = BankAccount.makeCbu("0170099", "2200001234567")
const payerCuit = BankAccount.makeCuit("20", "30111222")

/** A payment of `price` (1500 unless given) with `webhook_url`, paid with `amount` from the payer's CBU. */
const paidPayment = (
  user_id: string,
  token: string,
  external_id: string,
  amount: number,
  webhook_url: string,
  price = 1500
) =>
  Effect.gen(function* () {
    const created = yield* postJson("/payments/", {
      user_id,
      external_id,
      price: { amount: price, currency: "ARS" },
      payment_options: ["transfer"],
      webhook_url
    })
    expect(created.status).toBe(200)
    const cvu = (created.body["data"] as { quotes: Array<{ cvu: string }> }).quotes[0]!.cvu
    const paid = yield* postJson(`/cvu/${cvu}/faucet`, { amount, cbu: payerCbu, cuit: payerCuit }, token)
    expect(paid.status).toBe(200)
    const id = (created.body["data"] as { id: string }).id
    return (yield* get(`/payments/${id}`, token)).body["data"] as Json
  })

const refund = (token: string, paymentId: string, body: unknown, key?: string) =>
  request(
    HttpClientRequest.post(`/payments/${paymentId}/refunds`).pipe(
      HttpClientRequest.bearerToken(token),
      key === undefined ? (r) => r : HttpClientRequest.setHeader("idempotency-key", key),
      HttpClientRequest.bodyUnsafeJson(body)
    )
  )

const cents = (text: string) => Math.round(Number(text) * 100)

describe("refunds over HTTP", () => {
  it.scopedLive(
    "a SUCCESS payment of 700 in full (700 back) and an OVERPAID payment's excess, end to end",
    () =>
      Effect.gen(function* () {
        const hook = yield* receiver
        const db = yield* tempDb
        const env = { COBRO_DATABASE_URL: db, COBRO_JOB_INTERVAL: "1 second" }
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          const a = yield* merchant("tienda_r")
          const b = yield* merchant("tienda_otra")
          const token = yield* tokenOf(a)
          const tokenB = yield* tokenOf(b)
          const success = yield* paidPayment("tienda_r", token, "order-1", 700, hook.url, 700)
          const over = yield* paidPayment("tienda_r", token, "order-2", 2000, hook.url)
          const theirs = yield* paidPayment("tienda_otra", tokenB, "order-9", 1500, hook.url)
          expect(success.payment_status).toBe("SUCCESS")
          // 700 less 1 % commission and 21 % IVA on it.
          expect(success.transaction_fields.credited_amount).toBe("691.53")
          expect(over.payment_status).toBe("OVERPAID")
          expect(success.refunds).toEqual([])
          expect(success.refunded_amount).toBe("0.00")
          const creditedSuccess = cents(success.transaction_fields.credited_amount)
          const creditedOver = cents(over.transaction_fields.credited_amount)
          const balance = Effect.map(get("/users/tienda_r/balance", token), (r) => {
            expect(r.status).toBe(200)
            return (r.body["data"] as Json).balances[0]
          })
          expect(yield* balance).toMatchObject({
            available: ((creditedSuccess + creditedOver) / 100).toFixed(2),
            in_transit: "0.00"
          })

          // Bad input: the envelope names the problem, and nothing is written.
          const bad = [
            [
              success.id,
              { refund_type: "PARTIAL", amount: "250.505", currency: "ARS" },
              400,
              "refund.amount.invalid",
              "amount"
            ],
            [
              success.id,
              { refund_type: "PARTIAL", amount: -10, currency: "ARS" },
              400,
              "refund.amount.invalid",
              "amount"
            ],
            [
              success.id,
              { refund_type: "PARTIAL", amount: "700.01" },
              409,
              "refund.amount.exceeds_refundable",
              undefined
            ],
            [
              success.id,
              { refund_type: "PARTIAL", amount: "10", currency: "USD" },
              400,
              "refund.currency.mismatch",
              "currency"
            ],
            ["VAR-tienda_r-nope", { refund_type: "FULL" }, 404, "payment.not.found", undefined],
            [theirs.id, { refund_type: "FULL" }, 404, "payment.not.found", undefined],
            [success.id, { refund_type: "HALF" }, 400, "request.invalid", "refund_type"]
          ] as const
          for (const [id, body, status, key, field] of bad) {
            const r = yield* refund(token, id, body)
            expect(r.status, `${key} ${JSON.stringify(body)}`).toBe(status)
            expect(r.body).toMatchObject({
              message: key,
              error: true,
              code: status,
              data: { detail: expect.any(String), ...(field === undefined ? {} : { field }) }
            })
          }
          expect(
            ((yield* get(`/payments/${success.id}/refunds`, token)).body["data"] as Json).refunds
          ).toEqual([])
          // The other merchant has only that payment's 1481.85: a FULL refund (1500.00) is short, and
          // the envelope names by how much.
          const short = yield* refund(tokenB, theirs.id, { refund_type: "FULL" })
          expect(short.status).toBe(409)
          expect(short.body).toEqual({
            message: "refund.balance.insufficient",
            error: true,
            code: 409,
            data: {
              detail: expect.stringContaining("18.15 ARS short"),
              shortfall: { needed: "1500.00", available: "1481.85", missing: "18.15", currency: "ARS" }
            },
            request_id: expect.any(String)
          })
          expect(
            ((yield* get(`/payments/${theirs.id}/refunds`, tokenB)).body["data"] as Json).refunds
          ).toEqual([])

          // The SUCCESS payment in full, with an Idempotency-Key.
          const full = yield* refund(
            token,
            success.id,
            {
              refund_type: "FULL",
              user_id: "tienda_r",
              blame: { team_id: "soporte", mail: "ana@example.com" }
            },
            "refund-1"
          )
          expect(full.status).toBe(200)
          const first = full.body as Json
          expect(first).toMatchObject({
            message: "refund.created",
            error: false,
            code: 200,
            data: {
              payment_id: success.id,
              user_id: "tienda_r",
              refund_type: "FULL",
              // What the payer sent, not the 691.53 the payment credited.
              amount: "700.00",
              currency: "ARS",
              status: "SUCCESS",
              destination: { address: payerCbu, cuit: payerCuit },
              blame: { team_id: "soporte", mail: "ana@example.com" },
              bank_reference: expect.any(String),
              created_at: expect.any(String),
              updated_at: expect.any(String)
            }
          })
          expect(first.data.failure_reason).toBeUndefined()
          const again = yield* refund(
            token,
            success.id,
            {
              refund_type: "FULL",
              user_id: "tienda_r",
              blame: { team_id: "soporte", mail: "ana@example.com" }
            },
            "refund-1"
          )
          expect(again.body).toEqual(first)
          expect(again.headers["idempotent-replayed"]).toBe("true")
          const nothingLeft = yield* refund(token, success.id, { refund_type: "FULL" })
          expect(nothingLeft.status).toBe(409)
          expect(nothingLeft.body).toMatchObject({ message: "refund.payment.fully_refunded" })

          // The OVERPAID payment's excess: the order stays paid.
          const excess = yield* refund(token, over.id, {
            refund_type: "PARTIAL",
            amount: "500.00",
            currency: "ARS"
          })
          expect(excess.status).toBe(200)
          expect((excess.body as Json).data).toMatchObject({
            amount: "500.00",
            status: "SUCCESS",
            refund_type: "PARTIAL"
          })
          const overAfter = (yield* get(`/payments/${over.id}`, token)).body["data"] as Json
          expect(overAfter.payment_status).toBe("OVERPAID")
          expect(overAfter.refunded_amount).toBe("500.00")
          expect(overAfter.refunds).toEqual([(excess.body as Json).data])
          const successAfter = (yield* get(`/payments/${success.id}`, token)).body["data"] as Json
          expect(successAfter.payment_status).toBe("SUCCESS")
          expect(successAfter.refunds).toEqual([first.data])
          expect(successAfter.refunded_amount).toBe("700.00")
          const one = yield* get(`/payments/${success.id}/refunds/${first.data.refund_id}`, token)
          expect(one.body).toMatchObject({ message: "refund.found", data: first.data })
          expect((yield* get(`/payments/${over.id}/refunds/${first.data.refund_id}`, token)).status).toBe(404)
          expect((yield* get(`/payments/${success.id}/refunds/${first.data.refund_id}`, tokenB)).status).toBe(
            404
          )

          // Balances exact: both credits less the 700.00 and the excess refunded (the commission
          // of the refunded payment stays earned).
          expect(yield* balance).toMatchObject({
            available: ((creditedSuccess + creditedOver - 70000 - 50000) / 100).toFixed(2),
            in_transit: "0.00"
          })
          // The payer's page says so, in Spanish.
          const page = yield* request(HttpClientRequest.get(`/pay/${encodeURIComponent(success.id)}`))
          expect(String(page.body)).toContain("Pago reembolsado")
          const partialPage = yield* request(HttpClientRequest.get(`/pay/${encodeURIComponent(over.id)}`))
          expect(String(partialPage.body)).toMatch(/te devolvió \$\s500,00 de este pago/)
          expect(String(partialPage.body)).not.toContain("se va a comunicar con vos")

          // Both refunds in the merchant's payouts.
          const listed = (yield* get("/transactions/payouts?kind=refund", token)).body["data"] as Json
          expect(listed.payouts.map((p: Json) => p.payout_id).sort()).toEqual(
            [first.data.refund_id, (excess.body as Json).data.refund_id].sort()
          )
          expect(listed.payouts.every((p: Json) => p.kind === "refund" && p.status === "SUCCESS")).toBe(true)

          // Each payment: paid, refund PENDING, refund SUCCESS — three "Payment updated" received.
          yield* eventually(
            Effect.suspend(() => {
              const of = (id: string) => hook.received.filter((b) => b.paymentId === id).length
              return of(success.id) === 3 && of(over.id) === 3 ? Effect.void : Effect.fail("not yet")
            })
          )
          expect(hook.received.every((b) => b.message === "Payment updated")).toBe(true)
        }).pipe(Effect.provide(serverLayer(config)))

        // The books, from the CLI over the same database.
        const verified = yield* cliJson(["ledger", "verify"], env)
        expect(verified["ok"]).toBe(true)
        const cliPayouts = yield* cliJson(
          ["payouts", "list", "--user-id", "tienda_r", "--kind", "refund"],
          env
        )
        expect((cliPayouts["payouts"] as Array<Json>).map((p) => p.kind)).toEqual(["refund", "refund"])
      })
  )
})
