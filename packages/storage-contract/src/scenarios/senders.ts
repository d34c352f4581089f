/**
 * What a bank says is checked like what a client says: a transfer whose
 * sender the bank reports with a bad CBU/CVU or CUIT is credited (the money arrived) and shows
 * it (`sender_problems`, stored with the payment's or the customer's transaction), a refund to
 * it is refused before anything is written, and an amount above the maximum is a typed refusal
 * that writes nothing.
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  Customer,
  Customers,
  Money,
  Outbox,
  Payments,
  Refunds,
  Transfers,
  User
} from "@cobro/core"
import { LedgerRepository, TransferRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Effect, Either, Option, Schema } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1 } from "./fixtures.js"
import { refundReq, senderCbu, senderCuit } from "./refunds/index.js"

/** `senderCuit` with its check digit changed. */
const badCuit = `${senderCuit.slice(0, 10)}${(Number(senderCuit[10]) + 1) % 10}`

const payFrom = (cvu: BankAccount.Cvu, minor: bigint, account: string, cuit: string) =>
  Effect.gen(function* () {
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu,
      amount: ars(minor),
      senderAccount: account,
      senderCuit: cuit
    })
    return { transfer, outcome: yield* (yield* Transfers.Transfers).ingest(transfer) }
  })

const entries = Effect.flatMap(LedgerRepository.LedgerRepository, (r) =>
  Effect.map(r.entries(0, 100_000), (es) => es.length)
)
const events = Effect.flatMap(Outbox.Outbox, (o) => Effect.map(o.list(0, 10_000), (es) => es.length))
const books = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)

export const senderScenarios: ReadonlyArray<Scenario> = [
  {
    name: 'senders: a transfer from sender CBU "123" or a bad CUIT is credited and flagged; a refund to it writes nothing',
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const refunds = yield* Refunds.Refunds
      const short = yield* payments.create(createRequest({ external_id: "o-123" }))
      const paid = yield* payFrom(short.cvu, 150000n, "123", senderCuit)
      expect(paid.outcome._tag).toBe("Credited")
      // Read back from storage: credited, and the problem kept with the transaction.
      const payment = yield* payments.get(u1, short.id)
      expect(payment.payment_status).toBe("SUCCESS")
      expect(payment.transactions[0]!.sender_problems).toEqual([
        new BankAccount.SenderProblem({ field: "sender_address", reason: "must be 22 digits, got 3" })
      ])
      const cuit = yield* payments.create(createRequest({ external_id: "o-cuit" }))
      yield* payFrom(cuit.cvu, 150000n, senderCbu, badCuit)
      const byCuit = yield* payments.get(u1, cuit.id)
      expect(byCuit.transactions[0]!.sender_problems).toEqual([
        new BankAccount.SenderProblem({
          field: "sender_cuit",
          reason: "has a wrong check digit (the last digit): a digit is probably mistyped"
        })
      ])
      // A valid sender: no problems (omitted on the wire).
      const fine = yield* payments.create(createRequest({ external_id: "o-fine" }))
      yield* payFrom(fine.cvu, 150000n, senderCbu, senderCuit)
      expect((yield* payments.get(u1, fine.id)).transactions[0]!.sender_problems).toBeNull()

      // A refund to either is refused up front and writes nothing, with money to pay it.
      const snapshot = Effect.all([entries, events, books])
      const before = yield* snapshot
      for (const id of [short.id, cuit.id]) {
        for (const request of [
          refundReq({ refund_type: "FULL" }),
          refundReq({ refund_type: "PARTIAL", amount: "10.00" })
        ]) {
          const refused = yield* Effect.flip(refunds.create(u1, id, request))
          expect(refused).toMatchObject({ _tag: "Conflict", key: "refund.sender.invalid" })
        }
        expect(yield* refunds.list(u1, id)).toEqual([])
      }
      const refused = yield* Effect.flip(refunds.create(u1, short.id, refundReq({ refund_type: "FULL" })))
      expect(refused.message).toContain('account "123" must be 22 digits, got 3')
      expect(yield* snapshot).toEqual(before)
      yield* expectLedgerOk
    })
  },
  {
    name: "senders: a fixed customer's transaction from a bad sender is credited and flagged",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const customers = yield* Customers.Customers
      const created = yield* customers.create(
        u1,
        Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
          user_id: u1,
          alias: ".juan",
          customer_id: "20123456",
          name: "Juan Pérez"
        })
      )
      // A CBU with a wrong second check digit.
      const wrong = `${senderCbu.slice(0, 21)}${(Number(senderCbu[21]) + 1) % 10}`
      const paid = yield* payFrom(created.bank_info.cvu, 50000n, wrong, "20-30111222")
      expect(paid.outcome._tag).toBe("Credited")
      const page = yield* customers.listTransactions(u1, created.customer_id, Option.none())
      expect(page.items[0]!.sender_problems).toEqual([
        new BankAccount.SenderProblem({
          field: "sender_address",
          reason: "has a wrong check digit in its second block (the last digit)"
        }),
        new BankAccount.SenderProblem({
          field: "sender_cuit",
          reason: 'must be 11 digits; "-" is not a digit'
        })
      ])
      expect((yield* customers.get(u1, created.customer_id)).balance).toEqual(ars(49395n))
      yield* expectLedgerOk
    })
  },
  {
    name: "senders: an amount above the maximum (1e17 pesos) is a typed refusal, alone or in a batch, and writes nothing",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const transfers = yield* Transfers.Transfers
      const log = yield* TransferRepository.TransferRepository
      const bank = yield* SandboxBank.SandboxBank
      const created = yield* payments.create(createRequest({ external_id: "o-huge" }))
      const huge = yield* bank.simulateIncoming({
        cvu: created.cvu,
        // As a bank adapter parses a JSON number: exact, and unbounded.
        amount: Either.getOrThrow(Money.fromNumber(1e17, "ARS")),
        senderAccount: senderCbu,
        senderCuit
      })
      expect(huge.amount.minor).toBe(10n ** 19n)
      const snapshot = Effect.all([entries, events])
      const before = yield* snapshot
      const refusedAlone = yield* Effect.flip(transfers.ingest(huge))
      expect(refusedAlone).toMatchObject({
        _tag: "InvalidInput",
        key: "transfer.amount.above_maximum",
        field: "amount"
      })
      expect(refusedAlone.message).toContain("99999999999.99")
      // In a batch, only that one is refused.
      const fine = yield* bank.simulateIncoming({ cvu: created.cvu, amount: ars(150000n) })
      const outcomes = yield* transfers.ingestAll([huge, fine])
      expect(Either.isLeft(outcomes[0]!) && outcomes[0].left.key).toBe("transfer.amount.above_maximum")
      expect(Either.isRight(outcomes[1]!) && outcomes[1].right._tag).toBe("Credited")
      expect(yield* Effect.flip(transfers.ingestFor(u1, huge))).toMatchObject({
        key: "transfer.amount.above_maximum"
      })
      expect(yield* log.findById(huge.bank_transaction_id)).toEqual(Option.none())
      const [entriesBefore, eventsBefore] = before
      // Only the fine transfer's entry and event.
      expect(yield* snapshot).toEqual([entriesBefore + 1, eventsBefore + 1])
      expect((yield* payments.get(u1, created.id)).transactions).toHaveLength(1)
      yield* expectLedgerOk
    })
  }
]
