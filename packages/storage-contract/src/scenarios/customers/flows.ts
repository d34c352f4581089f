/** Customers: the engine flows over the repository. */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  Customer,
  Customers,
  FeePolicy,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  Transfers,
  User
} from "@cobro/core"
import { CustomerRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Chunk, Effect, Either, Option, Schema, Stream, TestClock } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, expectLedgerOk, seedUser, u1, u2 } from "../fixtures.js"
import { cid, alias, stored } from "./helpers.js"

/** Seeds u1 (alias prefix "tienda") and u2 (prefix "otra"). */
const seedUsers = Effect.gen(function* () {
  yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
  yield* seedUser({ user_id: u2, email: "dos@example.com", alias_prefix: User.AliasPrefix.make("otra") })
})

const create = (owner: Ids.UserId, fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Customers.Customers, (s) =>
    s.create(
      owner,
      Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
        user_id: owner,
        alias: ".juan",
        customer_id: "20123456",
        name: "Juan Pérez",
        contact: { email: "juan@example.com" },
        webhook_url: "https://shop.example.com/hooks/customers",
        ...fields
      })
    )
  )

const changeAlias = (owner: Ids.UserId, id: string, suffix: string, create_new_cvu: boolean) =>
  Effect.flatMap(Customers.Customers, (s) =>
    s.changeAlias(
      owner,
      cid(id),
      Schema.decodeUnknownSync(Customer.ChangeAliasRequest)({ alias: suffix, create_new_cvu })
    )
  )

const pay = (to: BankAccount.Cvu, amount: Money.Money) =>
  Effect.gen(function* () {
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu: to, amount })
    return { transfer, outcome: yield* (yield* Transfers.Transfers).ingest(transfer) }
  })

const ledgerBalance = (owner: Ids.UserId, id: string) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.customerBalance(owner, id)))

export const customerFlowScenarios: ReadonlyArray<Scenario> = [
  {
    name: "customers flow: created under the alias prefix, 50 concurrent transfers give an exact balance",
    run: Effect.gen(function* () {
      yield* seedUsers
      const repo = yield* CustomerRepository.CustomerRepository
      const customer = yield* create(u1)
      expect(customer.bank_info.alias).toBe("tienda.juan")
      expect(Option.getOrThrow(yield* repo.findByCvu(customer.bank_info.cvu))).toEqual(customer)
      expect(Option.getOrThrow(yield* repo.findByAlias(customer.bank_info.alias))).toEqual(customer)
      const noPrefix = yield* Effect.flip(
        Effect.zipRight(
          seedUser({ user_id: Ids.UserId.make("u3"), email: "tres@example.com" }),
          create(Ids.UserId.make("u3"))
        )
      )
      expect(noPrefix).toMatchObject({ key: Customer.prefixNotSetKey })

      const outcomes = yield* Effect.all(
        Array.from({ length: 50 }, (_, i) => pay(customer.bank_info.cvu, ars(BigInt(10_000 + i)))),
        { concurrency: "unbounded" }
      )
      expect(outcomes.every((o) => o.outcome._tag === "Credited")).toBe(true)
      const policy = FeePolicy.percent(FeePolicy.sandboxPolicy)
      const credits = yield* Effect.forEach(outcomes, ({ transfer }) =>
        Effect.map(policy.feesFor({ user_id: u1, amount: transfer.amount, kind: "customer" }), (fees) =>
          FeePolicy.credited(transfer.amount, fees)
        )
      )
      const expected = credits.reduce((acc, m) => acc + m.minor, 0n)
      const after = yield* stored(u1, "20123456")
      expect(after.balance.minor).toBe(expected)
      expect(yield* ledgerBalance(u1, "20123456")).toEqual(after.balance)
      expect(after.last_modified_timestamp).toEqual(customer.last_modified_timestamp)

      // Every credit is one stored transaction, readable through the service.
      const events = (yield* (yield* Outbox.Outbox).list(0, 1000))
        .map((e) => e.event)
        .filter((e) => e.type === "customer.payment_received")
      expect(events).toHaveLength(50)
      const service = yield* Customers.Customers
      const transactions = yield* Effect.forEach(events, (e) =>
        service.getTransaction(
          u1,
          cid("20123456"),
          Customer.CustomerTransactionId.make(e.payload["transactionId"] as string)
        )
      )
      expect(transactions.reduce((acc, t) => acc + t.credited_amount.minor, 0n)).toBe(expected)
      expect(new Set(transactions.map((t) => t.bank_transaction_id)).size).toBe(50)

      // A repeated notification credits nothing more.
      expect((yield* (yield* Transfers.Transfers).ingest(outcomes[0]!.transfer))._tag).toBe("Duplicate")
      expect((yield* stored(u1, "20123456")).balance.minor).toBe(expected)
      yield* expectLedgerOk
    })
  },
  {
    name: "customers flow: alias changes with a new CVU or in place; reads by CVU and alias follow",
    run: Effect.gen(function* () {
      yield* seedUsers
      const repo = yield* CustomerRepository.CustomerRepository
      const sandbox = yield* SandboxBank.SandboxBank
      const before = yield* create(u1)
      yield* pay(before.bank_info.cvu, ars(5000n))
      yield* TestClock.adjust("1 hour")

      const renewed = yield* changeAlias(u1, "20123456", ".juan.nuevo", true)
      expect(renewed.bank_info.cvu).not.toBe(before.bank_info.cvu)
      expect(renewed.bank_info.alias).toBe("tienda.juan.nuevo")
      expect(yield* stored(u1, "20123456")).toEqual(renewed)
      expect(yield* repo.findByCvu(before.bank_info.cvu)).toEqual(Option.none())
      expect(yield* repo.findByAlias(before.bank_info.alias)).toEqual(Option.none())
      expect(Option.getOrThrow(yield* repo.findByCvu(renewed.bank_info.cvu))).toEqual(renewed)
      expect(Option.getOrThrow(yield* repo.findByAlias(renewed.bank_info.alias))).toEqual(renewed)
      expect(yield* sandbox.isOpen(before.bank_info.cvu)).toBe(false)
      expect((yield* pay(before.bank_info.cvu, ars(3000n))).outcome._tag).toBe("Bounced")
      expect((yield* pay(renewed.bank_info.cvu, ars(2000n))).outcome._tag).toBe("Credited")
      const balance = (yield* stored(u1, "20123456")).balance
      expect(balance).toEqual(yield* ledgerBalance(u1, "20123456"))
      expect(balance).toEqual(ars(6916n)) // 50 + 20 less 1 % commission and 21 % IVA on it

      // In place: the CVU stays, the old alias is free for another customer.
      const inPlace = yield* changeAlias(u1, "20123456", ".jp", false)
      expect(inPlace.bank_info.cvu).toBe(renewed.bank_info.cvu)
      expect(Option.getOrThrow(yield* repo.findByAlias(alias("tienda.jp")))).toEqual(inPlace)
      expect(yield* repo.findByAlias(renewed.bank_info.alias)).toEqual(Option.none())
      const other = yield* create(u1, { customer_id: "c2", alias: ".juan.nuevo" })
      expect(Option.getOrThrow(yield* repo.findByAlias(renewed.bank_info.alias))).toEqual(other)
      const taken = yield* Effect.flip(changeAlias(u1, "20123456", ".juan.nuevo", false))
      expect(taken).toMatchObject({ _tag: "Conflict", key: "customer.alias.taken" })

      // The bank refuses an in-place change: a new CVU, the old one released.
      yield* sandbox.refuseAliasChange(inPlace.bank_info.cvu)
      const refused = yield* changeAlias(u1, "20123456", ".juancho", false)
      expect(refused.bank_info.cvu).not.toBe(inPlace.bank_info.cvu)
      expect(yield* repo.findByCvu(inPlace.bank_info.cvu)).toEqual(Option.none())
      expect((yield* pay(refused.bank_info.cvu, ars(1000n))).outcome._tag).toBe("Credited")

      // Listing through the service: only the caller's customers, oldest first.
      yield* create(u2, { customer_id: "theirs", alias: ".x1" })
      const mine = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* Customers.Customers).list(u1, u1)))
      expect(mine.map((c) => c.customer_id)).toEqual(["20123456", "c2"])
      yield* expectLedgerOk
    })
  },
  {
    name: "customers flow: concurrent creates of one customer id, one wins and the loser's alias is reusable",
    run: Effect.gen(function* () {
      yield* seedUsers
      const results = yield* Effect.all(
        [create(u1, { customer_id: "c1", alias: ".aaa" }), create(u1, { customer_id: "c1", alias: ".bbb" })],
        { concurrency: "unbounded", mode: "either" }
      )
      const winners = results.filter(Either.isRight).map((r) => r.right)
      const losers = results.filter(Either.isLeft).map((r) => r.left)
      expect(winners).toHaveLength(1)
      expect(losers).toEqual([expect.objectContaining({ _tag: "Conflict", key: "customer.exists" })])
      const loserAlias = winners[0]!.alias === ".aaa" ? ".bbb" : ".aaa"
      const reuse = yield* create(u1, { customer_id: "c2", alias: loserAlias })
      expect(reuse.bank_info.alias).toBe(`tienda${loserAlias}`)
      expect(yield* stored(u1, "c1")).toEqual(winners[0])
      yield* expectLedgerOk
    })
  }
]
