/**
 * The client against the real server (`cobro serve` in its own process, `test/server.ts`): the
 * sandbox's test clock and bank accounts, `listPayments()` without a `user_id`, a cursor list
 * walked with `for await`, a real webhook delivery verified with `verifyWebhook` (and a tampered,
 * a stale and an unsigned one refused), a CSV export as a stream, and the request id of every
 * `CobroError`.
 */
import { Cobro, CobroError, verifyWebhook, WebhookVerificationError } from "@cobro/client"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, START_TIMEOUT, startServer } from "./server.js"

let server: RunningServer
let cobro: Cobro

beforeAll(async () => {
  server = await startServer({ COBRO_JOB_INTERVAL: "1 second" })
  cobro = new Cobro({ baseUrl: server.base, credentials: server.credentials })
}, START_TIMEOUT)

afterAll(async () => {
  await server?.stop()
})

const pay = (externalId: string, extra: { webhook_url?: string } = {}) =>
  cobro.createPayment({
    user_id: "demo",
    price: { amount: 1500, currency: "ARS" },
    payment_options: ["transfer"],
    external_id: externalId,
    ...extra
  })

describe("the sandbox from the client", () => {
  it("reads and advances the merchant's test clock: an unpaid payment expires", async () => {
    const before = await cobro.getClock()
    expect(before.data.offset_seconds).toBe(0)
    const created = await pay("clock-1")
    const advanced = await cobro.advanceClock({ seconds: 6 * 86_400 })
    expect(advanced.data.offset_seconds).toBeGreaterThanOrEqual(6 * 86_400)
    expect((await cobro.getClock()).data.offset_seconds).toBe(advanced.data.offset_seconds)
    expect((await cobro.getPayment(created.data.id)).data.payment_status).toBe("EXPIRED")
  })

  it("registers, lists, reads and removes a sandbox bank account", async () => {
    const account = {
      cbu: "2850590940090418135201",
      alias: "mi.cuenta.pruebas",
      holder_name: "Tienda Ejemplo SA",
      cuit: "30712345671"
    }
    const registered = await cobro.registerBankAccount(account)
    expect(registered.data).toMatchObject({ cbu: account.cbu, alias: account.alias })
    expect((await cobro.listBankAccounts()).data.accounts.map((a) => a.cbu)).toEqual([account.cbu])
    expect((await cobro.getBankAccount(account.cbu)).data.cbu).toBe(account.cbu)
    expect(Array.isArray((await cobro.listBankAccountTransfers(account.cbu)).data.transfers)).toBe(true)
    await cobro.removeBankAccount(account.cbu)
    const gone = await cobro.getBankAccount(account.cbu).catch((e: unknown) => e)
    expect(gone).toBeInstanceOf(CobroError)
    expect(gone).toMatchObject({ status: 404 })
  })
})

describe("lists", () => {
  it("listPayments() lists the client's own merchant's payments with no user_id", async () => {
    const created = await pay("list-1")
    const listed = await cobro.listPayments()
    expect(listed.data.payments.map((p) => p.id)).toContain(created.data.id)
    // A client that does not know its merchant says so instead of sending a request.
    const partner = new Cobro({ baseUrl: server.base, token: "PAR-x" })
    expect(() => partner.listPayments()).toThrow(/give a user_id/)
  })

  it("walks a cursor list page by page with for await", async () => {
    await cobro.createCustomer({
      user_id: "demo",
      customer_id: "walker",
      name: "Juana Pérez",
      alias: "walker-1"
    })
    const customer = await cobro.getCustomer("walker")
    const cvu = customer.data.bank_info.cvu
    for (const amount of [100, 200, 300]) await cobro.faucet(cvu, { amount })
    const seen: Array<string> = []
    const sent: Array<string> = []
    const paged = new Cobro({
      baseUrl: server.base,
      credentials: server.credentials,
      fetch: (request) => {
        sent.push(new URL(request.url).search)
        return globalThis.fetch(request)
      }
    })
    for await (const transaction of paged.allCustomerTransactions("walker", { limit: "1" })) {
      seen.push(transaction.transaction_id)
    }
    expect(seen).toHaveLength(3)
    expect(new Set(seen).size).toBe(3)
    const pages = sent.filter((s) => s.startsWith("?limit=1"))
    expect(pages[0]).toBe("?limit=1")
    expect(pages.slice(1).every((s) => s.includes("cursor="))).toBe(true)
    // The same with one page of everything.
    const all = await cobro.listCustomerTransactions("walker")
    expect(all.data.transactions.map((t) => t.transaction_id)).toEqual(seen)
  })
})

interface Received {
  readonly body: string
  readonly headers: http.IncomingHttpHeaders
}

describe("CSV exports", () => {
  it("exportCsv streams the client's merchant's payments; a bad filter throws CobroError before any byte", async () => {
    const created = await pay("export-1")
    const stream = await cobro.exportCsv({ export: "payments" })
    const text = await new Response(stream).text()
    const [header, ...rows] = text.split("\r\n")
    expect(header!.startsWith("payment_id,external_id,payment_status,")).toBe(true)
    expect(rows.some((row) => row.startsWith(`${created.data.id},export-1,PENDING,1500.00,ARS,`))).toBe(true)
    expect(text.endsWith("\r\n")).toBe(true)
    const refused = await cobro
      .exportCsv({ export: "payouts", query: { start_date: "yesterday" } })
      .catch((e) => e)
    expect(refused).toBeInstanceOf(CobroError)
    expect((refused as CobroError).status).toBe(400)
    const empty = await new Response(await cobro.exportCsv({ export: "refunds" })).text()
    expect(empty.split("\r\n")).toHaveLength(2)
  })
})

describe("verifyWebhook on a real delivery", () => {
  it("answers the typed event; refuses a tampered body, a stale delivery and no signature", async () => {
    const received: Array<Received> = []
    const receiver = http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString()))
      req.on("end", () => {
        received.push({ body, headers: req.headers })
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const created = await pay("hooked-1", { webhook_url: url })
      await cobro.faucet(created.data.quotes[0]!.cvu, { amount: 1500 })
      const deadline = Date.now() + 30_000
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      const delivery = received[0]!
      const secret = server.credentials.clientSecret

      const event = await verifyWebhook(delivery.body, delivery.headers, secret)
      expect(event.type).toBe("payment.updated")
      if (event.type !== "payment.updated") throw new Error("unreachable")
      expect(event.body).toEqual({
        message: "Payment updated",
        paymentId: "VAR-demo-hooked-1",
        externalId: "hooked-1"
      })
      expect(event.id).toMatch(/^evt_/)
      expect(event.verified).toEqual(["webhook-signature", "x-service-signature"])
      // Bytes and a fetch Headers are taken as well.
      const again = await verifyWebhook(
        new TextEncoder().encode(delivery.body),
        new Headers(delivery.headers as Record<string, string>),
        secret
      )
      expect(again.id).toBe(event.id)

      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => "verified",
          (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e))
        )
      const tampered = delivery.body.replace("hooked-1", "hooked-2")
      expect(await refusal(verifyWebhook(tampered, delivery.headers, secret))).toBe("signature_mismatch")
      expect(await refusal(verifyWebhook(delivery.body, delivery.headers, `${secret}x`))).toBe(
        "signature_mismatch"
      )
      // Only X-Service-Signature, tampered: refused on it alone (timestamp not required).
      const serviceOnly = { "x-service-signature": String(delivery.headers["x-service-signature"]) }
      expect(await refusal(verifyWebhook(tampered, serviceOnly, secret, { requireTimestamp: false }))).toBe(
        "signature_mismatch"
      )
      expect(
        (await verifyWebhook(delivery.body, serviceOnly, secret, { requireTimestamp: false })).verified
      ).toEqual(["x-service-signature"])
      expect(await refusal(verifyWebhook(delivery.body, serviceOnly, secret))).toBe("malformed_headers")
      const sixMinutesLater = Date.now() + 6 * 60_000
      expect(
        await refusal(verifyWebhook(delivery.body, delivery.headers, secret, { now: sixMinutesLater }))
      ).toBe("timestamp_out_of_tolerance")
      expect(await refusal(verifyWebhook(delivery.body, {}, secret))).toBe("missing_signature")
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
    }
  }, 60_000)
})

describe("request ids", () => {
  it("every CobroError carries the answer's Request-Id, the caller's own X-Request-Id kept", async () => {
    const error = await cobro.getPayment("VAR-demo-none").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CobroError)
    const { requestId } = error as CobroError
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/)
    expect(String(error)).toContain(`[request ${requestId}]`)
    expect((error as CobroError).body).toMatchObject({ request_id: requestId })

    const traced = new Cobro({
      baseUrl: server.base,
      credentials: server.credentials,
      headers: { "X-Request-Id": "trace-4711" }
    })
    const public404 = await traced.getPublicPayment("VAR-demo-none").catch((e: unknown) => e)
    expect(public404).toMatchObject({ status: 404, requestId: "trace-4711" })
    const unauthorized = await new Cobro({
      baseUrl: server.base,
      credentials: { ...server.credentials, clientSecret: "wrong" }
    })
      .getPayment("VAR-demo-none")
      .catch((e: unknown) => e)
    expect(unauthorized).toMatchObject({ status: 401, requestId: expect.stringMatching(/^req_/) })
  })
})
