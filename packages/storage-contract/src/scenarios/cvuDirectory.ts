/**
 * The CVU directory: the port's reads, and the storage that fills it (a payment, customer or
 * split payment stored enters its CVU in the same write; a customer's new CVU replaces its old
 * one; a failed unit of work leaves no entry; an owner whose CVU the directory holds already is
 * a `CvuTaken` defect and is not stored).
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  BankProvider,
  Customer,
  Customers,
  Ids,
  Payments,
  Principal,
  Split,
  Splits,
  User
} from "@cobro/core"
import {
  CustomerRepository,
  CvuDirectory,
  PaymentRepository,
  SplitRepository,
  Transactor
} from "@cobro/core/ports"
import { Faucet } from "@cobro/bank-sandbox"
import { Cause, DateTime, Effect, Exit, Option, Random, Ref, Schema } from "effect"
import type { Scenario } from "../Scenario.js"
import { createRequest, seedUser, u1, u2 } from "./fixtures.js"

const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))

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

/** u1 with a payment, a customer and a split, each with its CVU; and the directory. */
const threeOwners = Effect.gen(function* () {
  yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
  const dir = yield* directory
  const payment = yield* (yield* Payments.Payments).create(createRequest({ external_id: "o-1" }))
  const customer = yield* createCustomer("20123456", ".juan")
  const split = yield* createSplit("s-1")
  return { dir, payment, customer, split }
})

export const cvuDirectoryScenarios: ReadonlyArray<Scenario> = [
  {
    name: "cvu directory: find, findForUpdate and findAllForUpdate answer the entries the owners' storage wrote",
    run: Effect.gen(function* () {
      const { dir, payment, customer, split } = yield* threeOwners
      const entries = {
        payment: new CvuDirectory.CvuEntry({
          cvu: payment.cvu,
          owner: "payment",
          owner_id: payment.id,
          user_id: u1
        }),
        customer: new CvuDirectory.CvuEntry({
          cvu: customer.bank_info.cvu,
          owner: "customer",
          owner_id: customer.customer_id,
          user_id: u1
        }),
        split: new CvuDirectory.CvuEntry({
          cvu: split.cvu,
          owner: "split_payment",
          owner_id: split.split_payment_id,
          user_id: u1
        })
      }
      const unknown = cvu(9)

      expect(yield* dir.find(payment.cvu)).toEqual(Option.some(entries.payment))
      expect(yield* dir.find(unknown)).toEqual(Option.none())
      const locked = yield* Transactor.transactionally(
        Effect.all([dir.findForUpdate(customer.bank_info.cvu), dir.findForUpdate(unknown)])
      )
      expect(locked).toEqual([Option.some(entries.customer), Option.none()])
      const many = yield* Transactor.transactionally(
        dir.findAllForUpdate([split.cvu, unknown, payment.cvu, split.cvu])
      )
      expect([...many].sort((a, b) => a.cvu.localeCompare(b.cvu))).toEqual(
        [entries.payment, entries.split].sort((a, b) => a.cvu.localeCompare(b.cvu))
      )
      expect(yield* dir.findAllForUpdate([])).toEqual([])
    })
  },
  {
    name: "cvu directory: the faucet's concurrent sends (credited together) each answer for its own CVU, and a CVU not the caller's reaches neither the engine nor the bank",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, name: "Tienda Dos", email: "dos@example.com" })
      const payments = yield* Payments.Payments
      const faucet = yield* Faucet.Faucet
      const mine = yield* Effect.forEach(["m-1", "m-2", "m-3"], (external_id) =>
        payments.create(createRequest({ external_id }))
      )
      const theirs = yield* payments.create(createRequest({ user_id: "u2", external_id: "t-1" }))
      const request = new Faucet.FaucetRequest({ amount: 15 })
      const send = (target: BankAccount.Cvu) =>
        Effect.map(Effect.either(faucet.send(u1, target, request)), (r) =>
          r._tag === "Right" ? r.right.outcome._tag : r.left._tag
        )
      const targets = [mine[0]!.cvu, theirs.cvu, mine[1]!.cvu, cvu(7), mine[2]!.cvu, theirs.cvu]
      expect(yield* Effect.forEach(targets, send, { concurrency: "unbounded" })).toEqual([
        "Credited",
        "NotFound",
        "Credited",
        "NotFound",
        "Credited",
        "NotFound"
      ])
      // Inside a caller's unit of work the check reads in it.
      expect(yield* Transactor.transactionally(send(mine[0]!.cvu))).toBe("Credited")
      expect(yield* Transactor.transactionally(send(theirs.cvu))).toBe("NotFound")
      expect((yield* payments.get(u2, theirs.id)).payment_status).toBe("PENDING")
      // The bank's statement (what reconciliation reads) holds the credited transfers only.
      const booked = yield* (yield* BankProvider.BankProvider).incomingTransfers({
        from: DateTime.unsafeMake(0),
        to: DateTime.unsafeMake("2100-01-01T00:00:00Z")
      })
      expect(booked.unreadable).toEqual([])
      expect(booked.transfers.map((t) => t.cvu).sort()).toEqual(
        [mine[0]!.cvu, mine[1]!.cvu, mine[2]!.cvu, mine[0]!.cvu].sort()
      )
    })
  },
  {
    name: "cvu directory: creating a payment, a customer or a split registers its CVU, in the unit of work that stores it",
    run: Effect.gen(function* () {
      const { dir, payment, customer, split } = yield* threeOwners
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
    name: "cvu directory: an owner whose CVU the directory already holds dies with CvuTaken and stores nothing",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const dir = yield* directory
      const bank = yield* BankProvider.BankProvider
      const customers = yield* CustomerRepository.CustomerRepository
      const payments = yield* PaymentRepository.PaymentRepository
      const splits = yield* SplitRepository.SplitRepository
      // The CVU the seeded bank draws first, closed again, then held by a customer stored with it.
      const next = yield* seeded(bank.openAccount({}))
      yield* bank.releaseAccount(next.cvu)
      const juan = yield* createCustomer("20123456", ".juan")
      const holder = new Customer.Customer({
        ...juan,
        customer_id: Customer.CustomerId.make("20999999"),
        alias: Customer.AliasSuffix.make(".otro"),
        bank_info: new Customer.BankInfo({ cvu: next.cvu, alias: BankAccount.Alias.make("tienda.otro") })
      })
      yield* customers.insert(holder)
      const held = Option.some(
        new CvuDirectory.CvuEntry({
          cvu: next.cvu,
          owner: "customer",
          owner_id: holder.customer_id,
          user_id: u1
        })
      )
      expect(yield* dir.find(next.cvu)).toEqual(held)

      const taken = yield* defectOf(
        seeded((yield* Payments.Payments).create(createRequest({ external_id: "o-1" })))
      )
      expect(taken).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect((taken as CvuDirectory.CvuTaken).cvu).toBe(next.cvu)
      expect(yield* payments.findByCvu(next.cvu)).toEqual(Option.none())
      expect(yield* payments.findByExternalId(u1, Ids.ExternalId.make("o-1"))).toEqual(Option.none())
      yield* bank.releaseAccount(next.cvu)

      expect(yield* defectOf(seeded(createSplit("s-1")))).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* splits.findByCvu(next.cvu)).toEqual(Option.none())
      expect(yield* dir.find(next.cvu)).toEqual(held)

      // A customer stored, or moved, onto a CVU a payment holds: the same defect, nothing written.
      const payment = yield* (yield* Payments.Payments).create(createRequest({ external_id: "o-2" }))
      const onPayment = new Customer.BankInfo({
        cvu: payment.cvu,
        alias: BankAccount.Alias.make("tienda.ana")
      })
      const ana = new Customer.Customer({
        ...juan,
        customer_id: Customer.CustomerId.make("27111111"),
        alias: Customer.AliasSuffix.make(".ana"),
        bank_info: onPayment
      })
      expect(yield* defectOf(customers.insert(ana))).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* customers.findById(u1, ana.customer_id)).toEqual(Option.none())
      expect(
        yield* defectOf(customers.update(new Customer.Customer({ ...juan, bank_info: onPayment })))
      ).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* customers.findById(u1, juan.customer_id)).toEqual(Option.some(juan))
      expect(Option.map(yield* dir.find(juan.bank_info.cvu), (e) => e.owner_id)).toEqual(
        Option.some("20123456")
      )
      expect(Option.map(yield* dir.find(payment.cvu), (e) => e.owner)).toEqual(Option.some("payment"))
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
