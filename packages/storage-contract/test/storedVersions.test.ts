/**
 * Stored documents have a storage shape of their own, versioned (`@cobro/sql`'s
 * `internal/documents`): rows written before versions (JSON without `v`, inserted here by hand)
 * still read, and what is written now carries `v: 1`. On SQLite and on Postgres.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Customer, Ids, Money } from "@cobro/core"
import { CustomerRepository, PaymentRepository } from "@cobro/core/ports"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)

const cvu = BankAccount.makeCvu("0000003", "1000000000001")
const customerCvu = BankAccount.makeCvu("0000003", "1000000000002")
const created = Date.parse("2026-01-02T03:04:05.000Z")
const expires = Date.parse("2026-01-03T03:04:05.000Z")

/** A payment's `doc` as the engine wrote it before storage versions: no `v`. */
const oldPayment = {
  id: "pay_old",
  payment_status: "PENDING",
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  external_id: "ext_old",
  webhook_url: null,
  redirect_url: null,
  motive: null,
  payment_url: "https://pay.example/pay_old",
  expiration_timestamp: "2026-01-03T03:04:05.000Z",
  creation_timestamp: "2026-01-02T03:04:05.000Z",
  last_modified_timestamp: "2026-01-02T03:04:05.000Z",
  is_deleted: false,
  user_id: "u1",
  quotes: [
    {
      currency: "ARS",
      network: "CVU",
      amount: "1500.00",
      amountReadable: "1.500,00",
      address: cvu,
      alias: "old.payment.alias"
    }
  ],
  transactions: [],
  metadata: { motive: [] },
  tags: ["a"],
  cvu_released: false,
  creation_request: "{}"
}

/** A customer's `doc` as written before storage versions (its balance in the column, zero here). */
const oldCustomer = {
  customer_id: "cust_old",
  user_id: "u1",
  name: "Ana",
  alias: "ana",
  bank_info: { cvu: customerCvu, alias: "tienda.ana.old" },
  balance: 0,
  contact: { email: "ana@example.com" },
  webhook_url: null,
  creation_timestamp: "2026-01-02T03:04:05.000Z",
  last_modified_timestamp: "2026-01-02T03:04:05.000Z"
}

const docOf = (rows: ReadonlyArray<{ doc: unknown }>): Record<string, unknown> => {
  const doc = rows[0]!.doc
  return (typeof doc === "string" ? JSON.parse(doc) : doc) as Record<string, unknown>
}

const versions = (backend: SqlBackend) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentRepository.PaymentRepository
    const customers = yield* CustomerRepository.CustomerRepository

    yield* sql`INSERT INTO cobro_payments ${sql.insert({
      id: "pay_old",
      user_id: "u1",
      external_id: "ext_old",
      cvu,
      team_id: null,
      created_ms: created,
      expires_ms: expires,
      cvu_released: 0,
      doc: JSON.stringify(oldPayment)
    })}`
    const payment = Option.getOrThrow(yield* payments.findById(Ids.PaymentId.make("pay_old")))
    expect(payment.external_id).toBe("ext_old")
    expect(payment.price).toEqual(Money.make(150000n, "ARS"))
    expect(payment.quoteAmount).toEqual(Money.make(150000n, "ARS"))
    expect(payment.cvu).toBe(cvu)
    expect(payment.webhook_url).toBeNull()
    expect(payment.tags).toEqual(["a"])

    // Written again (any update), the document carries its version.
    yield* payments.update(payment)
    const rewritten = docOf(yield* sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE id = 'pay_old'`)
    expect(rewritten.v).toBe(1)
    expect(Option.getOrThrow(yield* payments.findById(payment.id))).toEqual(payment)

    yield* sql`INSERT INTO cobro_customers ${sql.insert({
      user_id: "u1",
      customer_id: "cust_old",
      alias: "tienda.ana.old",
      cvu: customerCvu,
      balance_minor: 250n,
      created_ms: created,
      doc: JSON.stringify(oldCustomer)
    })}`
    const customer = Option.getOrThrow(
      yield* customers.findById(Ids.UserId.make("u1"), Customer.CustomerId.make("cust_old"))
    )
    expect(customer.name).toBe("Ana")
    expect(customer.balance).toEqual(Money.make(250n, "ARS"))
    expect(customer.contact?.email).toBe("ana@example.com")

    yield* customers.update(customer)
    const customerDoc = docOf(
      yield* sql<{ doc: unknown }>`SELECT doc FROM cobro_customers WHERE customer_id = 'cust_old'`
    )
    expect(customerDoc.v).toBe(1)
    expect(customerDoc.balance).toBe(0)
    expect(Option.getOrThrow(yield* customers.findById(customer.user_id, customer.customer_id))).toEqual(
      customer
    )
  }).pipe(Effect.provide(backend.storage()))

describe("stored documents: versioned storage shapes", () => {
  it.effect("on SQLite", () => versions(sqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => versions(postgres), 60_000)
})
