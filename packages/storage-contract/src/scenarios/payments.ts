/**
 * Payments, the transfer log, users, the ledger and the outbox: the port contract and the
 * engine flows over it.
 */
import { expect } from "@effect/vitest"
import { Ids, Jobs, Ledger, LedgerAccount, Outbox, Payments, Transfers } from "@cobro/core"
import {
  LedgerRepository,
  PaymentRepository,
  Transactor,
  TransferRepository,
  UserRepository
} from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Chunk, DateTime, Effect, Option, Stream, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1, u2 } from "./fixtures.js"

const pay = (cvu: Parameters<SandboxBank.SandboxBank["Type"]["simulateIncoming"]>[0]["cvu"], minor: bigint) =>
  Effect.gen(function* () {
    const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu, amount: ars(minor) })
    return yield* (yield* Transfers.Transfers).ingest(t)
  })

export const paymentScenarios: ReadonlyArray<Scenario> = [
  {
    name: "payments: insert, reads by id, external id and CVU; uniqueness of (user, external_id) and CVU",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const repo = yield* PaymentRepository.PaymentRepository
      const p = yield* payments.create(createRequest({ external_id: "o-1", motive: "m" }))
      expect(Option.getOrThrow(yield* repo.findById(p.id))).toEqual(p)
      expect(Option.getOrThrow(yield* repo.findByIdForUpdate(p.id))).toEqual(p)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u1, p.external_id))).toEqual(p)
      expect(Option.getOrThrow(yield* repo.findByCvu(p.cvu))).toEqual(p)
      expect(Option.getOrThrow(yield* repo.findByCvuForUpdate(p.cvu))).toEqual(p)
      expect(yield* repo.findById(Ids.PaymentId.make("VAR-nope"))).toEqual(Option.none())
      const dup = yield* Effect.flip(repo.insert(p))
      expect(dup._tag).toBe("Conflict")
      // The storage stays usable after a refused insert, also inside a unit of work.
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect((yield* Effect.flip(repo.insert(p)))._tag).toBe("Conflict")
          yield* repo.update(p)
        })
      )
      expect(yield* payments.create(createRequest({ external_id: "o-1", motive: "m" }))).toEqual(p)
    })
  },
  {
    name: "payments: keyset pages by creation time with team and date filters; due payments by expiry",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const payments = yield* Payments.Payments
      const repo = yield* PaymentRepository.PaymentRepository
      const start = Date.UTC(2026, 0, 1)
      yield* TestClock.setTime(start)
      for (let i = 0; i < 30; i++) {
        yield* payments.create(
          createRequest({ external_id: `p${i}`, ...(i % 2 === 0 ? { team_id: "even" } : {}) })
        )
        if (i % 3 === 2) yield* TestClock.adjust("1 second") // several payments share a millisecond
      }
      yield* payments.create(createRequest({ user_id: "u2" }))
      const page1 = yield* repo.page({ user_id: u1 }, Option.none(), 7)
      const page2 = yield* repo.page(
        { user_id: u1 },
        Option.some({ creation_timestamp: page1[6]!.creation_timestamp, id: page1[6]!.id }),
        7
      )
      expect([...page1, ...page2].map((p) => p.external_id)).toEqual(
        [...page1, ...page2]
          .map((p) => p.external_id)
          .sort((a, b) => {
            const ia = Number(a.slice(1))
            const ib = Number(b.slice(1))
            return Math.floor(ia / 3) - Math.floor(ib / 3) || (a < b ? -1 : a > b ? 1 : 0)
          })
      )
      const all = Chunk.toReadonlyArray(yield* Stream.runCollect(payments.list(u1, { user_id: u1 })))
      expect(all).toHaveLength(30)
      expect(new Set(all.map((p) => p.id)).size).toBe(30)
      const even = yield* Stream.runCollect(
        payments.list(u1, { user_id: u1, team_id: Ids.TeamId.make("even") })
      )
      expect(Chunk.size(even)).toBe(15)
      const window = yield* Stream.runCollect(
        payments.list(u1, {
          user_id: u1,
          start_date: DateTime.unsafeMake(start + 1000),
          end_date: DateTime.unsafeMake(start + 2000)
        })
      )
      expect(
        Chunk.toReadonlyArray(window)
          .map((p) => p.external_id)
          .sort()
      ).toEqual(["p3", "p4", "p5", "p6", "p7", "p8"])
      expect(yield* repo.findDue(DateTime.unsafeMake(start), 100)).toEqual([])
      const due = yield* repo.findDue(DateTime.unsafeMake(start + 5 * 86_400_000 + 1000), 100)
      expect(due.map((p) => p.external_id).sort()).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"])
    })
  },
  {
    name: "transfers: the same bank notification ten times concurrently credits once",
    run: Effect.gen(function* () {
      yield* seedUser()
      const p = yield* (yield* Payments.Payments).create(createRequest())
      const t = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu: p.cvu, amount: ars(150000n) })
      const transfers = yield* Transfers.Transfers
      const outcomes = yield* Effect.all(
        Array.from({ length: 10 }, () => transfers.ingest(t)),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((o) => o._tag === "Credited")).toHaveLength(1)
      expect(outcomes.filter((o) => o._tag === "Duplicate")).toHaveLength(9)
      // One credit in the books: the merchant's share of one transfer, the bank's clearing once.
      const ledger = yield* Ledger.Ledger
      expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(ars(150000n))
      expect(yield* ledger.balance(LedgerAccount.merchantAvailable(u1))).toEqual(ars(148185n))
      expect(yield* (yield* Outbox.Outbox).list(0, 100)).toHaveLength(1)
      const record = Option.getOrThrow(
        yield* (yield* TransferRepository.TransferRepository).findById(t.bank_transaction_id)
      )
      expect(record.target).toBe("payment")
      expect(record.amount).toEqual(ars(150000n))
      expect((yield* (yield* Payments.Payments).get(u1, p.id)).transactions).toHaveLength(1)
      yield* expectLedgerOk
    })
  },
  {
    name: "flow: partial, exact and late transfers settle the payment and keep the books",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const p = yield* payments.create(createRequest({ webhook_url: "https://shop.example/hook" }))
      expect((yield* pay(p.cvu, 50000n))._tag).toBe("Credited")
      expect((yield* payments.get(u1, p.id)).payment_status).toBe("UNDERPAID")
      yield* pay(p.cvu, 100000n)
      const paid = yield* payments.get(u1, p.id)
      expect(paid.payment_status).toBe("SUCCESS")
      expect(paid.transaction_fields?.credited_amount).toEqual(ars(148185n))
      yield* TestClock.adjust("5 days")
      const report = yield* (yield* Jobs.Jobs).runDue()
      expect(report.released).toBe(1)
      expect((yield* pay(p.cvu, 100n))._tag).toBe("Bounced")
      const ledger = yield* Ledger.Ledger
      expect(yield* ledger.balance(LedgerAccount.merchantAvailable(u1))).toEqual(ars(148185n))
      expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(ars(150000n))
      const events = yield* (yield* Outbox.Outbox).list(0, 100)
      expect(events.map((e) => e.event.payload)).toEqual([
        { message: "Payment updated", paymentId: p.id, externalId: p.external_id },
        { message: "Payment updated", paymentId: p.id, externalId: p.external_id }
      ])
      expect(Option.getOrThrow(yield* (yield* Outbox.Outbox).findById(events[0]!.event.event_id))).toEqual(
        events[0]!.event
      )
      yield* expectLedgerOk
    })
  },
  {
    name: "flow: concurrent transfers to one payment lose no update",
    run: Effect.gen(function* () {
      yield* seedUser()
      const p = yield* (yield* Payments.Payments).create(
        createRequest({ price: { amount: 50, currency: "ARS" } })
      )
      const bank = yield* SandboxBank.SandboxBank
      const transfers = yield* Effect.all(
        Array.from({ length: 50 }, () => bank.simulateIncoming({ cvu: p.cvu, amount: ars(100n) }))
      )
      const ingest = (yield* Transfers.Transfers).ingest
      yield* Effect.all(transfers.map(ingest), { concurrency: "unbounded" })
      const final = yield* (yield* Payments.Payments).get(u1, p.id)
      expect(final.transactions).toHaveLength(50)
      expect(final.payment_status).toBe("SUCCESS")
      yield* expectLedgerOk
    })
  },
  {
    name: "ledger: a refused movement leaves nothing; the journal pages in order; users are unique by email and prefix",
    run: Effect.gen(function* () {
      const ledger = yield* Ledger.Ledger
      const transactor = yield* Transactor.Transactor
      /** A test entry moving `minor` from `from` to `to`. */
      const move = (
        reference: string,
        from: LedgerAccount.LedgerAccount,
        to: LedgerAccount.LedgerAccount,
        minor: bigint
      ) =>
        ledger.post({
          kind: "test",
          reference,
          postings: [Ledger.debit(from, ars(minor)), Ledger.credit(to, ars(minor))]
        })
      const overdraw = move("r", LedgerAccount.merchantAvailable("u9"), LedgerAccount.bankClearing, 1n)
      expect(yield* Effect.flip(transactor.withTransaction(overdraw))).toMatchObject({
        key: "ledger.insufficient.funds"
      })
      for (let i = 1; i <= 3; i++) {
        yield* move(`r${i}`, LedgerAccount.bankClearing, LedgerAccount.merchantAvailable("u9"), BigInt(i))
      }
      const repo = yield* LedgerRepository.LedgerRepository
      const first = yield* repo.entries(0, 2)
      const rest = yield* repo.entries(first[1]!.position, 10)
      expect([...first, ...rest].map((e) => e.entry.reference)).toEqual(["r1", "r2", "r3"])
      expect(yield* ledger.balance(LedgerAccount.merchantAvailable("u9"))).toEqual(ars(6n))
      yield* expectLedgerOk

      // Credits in a unit of work (written in it directly: they cannot meet the balances'
      // CHECK) commit with it, and leave nothing when it fails; a refused overdraw in a unit of
      // work fails it and leaves nothing either.
      const credit = (reference: string, minor: bigint) =>
        move(reference, LedgerAccount.bankClearing, LedgerAccount.merchantAvailable("u8"), minor)
      const tooMuch = move(
        "too-much",
        LedgerAccount.merchantAvailable("u8"),
        LedgerAccount.bankClearing,
        100n
      )
      yield* transactor.withTransaction(Effect.zipRight(credit("in-1", 10n), credit("in-2", 5n)))
      const refused = transactor.withTransaction(Effect.zipRight(credit("in-4", 1n), tooMuch))
      expect(yield* Effect.flip(refused)).toMatchObject({ key: "ledger.insufficient.funds" })
      expect(yield* ledger.balance(LedgerAccount.merchantAvailable("u8"))).toEqual(ars(15n))
      const failed = transactor.withTransaction(Effect.zipRight(credit("in-3", 7n), Effect.fail("later")))
      expect(yield* Effect.flip(failed)).toBe("later")
      expect(yield* ledger.balance(LedgerAccount.merchantAvailable("u8"))).toEqual(ars(15n))
      const references = (yield* repo.entries(0, 100)).map((e) => e.entry.reference)
      expect(references.filter((r) => r.startsWith("in-") || r === "too-much")).toEqual(["in-1", "in-2"])
      yield* expectLedgerOk

      yield* seedUser()
      const users = yield* UserRepository.UserRepository
      const same = yield* Effect.flip(seedUser({ user_id: u2, email: "UNO@example.com" }))
      expect(same).toMatchObject({ key: "user.email.taken" })
      const user = Option.getOrThrow(yield* users.findById(u1))
      expect(Option.getOrThrow(yield* users.findByEmail("Uno@Example.com"))).toEqual(user)
    })
  }
]
