/**
 * The CSV exports over HTTP on SQLite and on Postgres: payments, a customer's transactions,
 * payouts and refunds, parsed with a real RFC 4180 parser (csv-parse). Quoting of commas, quotes,
 * CR/LF and non-ASCII text; formula injection neutralized; amounts and dates; filters; paging
 * across storage pages; another merchant's data never in a file; a partner token reading its
 * merchant's; a bad filter answered in the JSON error envelope before any CSV.
 */
import { HttpApiBuilder, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import {
  Accounts,
  Auth,
  BankAccount,
  Customer,
  Customers,
  Engine,
  Ids,
  Money,
  PaymentRequest,
  Payments,
  Principal,
  Refund,
  Refunds,
  Transfers
} from "@cobro/core"
import { SandboxBank, SandboxClocks, SandboxEngine } from "@cobro/bank-sandbox"
import { CobroHttp } from "@cobro/http"
import { pgAvailable, postgres, sqlite } from "@cobro/storage-contract"
import { parse } from "csv-parse/sync"
import { Effect, Either, Layer, Schema, TestClock } from "effect"

const pg = await Effect.runPromise(pgAvailable)

/** The API over `storage` (with the sandbox bank), on a random port, with a client pointed at it. */
const apiOn = (storage: Layer.Layer<Engine.Storage, unknown>) => {
  const clocked = SandboxClocks.layerWith({ refreshEvery: undefined }).pipe(Layer.provideMerge(storage))
  return HttpApiBuilder.serve().pipe(
    Layer.provide(CobroHttp.layer()),
    Layer.provideMerge(SandboxEngine.layerSandbox(clocked)),
    Layer.provideMerge(clocked),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )
}

const merchant = (user_id: string) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts.Accounts
    const created = yield* accounts.createUser(
      Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
        user_id,
        name: `Tienda ${user_id}`,
        email: `${user_id}@example.com`,
        cuit: BankAccount.makeCuit("30", "71234567"),
        account_status: "ACTIVE"
      })
    )
    yield* accounts.updateAccount(
      Principal.Principal.User({ user_id: created.user.user_id }),
      created.user.user_id,
      Schema.decodeUnknownSync(Accounts.AccountPatch)({ alias_prefix: user_id.replace("_", "") })
    )
    const auth = yield* Auth.Auth
    const token = yield* auth.issueUserToken(
      Ids.UserId.make(user_id),
      new Auth.TokenRequest({ client_id: created.client_id, client_secret: created.client_secret })
    )
    return token.token
  })

const partnerTokenFor = (user_id: string) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const registered = yield* auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name: `Socio de ${user_id}`,
        redirect_url: "https://partner.example.com/callback",
        webhook_url: "https://partner.example.com/hooks"
      })
    )
    const { code } = yield* auth.issueCode(registered.partner.partner_id, Ids.UserId.make(user_id))
    const grant = yield* auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: registered.client_id,
        client_secret: registered.client_secret
      })
    )
    return grant.access_token
  })

const createPayment = (user_id: string, external_id: string, fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Payments.Payments, (payments) =>
    payments.create(
      Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
        user_id,
        external_id,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        ...fields
      })
    )
  )

/** A transfer into `cvu` from a sender the bank names as given, ingested. */
const transferTo = (cvu: BankAccount.Cvu, pesos: string, sender: { name?: string; cuit?: string } = {}) =>
  Effect.gen(function* () {
    const bank = yield* SandboxBank.SandboxBank
    const transfer = yield* bank.simulateIncoming({
      cvu,
      amount: Either.getOrThrow(Money.fromString(pesos, "ARS")),
      senderName: sender.name,
      senderCuit: sender.cuit
    })
    const outcome = yield* (yield* Transfers.Transfers).ingest(transfer)
    expect(outcome._tag).toBe("Credited")
  })

interface Answer {
  readonly status: number
  readonly contentType: string
  readonly disposition: string | undefined
  readonly text: string
}

const get = (path: string, token: string) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token))
    )
    return {
      status: response.status,
      contentType: response.headers["content-type"] ?? "",
      disposition: response.headers["content-disposition"],
      text: yield* response.text
    } satisfies Answer
  })

/** The records of a CSV answer, parsed strictly (RFC 4180: CRLF records, quoted fields). */
const records = (answer: Answer): Array<Array<string>> => {
  expect(answer.status).toBe(200)
  expect(answer.contentType).toBe("text/csv; charset=utf-8; header=present")
  expect(answer.disposition).toMatch(
    /^attachment; filename="cobro-[a-z]+-[A-Za-z0-9._-]+-\d{8}T\d{6}Z\.csv"$/
  )
  expect(answer.text.endsWith("\r\n")).toBe(true)
  return parse(answer.text, { record_delimiter: "\r\n", relax_quotes: false }) as Array<Array<string>>
}

/** The records as objects keyed by the header row. */
const table = (answer: Answer): Array<Record<string, string>> => {
  const [head, ...rows] = records(answer)
  return rows.map((row) => {
    expect(row.length).toBe(head!.length)
    return Object.fromEntries(head!.map((name, i) => [name, row[i]!]))
  })
}

/** An answer refused before any CSV: the JSON error envelope. */
const refused = (answer: Answer, status: number, key: string) => {
  expect(answer.status).toBe(status)
  expect(answer.contentType).toMatch(/^application\/json/)
  expect(JSON.parse(answer.text)).toMatchObject({ message: key, error: true, code: status })
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const tricky = 'Pedido 7, "urgente"\r\nseñá 50 € — 日本'
const trickyName = 'Pérez, "Juan"\nS.R.L.'
const payerCuit = BankAccount.makeCuit("20", "12345678")

const suite = (name: string, storage: () => Layer.Layer<Engine.Storage, unknown>) =>
  layer(apiOn(storage()), { timeout: 120_000 })(`CSV exports on ${name}`, (it) => {
    it.effect(
      "every export: quoting, amounts, dates, filters, paging, authorization",
      () =>
        Effect.gen(function* () {
          const a = yield* merchant("csv_a")
          const b = yield* merchant("csv_b")
          const aPartner = yield* partnerTokenFor("csv_a")

          // --- payments ---------------------------------------------------------------------
          const paid = yield* createPayment("csv_a", "paid-1", { motive: tricky })
          yield* transferTo(paid.cvu, "1500.00", { name: trickyName, cuit: payerCuit })
          yield* TestClock.adjust("1 minute")
          const odd = yield* createPayment("csv_a", "paid-by-odd-sender")
          yield* transferTo(odd.cvu, "1500.00", { name: "-Robert'); DROP TABLE", cuit: "+20-1" })
          yield* createPayment("csv_a", "formula", { motive: '=HYPERLINK("http://evil.example","x")' })
          yield* createPayment("csv_a", "-5", { team_id: "ventas", motive: "@SUM(1,2)" })
          // More than a storage page (200) in all.
          for (let i = 0; i < 200; i++) yield* createPayment("csv_a", `bulk-${String(i).padStart(3, "0")}`)
          const other = yield* createPayment("csv_b", "secret-of-b", { motive: "de B" })

          const all = table(yield* get("/payments/export.csv?user_id=csv_a", a))
          expect(all.length).toBe(204)
          expect(new Set(all.map((r) => r["payment_id"])).size).toBe(204)
          expect(all.some((r) => r["payment_id"] === other.id)).toBe(false)
          const row = all.find((r) => r["payment_id"] === paid.id)!
          expect(row).toMatchObject({
            external_id: "paid-1",
            payment_status: "SUCCESS",
            price_amount: "1500.00",
            price_currency: "ARS",
            quote_amount_ars: "1500.00",
            received_amount_ars: "1500.00",
            transfers: "1",
            cvu: paid.cvu,
            payer_cuits: payerCuit,
            payer_names: trickyName,
            motive: tricky,
            team_id: ""
          })
          expect(Number(row["credited_amount_ars"])).toBeLessThan(1500)
          expect(row["credited_amount_ars"]).toMatch(/^\d+\.\d{2}$/)
          expect(row["creation_timestamp"]).toMatch(ISO)
          expect(all.find((r) => r["payment_id"] === odd.id)).toMatchObject({
            payer_cuits: "'+20-1",
            payer_names: "'-Robert'); DROP TABLE"
          })
          expect(row["expiration_timestamp"]).toMatch(ISO)
          expect(all.find((r) => r["external_id"] === "formula")!["motive"]).toBe(
            `'=HYPERLINK("http://evil.example","x")`
          )
          expect(all.find((r) => r["external_id"] === "'-5")!["motive"]).toBe("'@SUM(1,2)")
          // Oldest first, as GET /payments/ lists them.
          const created = all.map((r) => r["creation_timestamp"]!)
          expect([...created].sort()).toEqual(created)

          // The raw text: CRLF records, quotes doubled, the header first.
          const text = (yield* get("/payments/export.csv?user_id=csv_a&team_id=ventas", a)).text
          expect(text.startsWith("payment_id,external_id,payment_status,price_amount,")).toBe(true)
          const succeeded = table(yield* get("/payments/export.csv?user_id=csv_a&payment_status=SUCCESS", a))
          expect(succeeded.map((r) => r["payment_id"]).sort()).toEqual([paid.id, odd.id].sort())
          refused(
            yield* get("/payments/export.csv?user_id=csv_a&payment_status=PAID", a),
            400,
            "request.invalid"
          )
          const team = table(yield* get("/payments/export.csv?user_id=csv_a&team_id=ventas", a))
          expect(team.map((r) => r["external_id"])).toEqual(["'-5"])
          const rawPaid = (yield* get("/payments/export.csv?user_id=csv_a", a)).text
          expect(rawPaid).toContain('"Pedido 7, ""urgente""\r\nseñá 50 € — 日本"')

          // Date filters; an empty range is the header alone.
          const future = table(
            yield* get("/payments/export.csv?user_id=csv_a&start_date=2099-01-01T00:00:00Z", a)
          )
          expect(future).toEqual([])
          expect(
            records(yield* get("/payments/export.csv?user_id=csv_a&start_date=2099-01-01T00:00:00Z", a))
          ).toHaveLength(1)
          const upTo = table(
            yield* get(
              `/payments/export.csv?user_id=csv_a&end_date=${encodeURIComponent(row["creation_timestamp"]!)}`,
              a
            )
          )
          expect(upTo.map((r) => r["payment_id"])).toEqual([paid.id])
          const after = table(
            yield* get(
              `/payments/export.csv?user_id=csv_a&start_date=${encodeURIComponent(all[1]!["creation_timestamp"]!)}`,
              a
            )
          )
          expect(after).toEqual(all.slice(1))

          // Refused before any CSV: bad filters, another user.
          refused(
            yield* get("/payments/export.csv?user_id=csv_a&start_date=yesterday", a),
            400,
            "request.invalid"
          )
          refused(yield* get("/payments/export.csv", a), 400, "request.invalid")
          refused(
            yield* get(
              "/payments/export.csv?user_id=csv_a&start_date=2030-01-02T00:00:00Z&end_date=2030-01-01T00:00:00Z",
              a
            ),
            400,
            "request.invalid"
          )
          refused(yield* get("/payments/export.csv?user_id=csv_b", a), 404, "user.not.found")
          refused(
            yield* get("/payments/export.csv?user_id=csv_a", "USR-not-a-token"),
            401,
            "auth.token.invalid"
          )

          // B sees its own only; A's partner sees A's, and not B's.
          expect(
            table(yield* get("/payments/export.csv?user_id=csv_b", b)).map((r) => r["payment_id"])
          ).toEqual([other.id])
          expect(table(yield* get("/payments/export.csv?user_id=csv_a", aPartner))).toEqual(all)
          refused(yield* get("/payments/export.csv?user_id=csv_b", aPartner), 404, "user.not.found")

          // --- a customer's transactions ----------------------------------------------------
          const customers = yield* Customers.Customers
          const customer = yield* customers.create(
            Ids.UserId.make("csv_a"),
            Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
              user_id: "csv_a",
              alias: "cliente",
              customer_id: "c-1",
              name: "Juan Cliente"
            })
          )
          yield* transferTo(customer.bank_info.cvu, "100.50", { name: trickyName })
          yield* TestClock.adjust("1 minute")
          // More than a page (100) of the paged lists.
          for (let i = 0; i < 101; i++) yield* transferTo(customer.bank_info.cvu, "1.00")
          const bCustomer = yield* customers.create(
            Ids.UserId.make("csv_b"),
            Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
              user_id: "csv_b",
              alias: "clienteb",
              customer_id: "c-b",
              name: "Cliente de B"
            })
          )
          yield* transferTo(bCustomer.bank_info.cvu, "9.99")

          const transactions = table(yield* get("/customers/c-1/transactions/export.csv", a))
          expect(transactions).toHaveLength(102)
          expect(new Set(transactions.map((t) => t["transaction_id"])).size).toBe(102)
          const first = transactions.find((t) => t["amount"] === "100.50")!
          expect(first).toMatchObject({
            customer_id: "c-1",
            amount: "100.50",
            currency: "ARS",
            sender_name: trickyName
          })
          expect(first["creation_timestamp"]).toMatch(ISO)
          const stamps = transactions.map((t) => t["creation_timestamp"]!)
          expect([...stamps].sort().reverse()).toEqual(stamps)
          expect(table(yield* get("/customers/c-1/transactions/export.csv", aPartner))).toEqual(transactions)
          const since = table(
            yield* get(
              `/customers/c-1/transactions/export.csv?end_date=${encodeURIComponent(first["creation_timestamp"]!)}`,
              a
            )
          )
          expect(since).toEqual([first])
          const later = table(
            yield* get(
              `/customers/c-1/transactions/export.csv?start_date=${encodeURIComponent(transactions[0]!["creation_timestamp"]!)}`,
              a
            )
          )
          expect(later).toEqual(transactions.filter((t) => t !== first))
          refused(yield* get("/customers/c-b/transactions/export.csv", a), 404, "customer.not.found")
          refused(
            yield* get("/customers/c-1/transactions/export.csv?start_date=x", a),
            400,
            "request.invalid"
          )
          expect(
            table(yield* get("/customers/c-b/transactions/export.csv", b)).map((t) => t["amount"])
          ).toEqual(["9.99"])

          // --- refunds, and payouts ---------------------------------------------------------
          const refunds = yield* Refunds.Refunds
          const refund = yield* refunds.create(
            Ids.UserId.make("csv_a"),
            paid.id,
            Schema.decodeUnknownSync(Refund.RefundRequest)({
              refund_type: "PARTIAL",
              amount: "250.50",
              blame: { team_id: "=cmd|' /C calc'!A0", mail: "soporte@example.com" }
            })
          )
          const refundRows = table(yield* get("/refunds/export.csv", a))
          expect(refundRows).toHaveLength(1)
          expect(refundRows[0]).toMatchObject({
            refund_id: refund.refund_id,
            payment_id: paid.id,
            refund_type: "PARTIAL",
            amount: "250.50",
            currency: "ARS",
            destination_cuit: payerCuit,
            destination_name: trickyName,
            requested_by_team: "'=cmd|' /C calc'!A0",
            requested_by_mail: "soporte@example.com"
          })
          expect(refundRows[0]!["creation_timestamp"]).toMatch(ISO)
          expect(table(yield* get(`/refunds/export.csv?payment_id=${paid.id}`, aPartner))).toEqual(refundRows)
          expect(
            table(yield* get(`/refunds/export.csv?payment_id=${encodeURIComponent(other.id)}`, b))
          ).toEqual([])
          refused(
            yield* get(`/refunds/export.csv?payment_id=${encodeURIComponent(other.id)}`, a),
            404,
            "payment.not.found"
          )
          refused(yield* get("/refunds/export.csv?user_id=csv_b", a), 404, "user.not.found")
          expect(table(yield* get("/refunds/export.csv", b))).toEqual([])

          const payouts = table(yield* get("/transactions/payouts/export.csv", a))
          expect(payouts).toHaveLength(1)
          expect(payouts[0]).toMatchObject({
            payout_id: refund.refund_id,
            kind: "refund",
            amount: "250.50",
            currency: "ARS",
            payment_id: paid.id
          })
          expect(table(yield* get("/transactions/payouts/export.csv?kind=refund", aPartner))).toEqual(payouts)
          expect(table(yield* get("/transactions/payouts/export.csv?kind=schedule", a))).toEqual([])
          expect(table(yield* get("/transactions/payouts/export.csv", b))).toEqual([])
          refused(yield* get("/transactions/payouts/export.csv?kind=bonus", a), 400, "request.invalid")
          refused(yield* get("/transactions/payouts/export.csv?user_id=csv_b", a), 404, "user.not.found")
        }),
      120_000
    )
  })

describe("CSV exports", () => {
  suite("SQLite", sqlite.storage)
  describe.runIf(pg)("Postgres (when 127.0.0.1:5432 answers)", () => suite("Postgres", postgres.storage))
})
