/**
 * The money reads over every backend: a customer's transactions and a merchant's payouts
 * (schedule sweeps and split payouts merged) in keyset pages, newest first, with ties on the
 * creation time broken by id; and the merchant's balance by currency.
 */
import { expect } from "@effect/vitest"
import {
  Balances,
  BankAccount,
  Customer,
  Customers,
  Errors,
  Ids,
  type MerchantMoney,
  Page,
  Schedules,
  Transfers,
  User
} from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import type { EngineContext, Scenario } from "../Scenario.js"
import { ars, expectLedgerOk, runDue, seedUser, u1, u2 } from "./fixtures.js"
import { asPartner, createReq, fund as fundMerchant, p1, setup, toNextRun } from "./schedules/helpers.js"
import {
  activeAccounts,
  createSplit,
  fund as fundSplit,
  HOLD,
  instruct,
  registerPayee
} from "./splits/helpers.js"

/** Every page of `read`, `limit` at a time, following `next` to the end. */
const allPages = <A>(
  read: (before: Option.Option<Page.Cursor>) => Effect.Effect<Page.Page<A>, unknown, EngineContext>
) =>
  Effect.gen(function* () {
    const pages: Array<ReadonlyArray<A>> = []
    let before = Option.none<Page.Cursor>()
    for (let i = 0; i < 100; i++) {
      const page = yield* read(before)
      pages.push(page.items)
      if (Option.isNone(page.next)) return pages
      before = page.next
    }
    return yield* Effect.dieMessage("more than 100 pages")
  })

const position = (created: DateTime.Utc, id: string): Page.Cursor => ({ creation_timestamp: created, id })

export const moneyReadScenarios: ReadonlyArray<Scenario> = [
  {
    name: "customer transactions: keyset pages newest first, ties on time by id, only the customer's own",
    run: Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2026, 2, 1, 12))
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      yield* seedUser({ user_id: u2, email: "dos@example.com", alias_prefix: User.AliasPrefix.make("otra") })
      const customers = yield* Customers.Customers
      const create = (owner: Ids.UserId, id: string, alias: string) =>
        customers.create(
          owner,
          Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
            user_id: owner,
            alias,
            customer_id: id,
            name: "Juan Pérez"
          })
        )
      const juan = yield* create(u1, "20123456", ".juan")
      const ana = yield* create(u1, "27333444", ".ana")
      const bank = yield* SandboxBank.SandboxBank
      const transfers = yield* Transfers.Transfers
      const pay = (cvu: BankAccount.Cvu, minor: bigint) =>
        Effect.flatMap(bank.simulateIncoming({ cvu, amount: ars(minor) }), transfers.ingest)
      // Three at one instant (ties), then two a second apart; Ana's in between.
      for (const minor of [10000n, 20000n, 30000n]) yield* pay(juan.bank_info.cvu, minor)
      yield* pay(ana.bank_info.cvu, 99900n)
      yield* TestClock.adjust("1 second")
      yield* pay(juan.bank_info.cvu, 40000n)
      yield* TestClock.adjust("1 second")
      yield* pay(juan.bank_info.cvu, 50000n)

      const list = (limit: number) => (before: Option.Option<Page.Cursor>) =>
        customers.listTransactions(u1, Customer.CustomerId.make("20123456"), before, limit)
      const one = yield* allPages(list(100))
      expect(one).toHaveLength(1)
      const all = one[0]!
      expect(all.slice(0, 2).map((t) => t.amount.minor)).toEqual([50000n, 40000n])
      const expected = [...all].sort((a, b) =>
        Page.newestFirst(
          position(a.creation_timestamp, a.transaction_id),
          position(b.creation_timestamp, b.transaction_id)
        )
      )
      expect(all.map((t) => t.transaction_id)).toEqual(expected.map((t) => t.transaction_id))
      expect(new Set(all.slice(2).map((t) => t.amount.minor))).toEqual(new Set([10000n, 20000n, 30000n]))
      expect(all.every((t) => t.customer_id === juan.customer_id)).toBe(true)

      for (const limit of [1, 2, 4]) {
        const pages = yield* allPages(list(limit))
        expect(pages.map((p) => p.length)).toEqual(
          limit === 1 ? [1, 1, 1, 1, 1] : limit === 2 ? [2, 2, 1] : [4, 1]
        )
        expect(pages.flat().map((t) => t.transaction_id)).toEqual(all.map((t) => t.transaction_id))
      }
      // A full last page says there is no next one.
      const five = yield* list(5)(Option.none())
      expect(five.items).toHaveLength(5)
      expect(Option.isNone(five.next)).toBe(true)

      // A limit out of 1-100 is refused, naming it.
      for (const limit of [0, 101, 1.5]) {
        const refused = yield* Effect.flip(list(limit)(Option.none()))
        expect(refused).toMatchObject({ _tag: "InvalidInput", field: "limit" })
      }

      // Another user's, or an unknown customer: not found.
      const foreign = yield* Effect.flip(customers.listTransactions(u2, juan.customer_id, Option.none(), 10))
      expect(foreign).toBeInstanceOf(Errors.NotFound)
      const unknown = yield* Effect.flip(
        customers.listTransactions(u1, Customer.CustomerId.make("nobody"), Option.none(), 10)
      )
      expect(unknown).toBeInstanceOf(Errors.NotFound)
    })
  },
  {
    name: "merchant payouts: schedule sweeps and split payouts in one newest-first list; balance by currency",
    run: Effect.gen(function* () {
      yield* setup
      const money = yield* Balances.Balances
      const ars0 = { currency: "ARS", available: "0.00", in_transit: "0.00" }
      expect((yield* money.balance(u1, u1)).balances).toEqual([ars0])
      expect((yield* money.payouts(u1, u1)).items).toEqual([])

      // A daily sweep of 987.90 (1000.00 after fees).
      yield* fundMerchant("order-1", 100000n)
      expect((yield* money.balance(u1, u1)).balances).toEqual([
        { currency: "ARS", available: "987.90", in_transit: "0.00" }
      ])
      const schedule = yield* (yield* Schedules.Schedules).create(asPartner(p1), createReq("daily"))
      yield* toNextRun(schedule.schedule_id)
      yield* runDue
      expect((yield* money.balance(u1, u1)).balances).toEqual([ars0])

      // A split's instruction of two payouts, executed after the hold.
      yield* TestClock.adjust("1 hour")
      const split = yield* createSplit("split-1")
      yield* fundSplit(split.cvu)
      const a = yield* registerPayee(1, "Ana Proveedora")
      const b = yield* registerPayee(2, "Beto Logistica")
      const [accountA, accountB] = yield* activeAccounts(a, b)
      yield* instruct(split.split_payment_id, [
        { account_id: accountA!.account_id, amount: 500 },
        { account_id: accountB!.account_id, amount: 400 }
      ])
      const pendingSplit = yield* money.payouts(u1, u1, { kind: "split" })
      expect(pendingSplit.items.map((p) => p.status)).toEqual(["PENDING", "PENDING"])
      yield* TestClock.adjust(HOLD)
      yield* runDue

      // A second sweep, newest of all.
      yield* fundMerchant("order-2", 50000n)
      yield* toNextRun(schedule.schedule_id)
      yield* runDue
      yield* expectLedgerOk

      const all = (yield* money.payouts(u1, u1, { limit: 100 })).items
      expect(all.map((p) => p.kind)).toEqual(["schedule", "split", "split", "schedule"])
      expect(all.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS"])
      const [second, , , first] = all
      expect(first).toMatchObject({
        kind: "schedule",
        amount: "987.90",
        currency: "ARS",
        schedule_id: schedule.schedule_id,
        split_payment_id: null,
        failure_reason: null
      })
      expect(second!.amount).toBe("493.95")
      const sent = yield* (yield* SandboxBank.SandboxBank).sentTransfers
      for (const p of all) {
        const transfer = sent.find((t) => t.reference === p.payout_id)
        expect(transfer).toBeDefined()
        expect(p.bank_reference).toBe(transfer!.bank_transaction_id)
        expect(p.executed_timestamp).not.toBeNull()
      }
      const splits = all.filter((p) => p.kind === "split")
      expect(new Set(splits.map((p) => p.destination))).toEqual(new Set([a, b]))
      expect(new Set(splits.map((p) => p.amount))).toEqual(new Set(["500.00", "400.00"]))
      expect(splits.every((p) => p.split_payment_id === split.split_payment_id)).toBe(true)
      const byPosition = (p: MerchantMoney.MerchantPayout) => position(p.creation_timestamp, p.payout_id)
      expect([...all].sort((x, y) => Page.newestFirst(byPosition(x), byPosition(y)))).toEqual(all)

      for (const limit of [1, 2, 3]) {
        const pages = yield* allPages((before) =>
          money.payouts(u1, u1, { limit, before: Option.getOrUndefined(before) })
        )
        expect(pages.flat()).toEqual(all)
        expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true)
      }
      const schedulesOnly = yield* money.payouts(u1, u1, { kind: "schedule" })
      expect(schedulesOnly.items).toEqual([second, first])
      expect((yield* money.payouts(u1, u1, { kind: "refund" })).items).toEqual([])
      expect(yield* Effect.flip(money.payouts(u1, u1, { limit: 0 }))).toMatchObject({
        _tag: "InvalidInput",
        field: "limit"
      })

      expect((yield* money.balance(u1, u1)).balances).toEqual([ars0])

      // Another merchant's: not found, whatever the token.
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      expect(yield* Effect.flip(money.balance(u2, u1))).toBeInstanceOf(Errors.NotFound)
      expect(yield* Effect.flip(money.payouts(u2, u1))).toBeInstanceOf(Errors.NotFound)
      expect((yield* money.payouts(u2, u2)).items).toEqual([])
    })
  }
]
