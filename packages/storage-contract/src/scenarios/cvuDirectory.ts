/**
 * The CVU directory: the port contract (register, the three reads, a CVU registered twice is a
 * `CvuTaken` defect, unregister) and the engine flows that fill it (payments, customers and split
 * payments register the CVU they open in the unit of work that stores them; a customer's new CVU
 * replaces its old one; a failed unit of work leaves no entry).
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  BankProvider,
  Customer,
  Customers,
  CvuDirectory,
  Ids,
  PaymentRepository,
  Payments,
  Principal,
  Split,
  SplitRepository,
  Splits,
  Transactor,
  User
} from "@cobro/core"
import { Cause, Effect, Exit, Option, Random, Ref, Schema } from "effect"
import type { Scenario } from "../Scenario.js"
import { createRequest, seedUser, u1, u2 } from "./fixtures.js"

const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))

const entry = (n: number, owner: CvuDirectory.CvuOwner, owner_id: string, user_id = u1) =>
  new CvuDirectory.CvuEntry({ cvu: cvu(n), owner, owner_id, user_id })

const directory = CvuDirectory.CvuDirectory

/** The defect an effect died with (fails the scenario when it did not die). */
const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && Option.isSome(Cause.dieOption(exit.cause))
      ? Effect.succeed(Option.getOrThrow(Cause.dieOption(exit.cause)))
      : Effect.dieMessage(`expected a defect, got ${String(exit)}`)
  )

const createCustomer = (customer_id: string, alias: string) =>
  Effect.flatMap(Customers.Customers, (s) =>
    s.create(
      u1,
      Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
        user_id: u1,
        alias,
        customer_id,
        name: "Juan Pérez"
      })
    )
  )

const createSplit = (external_id: string) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.create(
      Principal.Principal.User({ user_id: u1 }),
      Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({ external_id })
    )
  )

/** Runs `effect` with the same seeded randomness each time: the sandbox bank draws the same CVU. */
const seeded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withRandom(effect, Random.make("cvu-taken"))

export const cvuDirectoryScenarios: ReadonlyArray<Scenario> = [
  {
    name: "cvu directory: register, find, findForUpdate, findAllForUpdate, unregister; a CVU registered twice is a CvuTaken defect",
    run: Effect.gen(function* () {
      const dir = yield* directory
      const payment = entry(1, "payment", "VAR-u1-o-1")
      const customer = entry(2, "customer", "20123456", u2)
      const split = entry(3, "split_payment", "split_1")
      for (const e of [payment, customer, split]) yield* dir.register(e)

      expect(yield* dir.find(cvu(1))).toEqual(Option.some(payment))
      expect(yield* dir.find(cvu(9))).toEqual(Option.none())
      const locked = yield* Transactor.transactionally(
        Effect.all([dir.findForUpdate(cvu(2)), dir.findForUpdate(cvu(9))])
      )
      expect(locked).toEqual([Option.some(customer), Option.none()])
      const many = yield* Transactor.transactionally(dir.findAllForUpdate([cvu(3), cvu(9), cvu(1), cvu(3)]))
      expect([...many].sort((a, b) => a.cvu.localeCompare(b.cvu))).toEqual([payment, split])
      expect(yield* dir.findAllForUpdate([])).toEqual([])

      const taken = yield* defectOf(dir.register(entry(1, "split_payment", "split_2")))
      expect(taken).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect((taken as CvuDirectory.CvuTaken).cvu).toBe(cvu(1))
      expect(yield* dir.find(cvu(1))).toEqual(Option.some(payment))

      yield* dir.unregister(cvu(2))
      yield* dir.unregister(cvu(9))
      expect(yield* dir.find(cvu(2))).toEqual(Option.none())
      yield* dir.register(entry(2, "payment", "VAR-u1-o-2"))
      expect(Option.map(yield* dir.find(cvu(2)), (e) => e.owner)).toEqual(Option.some("payment"))

      // Inside a unit of work that fails, neither a registration nor an unregistration stays.
      const failed = yield* Effect.exit(
        Transactor.transactionally(
          Effect.zipRight(
            Effect.zipRight(dir.register(entry(4, "payment", "VAR-u1-o-4")), dir.unregister(cvu(3))),
            Effect.fail("boom" as const)
          )
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* dir.find(cvu(4))).toEqual(Option.none())
      expect(yield* dir.find(cvu(3))).toEqual(Option.some(split))
    })
  },
  {
    name: "cvu directory: creating a payment, a customer or a split registers its CVU, in the unit of work that stores it",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const dir = yield* directory
      const payment = yield* (yield* Payments.Payments).create(createRequest({ external_id: "o-1" }))
      const customer = yield* createCustomer("20123456", ".juan")
      const split = yield* createSplit("s-1")
      expect(yield* dir.find(payment.cvu)).toEqual(
        Option.some(
          new CvuDirectory.CvuEntry({ cvu: payment.cvu, owner: "payment", owner_id: payment.id, user_id: u1 })
        )
      )
      expect(yield* dir.find(customer.bank_info.cvu)).toEqual(
        Option.some(
          new CvuDirectory.CvuEntry({
            cvu: customer.bank_info.cvu,
            owner: "customer",
            owner_id: customer.customer_id,
            user_id: u1
          })
        )
      )
      expect(yield* dir.find(split.cvu)).toEqual(
        Option.some(
          new CvuDirectory.CvuEntry({
            cvu: split.cvu,
            owner: "split_payment",
            owner_id: split.split_payment_id,
            user_id: u1
          })
        )
      )

      // Created inside a unit of work that then fails: no payment, customer or split, no entry.
      const opened = yield* Ref.make<ReadonlyArray<BankAccount.Cvu>>([])
      const remember = (cvu: BankAccount.Cvu) => Ref.update(opened, (all) => [...all, cvu])
      const failed = yield* Effect.exit(
        Transactor.transactionally(
          Effect.gen(function* () {
            yield* remember(
              (yield* (yield* Payments.Payments).create(createRequest({ external_id: "o-2" }))).cvu
            )
            yield* remember((yield* createCustomer("20999999", ".ana")).bank_info.cvu)
            yield* remember((yield* createSplit("s-2")).cvu)
            return yield* Effect.fail("boom" as const)
          })
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      const cvus = yield* Ref.get(opened)
      expect(cvus).toHaveLength(3)
      for (const c of cvus) expect(yield* dir.find(c)).toEqual(Option.none())
      expect(yield* (yield* PaymentRepository.PaymentRepository).findByCvu(cvus[0]!)).toEqual(Option.none())
      expect(yield* (yield* SplitRepository.SplitRepository).findByCvu(cvus[2]!)).toEqual(Option.none())
    })
  },
  {
    name: "cvu directory: a create whose CVU the directory already holds dies and stores nothing",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const dir = yield* directory
      const bank = yield* BankProvider.BankProvider
      // The CVU the seeded bank draws first, closed again, then held by someone in the directory.
      const next = yield* seeded(bank.openAccount({}))
      yield* bank.releaseAccount(next.cvu)
      const holder = new CvuDirectory.CvuEntry({
        cvu: next.cvu,
        owner: "payment",
        owner_id: "VAR-u2-x",
        user_id: u2
      })
      yield* dir.register(holder)

      const taken = yield* defectOf(
        seeded((yield* Payments.Payments).create(createRequest({ external_id: "o-1" })))
      )
      expect(taken).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* (yield* PaymentRepository.PaymentRepository).findByCvu(next.cvu)).toEqual(Option.none())
      expect(
        yield* (yield* PaymentRepository.PaymentRepository).findByExternalId(u1, Ids.ExternalId.make("o-1"))
      ).toEqual(Option.none())
      yield* bank.releaseAccount(next.cvu)

      expect(yield* defectOf(seeded(createSplit("s-1")))).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* (yield* SplitRepository.SplitRepository).findByCvu(next.cvu)).toEqual(Option.none())
      expect(yield* dir.find(next.cvu)).toEqual(Option.some(holder))
    })
  },
  {
    name: "cvu directory: a customer's new CVU replaces its old one in the directory; an alias changed in place keeps it",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const dir = yield* directory
      const service = yield* Customers.Customers
      const change = (alias: string, create_new_cvu: boolean) =>
        service.changeAlias(
          u1,
          Customer.CustomerId.make("20123456"),
          Schema.decodeUnknownSync(Customer.ChangeAliasRequest)({ alias, create_new_cvu })
        )
      const first = yield* createCustomer("20123456", ".juan")
      const ownerOf = (c: BankAccount.Cvu) =>
        Effect.map(
          dir.find(c),
          Option.map((e) => `${e.owner}:${e.owner_id}:${e.user_id}`)
        )

      const renewed = yield* change(".juan.nuevo", true)
      expect(renewed.bank_info.cvu).not.toBe(first.bank_info.cvu)
      expect(yield* ownerOf(first.bank_info.cvu)).toEqual(Option.none())
      expect(yield* ownerOf(renewed.bank_info.cvu)).toEqual(Option.some("customer:20123456:u1"))

      const inPlace = yield* change(".jp", false)
      expect(inPlace.bank_info.cvu).toBe(renewed.bank_info.cvu)
      expect(yield* ownerOf(renewed.bank_info.cvu)).toEqual(Option.some("customer:20123456:u1"))
    })
  }
]
