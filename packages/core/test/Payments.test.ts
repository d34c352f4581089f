import { describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Duration, Effect, Exit, Option, Stream, TestClock } from "effect"
import {
  BankAccount,
  Engine,
  Ids,
  Ledger,
  LedgerAccount,
  Payment,
  PaymentRequest,
  Payments,
  SandboxBank,
  Transfers
} from "../src/index.js"
import { ars, createRequest, events, expectLedgerOk, seedUser } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Engine.layerMemory())

const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")

const pay = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.gen(function* () {
    const bank = yield* SandboxBank.SandboxBank
    const transfers = yield* Transfers.Transfers
    const transfer = yield* bank.simulateIncoming({ cvu, amount: ars(amount) })
    return yield* transfers.ingest(transfer)
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.match(exit, { onFailure: (c) => Option.getOrUndefined(Chunk.head(Chunk.fromIterable(causeFailures(c)))), onSuccess: () => undefined })
const causeFailures = <E>(cause: import("effect").Cause.Cause<E>) =>
  Chunk.toReadonlyArray(Chunk.fromIterable(import_cause_failures(cause)))
import { Cause } from "effect"
const import_cause_failures = <E>(cause: Cause.Cause<E>) => Cause.failures(cause)

describe("Payments.create", () => {
  it.effect("creates a PENDING payment with a dedicated valid CVU, alias, URL and 5-day expiry", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 0))
        const payments = yield* Payments.Payments
        const p = yield* payments.create(createRequest({ external_id: "order-1", motive: "Pedido 1" }))
        expect(p.id).toBe("VAR-u1-order-1")
        expect(p.payment_status).toBe("PENDING")
        expect(p.price.minor).toBe(150000n)
        expect(p.quotes).toHaveLength(1)
        expect(BankAccount.isValidCvu(p.quotes[0]!.address)).toBe(true)
        expect(BankAccount.isValidAlias(p.quotes[0]!.alias)).toBe(true)
        expect(p.payment_url).toBe("http://localhost:3000/pay/VAR-u1-order-1")
        expect(DateTime.formatIso(p.expiration_timestamp)).toBe("2026-11-25T12:00:00.000Z")
        expect(p.transactions).toEqual([])
        expect(p.transaction_fields).toBeUndefined()

        const wire = Payment.Payment.make(p).constructor === Payment.Payment
        expect(wire).toBe(true)
        const encoded = (yield* import_encode(p)) as Record<string, unknown>
        expect(encoded["price"]).toEqual({ amount: 1500, currency: "ARS" })
        expect((encoded["quotes"] as Array<Record<string, unknown>>)[0]!["amount"]).toBe("1500.00")
        expect(encoded["creation_timestamp"]).toBe("2026-11-20T12:00:00.000Z")
      })
    )
  )
})

import { Schema } from "effect"
const import_encode = (p: Payment.Payment) => Schema.encode(Payment.Payment)(p)

export const _keep = [Duration, Stream, Ledger, LedgerAccount, PaymentRequest, u2, u1, pay, failureOf, events, expectLedgerOk]
