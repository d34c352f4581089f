import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Schema, TestClock } from "effect"
import {
  BankAccount,
  BankProvider,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Payment,
  Payments,
  Transfers
} from "../src/index.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import {
  ars,
  available,
  events,
  expectLedgerOk,
  newPayment,
  reload,
  seedUser,
  transfer,
  u1
} from "./fixtures.js"

const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const pay = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.flatMap(transfer(cvu, amount), (t) => Effect.flatMap(Transfers.Transfers, (s) => s.ingest(t)))

describe("Transfers.ingest into a payment", () => {
  it.effect(
    "the exact amount makes it SUCCESS, with the SPEC transaction, fees, ledger entry and event",
    () =>
      withEngine(
        Effect.gen(function* () {
          const user = yield* seedUser()
          yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12))
          const p = yield* newPayment({ webhook_url: "https://shop.example/hook" })
          yield* TestClock.adjust("10 minutes")
          const t = yield* transfer(p.cvu, "1500")
          const outcome = yield* (yield* Transfers.Transfers).ingest(t)
          expect(outcome).toEqual({ _tag: "Credited", target: "payment", target_id: p.id })

          const paid = yield* reload(p)
          expect(paid.payment_status).toBe("SUCCESS")
          const wire = yield* Schema.encode(Payment.Payment)(paid)
          // 1 % commission = 15.00; IVA 21 % on it = 3.15; credited 1500 − 15 − 3.15 = 1481.85
          expect(wire.transactions).toEqual([
            {
              address: p.cvu,
              amount: "1500.00",
              commission: 0.01,
              commission_amount: "15.00",
              commission_taxes: [{ tax_amount: 3.15, tax_rate: 0.21, tax_type: "IVA" }],
              commission_tax_amount: "3.15",
              creation_timestamp: "2026-11-20T12:10:00.000Z",
              credited_amount: "1481.85",
              currency: "ARS",
              network: "CVU",
              sender_address: t.sender_account,
              taxes: [],
              tax_amount: "0.00",
              transaction_status: "PROCESSED",
              transaction_data: {
                PROCESSED: {
                  amount: 1500,
                  currency: "ARS",
                  recipient: p.cvu,
                  recipientCuit: user.cuit,
                  recipientTitular: "Tienda Uno",
                  sender: t.sender_account,
                  senderCuit: t.sender_cuit,
                  senderTitular: t.sender_name,
                  trxId: t.bank_transaction_id
                }
              }
            }
          ])
          expect(wire.transaction_fields).toEqual({
            amount: "1500.00",
            amountReadable: "$ 1.500,00",
            commission_amount: "15.00",
            credited_amount: "1481.85",
            currency: "ARS",
            network: "CVU",
            total_paid: { amount: "1500.00", currency: "ARS" }
          })
          expect(yield* available).toEqual(ars("1481.85"))
          const ledger = yield* Ledger.Ledger
          expect(yield* ledger.balance(LedgerAccount.platformCommission)).toEqual(ars("15"))
          expect(yield* ledger.balance(LedgerAccount.platformTax("IVA"))).toEqual(ars("3.15"))
          expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(ars("1500"))
          const [event, ...rest] = yield* events
          expect(rest).toEqual([])
          expect(event).toMatchObject({
            type: "payment.updated",
            user_id: u1,
            webhook_url: "https://shop.example/hook",
            payload: { message: "Payment updated", paymentId: p.id, externalId: p.external_id }
          })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("more than the price is OVERPAID, less is UNDERPAID", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const over = yield* newPayment()
        yield* pay(over.cvu, "1500.01")
        expect((yield* reload(over)).payment_status).toBe("OVERPAID")
        const under = yield* newPayment()
        yield* pay(under.cvu, "1499.99")
        expect((yield* reload(under)).payment_status).toBe("UNDERPAID")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("the account's transfer tolerance counts as paid on either side, and no further", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser({ transfer_tolerance: ars("5") })
        const cases: Array<[string, Payment.PaymentStatus]> = [
          ["1495", "SUCCESS"],
          ["1505", "SUCCESS"],
          ["1494.99", "UNDERPAID"],
          ["1505.01", "OVERPAID"]
        ]
        for (const [amount, status] of cases) {
          const p = yield* newPayment()
          yield* pay(p.cvu, amount)
          expect((yield* reload(p)).payment_status, amount).toBe(status)
        }
        yield* expectLedgerOk
      })
    )
  )

  it.effect("several partial transfers add up and the state is recalculated each time", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* pay(p.cvu, "500")
        expect((yield* reload(p)).payment_status).toBe("UNDERPAID")
        yield* pay(p.cvu, "1000")
        expect((yield* reload(p)).payment_status).toBe("SUCCESS")
        yield* pay(p.cvu, "0.50")
        const final = yield* reload(p)
        expect(final.payment_status).toBe("OVERPAID")
        expect(final.transactions).toHaveLength(3)
        expect(final.transaction_fields?.total_paid.amount).toEqual(ars("1500.50"))
        expect(yield* events).toHaveLength(3)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a duplicate bank notification is credited once", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        const t = yield* transfer(p.cvu, "1500")
        const transfers = yield* Transfers.Transfers
        yield* transfers.ingest(t)
        const again = yield* transfers.ingest(t)
        expect(again._tag).toBe("Duplicate")
        const concurrent = yield* Effect.all([transfers.ingest(t), transfers.ingest(t)], { concurrency: 2 })
        expect(concurrent.map((o) => o._tag)).toEqual(["Duplicate", "Duplicate"])
        expect((yield* reload(p)).transactions).toHaveLength(1)
        expect(yield* available).toEqual(ars("1481.85"))
        expect(yield* events).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("concurrent transfers to one payment lose no update", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment({ price: { amount: 100, currency: "ARS" } })
        const transfers = yield* Effect.all(Array.from({ length: 100 }, () => transfer(p.cvu, "1")))
        const ingest = (yield* Transfers.Transfers).ingest
        yield* Effect.all(transfers.map(ingest), { concurrency: "unbounded" })
        const final = yield* reload(p)
        expect(final.transactions).toHaveLength(100)
        expect(final.payment_status).toBe("SUCCESS")
        expect(final.totalReceived).toEqual(ars("100"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a failed unit of work leaves no trace", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        const bank = yield* SandboxBank.SandboxBank
        // A transfer to an expired CVU must be returned; if the bank cannot return it, nothing is kept.
        yield* TestClock.adjust("6 days")
        const t = yield* bank.simulateIncoming({ cvu: p.cvu, amount: ars("10") })
        const foreign = yield* bank.simulateIncoming({ cvu: p.cvu, amount: ars("10") })
        const fake = new BankProvider.IncomingTransfer({
          ...foreign,
          bank_transaction_id: Ids.BankTransactionId.make("not-from-this-bank")
        })
        const failed = yield* Effect.flip((yield* Transfers.Transfers).ingest(fake))
        expect(failed).toMatchObject({ _tag: "ProviderFailure" })
        const ledger = yield* Ledger.Ledger
        expect((yield* ledger.verify()).entries).toBe(0)
        expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(Money.zero("ARS"))
        // The bank retries the notification later and it goes through.
        expect((yield* (yield* Transfers.Transfers).ingest(t))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )
})

describe("expiry and late transfers", () => {
  it.effect(
    "at its expiry a PENDING payment becomes EXPIRED, its CVU is released and an event is written",
    () =>
      withEngine(
        Effect.gen(function* () {
          yield* seedUser()
          const p = yield* newPayment()
          const jobs = yield* Jobs.Jobs
          const bank = yield* SandboxBank.SandboxBank
          const expiry = DateTime.toEpochMillis(p.expiration_timestamp)
          yield* TestClock.setTime(expiry - 1)
          expect(yield* jobs.runDue()).toMatchObject({ expired: 0, released: 0 })
          expect((yield* reload(p)).payment_status).toBe("PENDING")
          yield* TestClock.setTime(expiry)
          const reports = yield* Effect.all([jobs.runDue(), jobs.runDue(), jobs.runDue()], {
            concurrency: "unbounded"
          })
          expect(reports.reduce((n, r) => n + r.expired, 0)).toBe(1)
          expect((yield* reload(p)).payment_status).toBe("EXPIRED")
          expect(yield* bank.isOpen(p.cvu)).toBe(false)
          expect((yield* events).map((e) => e.type)).toEqual(["payment.updated"])
          expect(yield* jobs.runDue()).toMatchObject({ expired: 0, released: 0 })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("a late transfer to an expired CVU is recorded and returned, never credited", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        yield* (yield* Jobs.Jobs).runDue()
        const t = yield* transfer(p.cvu, "1500")
        const outcome = yield* (yield* Transfers.Transfers).ingest(t)
        expect(outcome._tag).toBe("Bounced")
        expect((yield* reload(p)).transactions).toEqual([])
        expect(yield* available).toEqual(Money.zero("ARS"))
        const returned = yield* (yield* SandboxBank.SandboxBank).returnedTransfers
        expect(returned.map((r) => r.bank_transaction_id)).toEqual([t.bank_transaction_id])
        expect(yield* (yield* Ledger.Ledger).balance(LedgerAccount.bouncedTransfers)).toEqual(
          Money.zero("ARS")
        )
        expect((yield* (yield* Transfers.Transfers).ingest(t))._tag).toBe("Duplicate")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a transfer after the expiry time bounces even before the job has run", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        expect((yield* pay(p.cvu, "1500"))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a paid payment keeps its state at expiry, but its CVU is released", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const p = yield* newPayment()
        yield* pay(p.cvu, "1500")
        yield* TestClock.adjust("5 days")
        expect(yield* (yield* Jobs.Jobs).runDue()).toMatchObject({ expired: 0, released: 1 })
        const closed = yield* reload(p)
        expect(closed.payment_status).toBe("SUCCESS")
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(p.cvu)).toBe(false)
        expect((yield* pay(p.cvu, "10"))._tag).toBe("Bounced")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an extended payment does not expire at its old time; expired ones cannot be extended", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const jobs = yield* Jobs.Jobs
        const p = yield* newPayment()
        yield* payments.extendExpiration(u1, p.id, {
          expiration_timestamp: DateTime.add(p.expiration_timestamp, { days: 1 })
        })
        yield* TestClock.adjust("5 days")
        yield* jobs.runDue()
        expect((yield* reload(p)).payment_status).toBe("PENDING")
        expect((yield* pay(p.cvu, "1500"))._tag).toBe("Credited")
        const q = yield* newPayment()
        yield* TestClock.adjust("5 days")
        const late = yield* Effect.flip(
          payments.extendExpiration(u1, q.id, {
            expiration_timestamp: DateTime.add(q.expiration_timestamp, { days: 1 })
          })
        )
        expect(late).toMatchObject({ _tag: "Conflict", key: "payment.not.pending" })
        const paid = yield* Effect.flip(
          payments.extendExpiration(u1, p.id, {
            expiration_timestamp: DateTime.add(p.expiration_timestamp, { days: 9 })
          })
        )
        expect(paid).toMatchObject({ _tag: "Conflict" })
        yield* expectLedgerOk
      })
    )
  )
})

describe("repricing a paid payment", () => {
  it.effect("recalculates the state against the new price and writes an event each time", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const p = yield* newPayment()
        yield* pay(p.cvu, "1500")
        const cases: Array<[number, Payment.PaymentStatus]> = [
          [1400, "OVERPAID"],
          [1600, "UNDERPAID"],
          [1500, "SUCCESS"],
          [1500, "SUCCESS"]
        ]
        for (const [amount, status] of cases) {
          const r = yield* payments.reprice(u1, p.id, { currency: "ARS", amount })
          expect(r.payment_status).toBe(status)
          expect(r.transaction_fields?.amount).toEqual(ars(String(amount)))
        }
        expect(yield* events).toHaveLength(1 + cases.length)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an EXPIRED payment cannot be repriced", () =>
    withEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const payments = yield* Payments.Payments
        const p = yield* newPayment()
        yield* TestClock.adjust("5 days")
        const beforeJob = yield* Effect.flip(payments.reprice(u1, p.id, { currency: "ARS", amount: 10 }))
        expect(beforeJob).toMatchObject({ _tag: "Conflict", key: "payment.expired" })
        yield* (yield* Jobs.Jobs).runDue()
        const afterJob = yield* Effect.flip(payments.reprice(u1, p.id, { currency: "ARS", amount: 10 }))
        expect(afterJob).toMatchObject({ _tag: "Conflict", key: "payment.expired" })
        expect((yield* reload(p)).price).toEqual(ars("1500"))
      })
    )
  )
})
