import { describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Effect, Schema, Stream, TestClock } from "effect"
import { BankAccount, Ids, Money, Payment, Payments } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createRequest, events, expectLedgerOk, seedUser } from "./fixtures.js"

const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")
const noon = Date.UTC(2026, 10, 20, 12, 0, 0)

describe("Payments.create", () => {
  it.effect("creates a PENDING payment with a dedicated valid CVU and alias, a URL and a 5-day expiry", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* TestClock.setTime(noon)
        const p = yield* (yield* Payments.Payments).create(
          createRequest({ external_id: "order-1", motive: "Pedido 1" })
        )
        expect(p.id).toBe("VAR-u1-order-1")
        expect(p.payment_status).toBe("PENDING")
        expect(p.price).toEqual(Money.make(150000n, "ARS"))
        expect(BankAccount.isValidCvu(p.quotes[0]!.address)).toBe(true)
        expect(BankAccount.isValidAlias(p.quotes[0]!.alias)).toBe(true)
        expect(p.payment_url).toBe("http://localhost:3000/pay/VAR-u1-order-1")
        expect(p.transactions).toEqual([])
        expect(p.transaction_fields).toBeUndefined()

        const wire = yield* Schema.encode(Payment.Payment)(p)
        expect(wire.price).toEqual({ amount: 1500, currency: "ARS" })
        expect(wire.quotes[0]).toMatchObject({
          amount: "1500.00",
          amountReadable: "$ 1.500,00",
          currency: "ARS"
        })
        expect(wire.expiration_timestamp).toBe("2026-11-25T12:00:00.000Z")
        expect(wire.creation_timestamp).toBe("2026-11-20T12:00:00.000Z")
        expect(wire.motive).toBe("Pedido 1")
        expect(wire.metadata).toEqual({ motive: [] })
      })
    )
  )

  it.effect("generates an external id when none is given and every payment gets its own CVU", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const created = yield* Effect.all(Array.from({ length: 20 }, () => payments.create(createRequest())))
        expect(new Set(created.map((p) => p.id)).size).toBe(20)
        expect(new Set(created.map((p) => p.cvu)).size).toBe(20)
        for (const p of created) expect(p.id).toBe(`VAR-u1-${p.external_id}`)
      })
    )
  )

  it.effect(
    "repeating a create with the same body returns the same payment; a different body is a conflict",
    () =>
      withEngine(
        Effect.gen(function* () {
          yield* seedUser()
          const payments = yield* Payments.Payments
          const first = yield* payments.create(createRequest({ external_id: "o-1", motive: "a" }))
          const again = yield* payments.create(createRequest({ external_id: "o-1", motive: "a" }))
          expect(again).toEqual(first)
          const conflict = yield* Effect.flip(
            payments.create(createRequest({ external_id: "o-1", motive: "b" }))
          )
          expect(conflict).toMatchObject({ _tag: "Conflict", key: "payment.external_id.conflict" })
        })
      )
  )

  it.effect("concurrent identical creates produce one payment and give back the spare CVUs", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const results = yield* Effect.all(
          Array.from({ length: 10 }, () => payments.create(createRequest({ external_id: "race" }))),
          { concurrency: "unbounded" }
        )
        expect(new Set(results.map((p) => p.cvu)).size).toBe(1)
      })
    )
  )

  it.effect("the deprecated crypto and PIX methods are unavailable; unknown options are invalid", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        for (const method of ["crypto", "pix", "PIX"]) {
          const e = yield* Effect.flip(
            payments.create(createRequest({ payment_options: ["transfer", method] }))
          )
          expect(e).toMatchObject({ _tag: "Discontinued", key: "payment.method.deprecated" })
        }
        const e = yield* Effect.flip(payments.create(createRequest({ payment_options: ["cash"] })))
        expect(e).toMatchObject({ _tag: "InvalidInput", field: "payment_options" })
      })
    )
  )

  it("rejects bad input at decoding: non-positive price, too many decimals, bad external id, bad URL", () => {
    const decode = Schema.decodeUnknownEither(Payment.Payment.fields.price)
    expect(decode({ amount: 10.5, currency: "ARS" })._tag).toBe("Right")
    for (const fields of [
      { price: { amount: 0, currency: "ARS" } },
      { price: { amount: -5, currency: "ARS" } },
      { price: { amount: 10.123, currency: "ARS" } },
      { price: { amount: 10, currency: "EUR" } },
      { external_id: "has space" },
      { external_id: "x".repeat(65) },
      { webhook_url: "ftp://example.com" },
      { payment_options: [] }
    ]) {
      expect(() => createRequest(fields), JSON.stringify(fields)).toThrow()
    }
  })

  it.effect("quotes a USDT, BRL or BNB price in ARS at the exchange rate", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const usdt = yield* payments.create(createRequest({ price: { amount: 10.5, currency: "USDT" } }))
        expect(usdt.price).toEqual(Money.make(10_500_000n, "USDT"))
        expect(usdt.quoteAmount).toEqual(Money.make(1_260_000n, "ARS")) // 10.5 × 1200
        const bnb = yield* payments.create(createRequest({ price: { amount: 0.00012345, currency: "BNB" } }))
        expect(bnb.quoteAmount).toEqual(Money.make(9876n, "ARS")) // 0.00012345 × 800000 = 98.76
        const brl = yield* payments.create(createRequest({ price: { amount: 1.01, currency: "BRL" } }))
        expect(brl.quoteAmount).toEqual(Money.make(22220n, "ARS"))
      })
    )
  )

  it.effect("needs an existing, active merchant", () =>
    withEngine(
      Effect.gen(function* () {
        const payments = yield* Payments.Payments
        expect(yield* Effect.flip(payments.create(createRequest()))).toMatchObject({ key: "user.not.found" })
        yield* seedUser({ account_status: "PENDING" })
        expect(yield* Effect.flip(payments.create(createRequest()))).toMatchObject({
          _tag: "NotPermitted",
          key: "account.not.active"
        })
      })
    )
  )

  it.effect("with automatic cancellation the minutes setting wins over hours, else hours, else 5 days", () =>
    withEngine(
      Effect.gen(function* () {
        yield* TestClock.setTime(noon)
        const payments = yield* Payments.Payments
        const expiry = (p: Payment.Payment) => DateTime.toEpochMillis(p.expiration_timestamp) - noon
        yield* seedUser({
          automatic_cancellation: true,
          cancellation_period: 2,
          cancellation_period_minutes: 30
        })
        yield* seedUser({
          user_id: u2,
          email: "dos@example.com",
          automatic_cancellation: true,
          cancellation_period: 2,
          cancellation_period_minutes: null
        })
        yield* seedUser({
          user_id: Ids.UserId.make("u3"),
          email: "tres@example.com",
          automatic_cancellation: false,
          cancellation_period_minutes: 30
        })
        expect(expiry(yield* payments.create(createRequest()))).toBe(30 * 60_000)
        expect(expiry(yield* payments.create(createRequest({ user_id: "u2" })))).toBe(2 * 3_600_000)
        expect(expiry(yield* payments.create(createRequest({ user_id: "u3" })))).toBe(5 * 86_400_000)
      })
    )
  )
})

describe("Payments reads", () => {
  it.effect("get is scoped to the owner; the public view has what the payer's page needs", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* seedUser({ user_id: u2, email: "dos@example.com" })
        const payments = yield* Payments.Payments
        const p = yield* payments.create(createRequest({ motive: "Cuota" }))
        expect((yield* payments.get(u1, p.id)).id).toBe(p.id)
        expect(yield* Effect.flip(payments.get(u2, p.id))).toMatchObject({
          _tag: "NotFound",
          key: "payment.not.found"
        })
        const pub = yield* Schema.encode(Payment.PublicPayment)(yield* payments.getPublic(p.id))
        expect(pub).toEqual({
          id: p.id,
          payment_status: "PENDING",
          price: { amount: 1500, currency: "ARS" },
          quotes: [expect.objectContaining({ address: p.cvu, alias: p.quotes[0]!.alias, amount: "1500.00" })],
          expiration_timestamp: DateTime.formatIso(p.expiration_timestamp),
          motive: "Cuota",
          merchant_name: "Tienda Uno"
        })
      })
    )
  )

  it.effect("lists a user's payments oldest first, filtered by team and dates", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* seedUser({ user_id: u2, email: "dos@example.com" })
        const payments = yield* Payments.Payments
        yield* TestClock.setTime(noon)
        const ids: Array<string> = []
        for (let i = 0; i < 450; i++) {
          const p = yield* payments.create(
            createRequest({ external_id: `p${i}`, ...(i % 3 === 0 ? { team_id: "t1" } : {}) })
          )
          ids.push(p.id)
          yield* TestClock.adjust("1 minute")
        }
        yield* payments.create(createRequest({ user_id: "u2" }))
        const all = Chunk.toReadonlyArray(yield* Stream.runCollect(payments.list(u1, { user_id: u1 })))
        expect(all.map((p) => p.id)).toEqual(ids)
        const team = yield* Stream.runCollect(
          payments.list(u1, { user_id: u1, team_id: Ids.TeamId.make("t1") })
        )
        expect(Chunk.size(team)).toBe(150)
        const window = yield* Stream.runCollect(
          payments.list(u1, {
            user_id: u1,
            start_date: DateTime.unsafeMake(noon + 10 * 60_000),
            end_date: DateTime.unsafeMake(noon + 19 * 60_000)
          })
        )
        expect(Chunk.toReadonlyArray(window).map((p) => p.external_id)).toEqual(
          Array.from({ length: 10 }, (_, i) => `p${i + 10}`)
        )
        const other = yield* Effect.flip(Stream.runCollect(payments.list(u2, { user_id: u1 })))
        expect(other).toMatchObject({ _tag: "NotFound" })
      })
    )
  )
})

describe("Payments changes", () => {
  it.effect("extends the expiry of a PENDING payment to a later time only", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* TestClock.setTime(noon)
        const payments = yield* Payments.Payments
        const p = yield* payments.create(createRequest())
        const later = DateTime.add(p.expiration_timestamp, { days: 2 })
        const extended = yield* payments.extendExpiration(u1, p.id, { expiration_timestamp: later })
        expect(extended.expiration_timestamp).toEqual(later)
        expect((yield* payments.get(u1, p.id)).expiration_timestamp).toEqual(later)
        const earlier = yield* Effect.flip(
          payments.extendExpiration(u1, p.id, { expiration_timestamp: DateTime.unsafeMake(noon + 1000) })
        )
        expect(earlier).toMatchObject({ _tag: "InvalidInput", field: "expiration_timestamp" })
        expect(
          yield* Effect.flip(payments.extendExpiration(u2, p.id, { expiration_timestamp: later }))
        ).toMatchObject({ _tag: "NotFound" })
      })
    )
  )

  it.effect("keeps a permanent motive history; only the owner may change it", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* seedUser({ user_id: u2, email: "dos@example.com" })
        yield* TestClock.setTime(noon)
        const payments = yield* Payments.Payments
        const p = yield* payments.create(createRequest({ motive: "uno" }))
        yield* TestClock.adjust("1 minute")
        yield* payments.updateMotive(u1, p.id, "dos")
        yield* TestClock.adjust("1 minute")
        const updated = yield* payments.updateMotive(u1, p.id, "tres")
        expect(updated.motive).toBe("tres")
        const history = (yield* Schema.encode(Payment.Payment)(yield* payments.get(u1, p.id))).metadata.motive
        expect(history).toEqual([
          {
            value: "dos",
            previous: "uno",
            modified_by: "u1",
            modification_timestamp: "2026-11-20T12:01:00.000Z"
          },
          {
            value: "tres",
            previous: "dos",
            modified_by: "u1",
            modification_timestamp: "2026-11-20T12:02:00.000Z"
          }
        ])
        const denied = yield* Effect.flip(payments.updateMotive(u2, p.id, "hack"))
        expect(denied).toMatchObject({ _tag: "NotPermitted", key: "payment.metadata.forbidden" })
        expect((yield* payments.get(u1, p.id)).metadata.motive).toHaveLength(2)
        expect(yield* events).toEqual([])
      })
    )
  )

  it.effect("repricing a PENDING payment updates price and quote, with no event", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const p = yield* payments.create(createRequest({ price: { amount: 10, currency: "USDT" } }))
        const repriced = yield* payments.reprice(u1, p.id, { currency: "ARS", amount: 2000.5 })
        expect(repriced.payment_status).toBe("PENDING")
        expect(repriced.price).toEqual(Money.make(200050n, "ARS"))
        expect((yield* Schema.encode(Payment.Payment)(repriced)).quotes[0]!.amount).toBe("2000.50")
        expect(yield* events).toEqual([])
        const bad = yield* Effect.flip(payments.reprice(u1, p.id, { currency: "ARS", amount: 0 }))
        expect(bad).toMatchObject({ _tag: "InvalidInput", field: "amount" })
        yield* expectLedgerOk
      })
    )
  )
})
