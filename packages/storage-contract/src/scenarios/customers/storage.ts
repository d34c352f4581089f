/** Customers: the repository contract. */
import { expect } from "@effect/vitest"
import { BankAccount, Customer, Ids, Payment, Wire } from "@cobro/core"
import { CustomerRepository, Transactor } from "@cobro/core/ports"
import { DateTime, Effect, Either, Option, Schema } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, u1, u2 } from "../fixtures.js"
import { cid, cvu, alias, stored } from "./helpers.js"

/** A customer record as the port stores it (the engine is not involved). */
const makeCustomer = (
  owner: Ids.UserId,
  id: string,
  fields: {
    readonly alias: string
    readonly cvu: BankAccount.Cvu
    readonly at: number
    readonly balance?: bigint
  }
) =>
  new Customer.Customer({
    customer_id: cid(id),
    user_id: owner,
    name: `Cliente ${id}`,
    alias: Customer.AliasSuffix.make(".x"),
    bank_info: new Customer.BankInfo({ cvu: fields.cvu, alias: alias(fields.alias) }),
    balance: ars(fields.balance ?? 0n),
    contact: new Customer.CustomerContact({ email: "cliente@example.com" }),
    webhook_url: null,
    creation_timestamp: DateTime.unsafeMake(fields.at),
    last_modified_timestamp: DateTime.unsafeMake(fields.at)
  })

const makeTransaction = (c: Customer.Customer, id: string, bankId: string) =>
  new Customer.CustomerTransaction({
    transaction_id: Customer.CustomerTransactionId.make(id),
    customer_id: c.customer_id,
    user_id: c.user_id,
    address: c.bank_info.cvu,
    amount: ars(100000n),
    commission: Wire.rate("0.01"),
    commission_amount: ars(1000n),
    commission_taxes: [
      new Payment.Tax({ tax_amount: ars(210n), tax_rate: Wire.rate("0.21"), tax_type: "IVA" })
    ],
    commission_tax_amount: ars(210n),
    taxes: [],
    tax_amount: ars(0n),
    credited_amount: ars(98790n),
    currency: "ARS",
    network: "CVU",
    sender_address: BankAccount.makeCbu("0170099", "0000000067890"),
    sender_cuit: BankAccount.makeCuit("20", "30111222"),
    sender_name: "Ana Gómez",
    bank_transaction_id: Ids.BankTransactionId.make(bankId),
    transaction_status: "PROCESSED",
    creation_timestamp: DateTime.unsafeMake(Date.UTC(2026, 0, 2)),
    sender_problems: null
  })

const keyOf = (e: unknown) => (e as { readonly key?: string }).key

export const customerStorageScenarios: ReadonlyArray<Scenario> = [
  {
    name: "customers: insert and reads by key, CVU and alias; uniqueness with the memory adapter's Conflict keys",
    run: Effect.gen(function* () {
      const repo = yield* CustomerRepository.CustomerRepository
      const t0 = Date.UTC(2026, 0, 1)
      const c1 = makeCustomer(u1, "c1", {
        alias: "tienda.uno",
        cvu: cvu(1),
        at: t0,
        balance: 9007199254740993n
      })
      yield* repo.insert(c1)
      expect(Option.getOrThrow(yield* repo.findById(u1, cid("c1")))).toEqual(c1)
      expect(Option.getOrThrow(yield* repo.findByIdForUpdate(u1, cid("c1")))).toEqual(c1)
      expect(Option.getOrThrow(yield* repo.findByCvu(cvu(1)))).toEqual(c1)
      expect(Option.getOrThrow(yield* repo.findByAlias(alias("tienda.uno")))).toEqual(c1)
      expect(yield* repo.findById(u2, cid("c1"))).toEqual(Option.none())
      expect(yield* repo.findByCvu(cvu(99))).toEqual(Option.none())
      expect(yield* repo.findByAlias(alias("nadie.aqui"))).toEqual(Option.none())

      const refused = (c: Customer.Customer) => Effect.map(Effect.flip(repo.insert(c)), keyOf)
      // The key wins over the alias and the CVU, the alias over the CVU.
      expect(yield* refused(makeCustomer(u1, "c1", { alias: "tienda.otro", cvu: cvu(2), at: t0 }))).toBe(
        "customer.exists"
      )
      expect(yield* refused(makeCustomer(u1, "c1", { alias: "tienda.uno", cvu: cvu(1), at: t0 }))).toBe(
        "customer.exists"
      )
      expect(yield* refused(makeCustomer(u1, "c2", { alias: "tienda.uno", cvu: cvu(2), at: t0 }))).toBe(
        "customer.alias.taken"
      )
      expect(yield* refused(makeCustomer(u1, "c2", { alias: "tienda.uno", cvu: cvu(1), at: t0 }))).toBe(
        "customer.alias.taken"
      )
      expect(yield* refused(makeCustomer(u2, "c2", { alias: "otra.dos", cvu: cvu(1), at: t0 }))).toBe(
        "customer.cvu.taken"
      )
      // Customer ids are unique per user only.
      const theirs = makeCustomer(u2, "c1", { alias: "otra.uno", cvu: cvu(3), at: t0 })
      yield* repo.insert(theirs)
      expect(Option.getOrThrow(yield* repo.findById(u2, cid("c1")))).toEqual(theirs)

      // A new alias and CVU: the old ones belong to nobody and can be taken by another customer.
      const moved = new Customer.Customer({
        ...c1,
        bank_info: new Customer.BankInfo({ cvu: cvu(4), alias: alias("tienda.nuevo") }),
        balance: ars(1n),
        last_modified_timestamp: DateTime.unsafeMake(t0 + 1000)
      })
      yield* repo.update(moved)
      expect(Option.getOrThrow(yield* repo.findById(u1, cid("c1")))).toEqual(moved)
      expect(yield* repo.findByCvu(cvu(1))).toEqual(Option.none())
      expect(yield* repo.findByAlias(alias("tienda.uno"))).toEqual(Option.none())
      expect(Option.getOrThrow(yield* repo.findByCvu(cvu(4)))).toEqual(moved)
      expect(Option.getOrThrow(yield* repo.findByAlias(alias("tienda.nuevo")))).toEqual(moved)
      const c2 = makeCustomer(u1, "c2", { alias: "tienda.uno", cvu: cvu(1), at: t0 })
      yield* repo.insert(c2)
      expect(Option.getOrThrow(yield* repo.findByCvu(cvu(1)))).toEqual(c2)

      // Updates keep the rules; an update may keep the row's own alias and CVU.
      const updateKey = (c: Customer.Customer) => Effect.map(Effect.flip(repo.update(c)), keyOf)
      const withBank = (c: Customer.Customer, a: string, v: BankAccount.Cvu) =>
        new Customer.Customer({ ...c, bank_info: new Customer.BankInfo({ cvu: v, alias: alias(a) }) })
      expect(yield* updateKey(withBank(c2, "tienda.nuevo", cvu(1)))).toBe("customer.alias.taken")
      expect(yield* updateKey(withBank(c2, "tienda.nuevo", cvu(4)))).toBe("customer.alias.taken")
      expect(yield* updateKey(withBank(c2, "tienda.uno", cvu(3)))).toBe("customer.cvu.taken")
      expect(
        yield* updateKey(makeCustomer(u1, "ghost", { alias: "tienda.ghost", cvu: cvu(9), at: t0 }))
      ).toBe("customer.not.found")
      yield* repo.update(new Customer.Customer({ ...c2, name: "Otro nombre" }))
      expect((yield* stored(u1, "c2")).name).toBe("Otro nombre")
      expect(Option.getOrThrow(yield* repo.findByCvu(cvu(3)))).toEqual(theirs)

      // The storage stays usable after refused writes inside a unit of work.
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect(yield* refused(makeCustomer(u1, "c9", { alias: "tienda.nuevo", cvu: cvu(9), at: t0 }))).toBe(
            "customer.alias.taken"
          )
          expect(yield* updateKey(withBank(c2, "tienda.uno", cvu(4)))).toBe("customer.cvu.taken")
          yield* repo.update(new Customer.Customer({ ...c2, name: "Dentro" }))
          yield* repo.insert(makeCustomer(u1, "c9", { alias: "tienda.nueve", cvu: cvu(9), at: t0 }))
        })
      )
      expect((yield* stored(u1, "c2")).name).toBe("Dentro")
      expect(Option.isSome(yield* repo.findByAlias(alias("tienda.nueve")))).toBe(true)
      // A failed unit of work leaves nothing.
      const rolledBack = yield* Effect.either(
        (yield* Transactor.Transactor).withTransaction(
          Effect.zipRight(
            repo.insert(makeCustomer(u1, "c10", { alias: "tienda.diez", cvu: cvu(10), at: t0 })),
            repo.insert(makeCustomer(u1, "c11", { alias: "tienda.diez", cvu: cvu(11), at: t0 }))
          )
        )
      )
      expect(Either.isLeft(rolledBack)).toBe(true)
      expect(yield* repo.findById(u1, cid("c10"))).toEqual(Option.none())
      expect(yield* repo.findByAlias(alias("tienda.diez"))).toEqual(Option.none())
    })
  },
  {
    name: "customers: keyset pages of a user's customers by creation time then id (byte order), oldest first",
    run: Effect.gen(function* () {
      const repo = yield* CustomerRepository.CustomerRepository
      const t0 = Date.UTC(2026, 0, 1)
      // Ids whose byte order differs from a natural-language collation; several share a millisecond.
      const ids = ["b", "B", "_a", "-a", ".a", "a-1", "a_1", "a.1", "a1", "A1", "10", "9", "Zz", "z"]
      let n = 0
      const inserted: Array<Customer.Customer> = []
      for (const [i, id] of ids.entries()) {
        const at = t0 + Math.floor(i / 5) * 1000
        const c = makeCustomer(u1, id, { alias: `tienda.c${++n}`, cvu: cvu(n), at })
        inserted.push(c)
        yield* repo.insert(c)
        yield* repo.insert(makeCustomer(u2, id, { alias: `otra.c${++n}`, cvu: cvu(n), at }))
      }
      const expected = [...inserted]
        .sort((a, b) => {
          const ta = DateTime.toEpochMillis(a.creation_timestamp)
          const tb = DateTime.toEpochMillis(b.creation_timestamp)
          return ta - tb || (a.customer_id < b.customer_id ? -1 : a.customer_id > b.customer_id ? 1 : 0)
        })
        .map((c) => c.customer_id)

      const pages: Array<ReadonlyArray<Customer.Customer>> = []
      let cursor = Option.none<CustomerRepository.CustomerCursor>()
      while (true) {
        const page = yield* repo.listByUser(u1, cursor, 4)
        if (page.length === 0) break
        pages.push(page)
        const last = page[page.length - 1]!
        cursor = Option.some({ creation_timestamp: last.creation_timestamp, customer_id: last.customer_id })
      }
      expect(pages.map((p) => p.length)).toEqual([4, 4, 4, 2])
      expect(pages.flat().map((c) => c.customer_id)).toEqual(expected)
      expect(pages.flat().every((c) => c.user_id === u1)).toBe(true)
      expect(pages[0]![0]).toEqual(inserted.find((c) => c.customer_id === expected[0]))
      expect(yield* repo.listByUser(Ids.UserId.make("nobody"), Option.none(), 10)).toEqual([])
      expect(yield* repo.listByUser(u1, Option.none(), 0)).toEqual([])
    })
  },
  {
    name: "customers: transactions are stored once by id and by bank transaction id, read per customer",
    run: Effect.gen(function* () {
      const repo = yield* CustomerRepository.CustomerRepository
      const c = makeCustomer(u1, "c1", { alias: "tienda.uno", cvu: cvu(1), at: Date.UTC(2026, 0, 1) })
      yield* repo.insert(c)
      const tx = makeTransaction(c, "ctx_1", "bt-1")
      yield* repo.insertTransaction(tx)
      // Compared in their wire form: rates are BigDecimals, equal by value rather than by structure.
      const wire = Schema.encodeSync(Customer.CustomerTransaction)
      expect(wire(Option.getOrThrow(yield* repo.findTransaction(u1, cid("c1"), tx.transaction_id)))).toEqual(
        wire(tx)
      )
      expect(yield* repo.findTransaction(u2, cid("c1"), tx.transaction_id)).toEqual(Option.none())
      expect(yield* repo.findTransaction(u1, cid("c2"), tx.transaction_id)).toEqual(Option.none())
      expect(
        yield* repo.findTransaction(u1, cid("c1"), Customer.CustomerTransactionId.make("ctx_nope"))
      ).toEqual(Option.none())
      const again = (t: Customer.CustomerTransaction) =>
        Effect.map(Effect.flip(repo.insertTransaction(t)), keyOf)
      expect(yield* again(tx)).toBe("customer.transaction.exists")
      expect(yield* again(makeTransaction(c, "ctx_2", "bt-1"))).toBe("customer.transaction.exists")
      expect(yield* again(makeTransaction(c, "ctx_1", "bt-2"))).toBe("customer.transaction.exists")
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect(yield* again(tx)).toBe("customer.transaction.exists")
          yield* repo.insertTransaction(makeTransaction(c, "ctx_2", "bt-2"))
        })
      )
      const second = yield* repo.findTransaction(u1, cid("c1"), Customer.CustomerTransactionId.make("ctx_2"))
      expect(Option.map(second, (t) => t.bank_transaction_id)).toEqual(Option.some("bt-2"))
    })
  }
]
