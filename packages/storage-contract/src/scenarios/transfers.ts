/**
 * Notifications ingested together (`Transfers.ingestAll`) and the batch forms of the ports it
 * writes through: the transfer log, payments read by CVU, the ledger and the outbox.
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  BankProvider,
  Customer,
  Customers,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  Payment,
  Payments,
  Transfers,
  User
} from "@cobro/core"
import {
  LedgerRepository,
  PaymentRepository,
  Transactor,
  TransferRepository,
  WebhookDeliveryRepository
} from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Either, Option, Schema } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1 } from "./fixtures.js"

const unknownCvu = BankAccount.makeCvu("0000003", "9999999999999")

const record = (id: string, cvu: BankAccount.Cvu) =>
  Effect.map(
    DateTime.now,
    (now) =>
      new TransferRepository.TransferRecord({
        bank_transaction_id: Ids.BankTransactionId.make(id),
        cvu,
        amount: ars(100n),
        target: "payment",
        target_id: null,
        received_at: now
      })
  )

const outcomeOf = (result: Either.Either<Transfers.IngestOutcome, Transfers.IngestError>) =>
  Either.match(result, {
    onLeft: (e) => `error ${e._tag}`,
    onRight: (o) =>
      o._tag === "Credited"
        ? `credited ${o.target} ${o.target_id}`
        : o._tag === "Bounced"
          ? `bounced: ${o.reason}`
          : `duplicate of ${o.previous.target} ${o.previous.target_id}`
  })

export const transferScenarios: ReadonlyArray<Scenario> = [
  {
    name: "batch ports: the log records each id once; payments read by CVUs; ledger and outbox take several at once",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const a = yield* payments.create(createRequest({ external_id: "a" }))
      const b = yield* payments.create(createRequest({ external_id: "b" }))

      const log = yield* TransferRepository.TransferRepository
      expect(yield* log.insert(yield* record("t0", a.cvu))).toBe(true)
      const recorded = yield* log.insertAll([
        yield* record("t2", a.cvu),
        yield* record("t0", a.cvu),
        yield* record("t1", b.cvu),
        yield* record("t2", b.cvu)
      ])
      expect([...recorded].sort()).toEqual(["t1", "t2"])
      expect(Option.getOrThrow(yield* log.findById(Ids.BankTransactionId.make("t2"))).cvu).toBe(a.cvu)
      expect(yield* log.insertAll([])).toEqual([])
      // Read by time: from inclusive, to exclusive, by time then id.
      const now = yield* DateTime.now
      const at = (ms: number) => DateTime.unsafeMake(DateTime.toEpochMillis(now) + ms)
      const timed = (id: string, ms: number) =>
        Effect.map(
          record(id, a.cvu),
          (r) => new TransferRepository.TransferRecord({ ...r, received_at: at(ms) })
        )
      yield* log.insertAll([yield* timed("r2", 2000), yield* timed("r1", 1000), yield* timed("r0", 1000)])
      expect((yield* log.receivedBetween(at(1000), at(2000))).map((r) => r.bank_transaction_id)).toEqual([
        "r0",
        "r1"
      ])
      const window = yield* log.receivedBetween(at(1000), at(2001))
      expect(window.map((r) => r.bank_transaction_id)).toEqual(["r0", "r1", "r2"])
      expect(window[2]).toEqual(yield* timed("r2", 2000))
      expect(yield* log.receivedBetween(at(3000), at(4000))).toEqual([])

      const repo = yield* PaymentRepository.PaymentRepository
      const found = yield* (yield* Transactor.Transactor).withTransaction(
        repo.findByCvusForUpdate([b.cvu, unknownCvu, a.cvu, b.cvu])
      )
      expect([...found].sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual(
        [a, b].sort((x, y) => (x.id < y.id ? -1 : 1))
      )
      expect(yield* repo.findByCvusForUpdate([])).toEqual([])

      // Entries are posted in order; balances are checked once all are added.
      const ledger = yield* Ledger.Ledger
      const merchant = LedgerAccount.merchantAvailable(u1)
      const move = (reference: string, minor: bigint) => ({
        kind: "test",
        reference,
        postings: [Ledger.debit(LedgerAccount.bankClearing, ars(minor)), Ledger.credit(merchant, ars(minor))]
      })
      const posted = yield* ledger.postAll([move("in", 500n), move("out", -300n)])
      expect(posted.map((e) => e.reference)).toEqual(["in", "out"])
      expect(yield* ledger.balance(merchant)).toEqual(ars(200n))
      const entries = yield* (yield* LedgerRepository.LedgerRepository).entries(0, 10)
      expect(entries.map((e) => e.entry.reference)).toEqual(["in", "out"])
      // Taking more than the balance refuses the whole batch, its first entry too.
      const refused = yield* Effect.flip(
        (yield* Transactor.Transactor).withTransaction(
          ledger.postAll([move("in2", 100n), move("out2", -400n)])
        )
      )
      expect(refused).toMatchObject({ key: "ledger.insufficient.funds" })
      expect(yield* ledger.balance(merchant)).toEqual(ars(200n))
      expect(yield* (yield* LedgerRepository.LedgerRepository).entries(0, 10)).toHaveLength(2)
      expect(yield* ledger.postAll([])).toEqual([])
      yield* expectLedgerOk

      const outbox = yield* Outbox.Outbox
      const event = (webhook_url: string | null, n: number) =>
        Outbox.makeEvent({ type: "payment.updated", user_id: u1, webhook_url, payload: { n } })
      const events = [
        yield* event("https://shop.example.com/h", 1),
        yield* event(null, 2),
        yield* event("https://shop.example.com/h", 3)
      ]
      yield* outbox.appendAll(events)
      yield* outbox.appendAll([])
      expect((yield* outbox.list(0, 10)).map((e) => e.event)).toEqual(events)
      const deliveries = yield* WebhookDeliveryRepository.WebhookDeliveryRepository
      expect(Option.isSome(yield* deliveries.find(events[0]!.event_id))).toBe(true)
      expect(Option.isNone(yield* deliveries.find(events[1]!.event_id))).toBe(true)
      expect(Option.isSome(yield* deliveries.find(events[2]!.event_id))).toBe(true)
    })
  },
  {
    name: "ingestAll: a mixed batch answers, in order, what ingest one by one answers, and books the same",
    run: Effect.gen(function* () {
      yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
      const payments = yield* Payments.Payments
      const repo = yield* PaymentRepository.PaymentRepository
      const bank = yield* SandboxBank.SandboxBank
      const transfers = yield* Transfers.Transfers
      const a = yield* payments.create(createRequest({ external_id: "a" }))
      const b = yield* payments.create(createRequest({ external_id: "b" }))
      const c = yield* payments.create(createRequest({ external_id: "c" }))
      const closed = yield* payments.create(createRequest({ external_id: "closed" }))
      yield* repo.update(new Payment.Payment({ ...closed, cvu_released: true }))
      const customer = yield* (yield* Customers.Customers).create(
        u1,
        Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
          user_id: u1,
          alias: ".juan",
          customer_id: "20123456",
          name: "Juan Pérez",
          contact: { email: "juan@example.com" }
        })
      )
      const send = (cvu: BankAccount.Cvu, amount: Money.Money) => bank.simulateIncoming({ cvu, amount })
      const before = yield* send(c.cvu, ars(150000n))
      yield* transfers.ingest(before)

      const aFirst = yield* send(a.cvu, ars(100000n))
      const aRest = yield* send(a.cvu, ars(50000n))
      const bOver = yield* send(b.cvu, ars(200000n))
      const usd = yield* send(a.cvu, Money.make(100n, "BRL"))
      const zero = new BankProvider.IncomingTransfer({
        ...aFirst,
        bank_transaction_id: Ids.BankTransactionId.make("zero"),
        amount: ars(0n)
      })
      const batch = [
        aFirst,
        yield* send(closed.cvu, ars(1000n)),
        bOver,
        yield* send(customer.bank_info.cvu, ars(3000n)),
        aRest,
        aFirst,
        yield* send(unknownCvu, ars(700n)),
        before,
        usd,
        zero
      ]
      const outcomes = (yield* transfers.ingestAll(batch)).map(outcomeOf)
      expect(outcomes).toEqual([
        `credited payment ${a.id}`,
        "bounced: the payment's CVU is closed",
        `credited payment ${b.id}`,
        `credited customer ${Customers.transferTargetId(customer)}`,
        `credited payment ${a.id}`,
        `duplicate of payment ${a.id}`,
        "bounced: unknown CVU",
        `duplicate of payment ${c.id}`,
        "bounced: transfers are in ARS only",
        "error InvalidInput"
      ])
      const paidA = yield* payments.get(u1, a.id)
      expect(paidA.payment_status).toBe("SUCCESS")
      expect(paidA.transactions.map((t) => t.amount)).toEqual([ars(100000n), ars(50000n)])
      expect((yield* payments.get(u1, b.id)).payment_status).toBe("OVERPAID")
      expect((yield* payments.get(u1, closed.id)).transactions).toHaveLength(0)
      // Each credit is booked and announced once, as `ingest` would: four payment credits
      // (one before the batch), one customer credit.
      const ledger = yield* Ledger.Ledger
      const credited = [before, aFirst, aRest, bOver].reduce((sum, t) => sum + t.amount.minor, 0n)
      const clearing = yield* ledger.balance(LedgerAccount.bankClearing)
      expect(clearing).toEqual(ars(credited + 3000n))
      const events = (yield* (yield* Outbox.Outbox).list(0, 100)).map((e) => e.event.type)
      expect(events.filter((t) => t === "payment.updated")).toHaveLength(4)
      expect(events.filter((t) => t === "customer.payment_received")).toHaveLength(1)
      yield* expectLedgerOk

      // The same batch again credits nothing more.
      const again = (yield* transfers.ingestAll(batch.slice(0, 5))).map(outcomeOf)
      expect(again).toEqual([
        `duplicate of payment ${a.id}`,
        `duplicate of bounced ${closed.id}`,
        `duplicate of payment ${b.id}`,
        `duplicate of customer ${Customers.transferTargetId(customer)}`,
        `duplicate of payment ${a.id}`
      ])
      expect(yield* ledger.balance(LedgerAccount.bankClearing)).toEqual(clearing)
      yield* expectLedgerOk
    })
  },
  {
    name: "ingestAll: more transfers than one batch, concurrently with ingest of the same notifications, credit each once",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const bank = yield* SandboxBank.SandboxBank
      const transfers = yield* Transfers.Transfers
      const created = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) =>
          payments.create(createRequest({ external_id: `o-${i}`, price: { amount: 15, currency: "ARS" } }))
      )
      // Three transfers to each payment: 180 notifications, more than one batch.
      const sent = yield* Effect.forEach([0, 1, 2], () =>
        Effect.forEach(created, (p) => bank.simulateIncoming({ cvu: p.cvu, amount: ars(500n) }))
      ).pipe(Effect.map((rounds) => rounds.flat()))
      expect(sent.length).toBeGreaterThan(Transfers.batchSize)
      const [all, each] = yield* Effect.all(
        [transfers.ingestAll(sent), Effect.forEach(sent.slice(0, 90), transfers.ingest, { concurrency: 4 })],
        { concurrency: "unbounded" }
      )
      const credits = [
        ...all.flatMap((r) => (Either.isRight(r) && r.right._tag === "Credited" ? [r.right] : [])),
        ...each.filter((o) => o._tag === "Credited")
      ]
      expect(credits).toHaveLength(sent.length)
      for (const p of created) {
        const final = yield* payments.get(u1, p.id)
        expect(final.transactions).toHaveLength(3)
        expect(final.payment_status).toBe("SUCCESS")
      }
      expect(yield* (yield* Ledger.Ledger).balance(LedgerAccount.bankClearing)).toEqual(
        ars(500n * BigInt(sent.length))
      )
      yield* expectLedgerOk
    })
  },
  {
    name: "Transactor.inTransaction: true inside a unit of work, nested ones included, false outside and after",
    run: Effect.gen(function* () {
      const transactor = yield* Transactor.Transactor
      expect(yield* transactor.inTransaction).toBe(false)
      const inside = yield* transactor.withTransaction(
        Effect.all([transactor.inTransaction, transactor.withTransaction(transactor.inTransaction)])
      )
      expect(inside).toEqual([true, true])
      expect(yield* Effect.flip(transactor.withTransaction(Effect.fail("rolled back")))).toBe("rolled back")
      expect(yield* transactor.inTransaction).toBe(false)
    })
  },
  {
    name: "ingest: concurrent callers share units of work, a caller's own unit of work keeps its notification to itself",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const bank = yield* SandboxBank.SandboxBank
      const transfers = yield* Transfers.Transfers
      const transactor = yield* Transactor.Transactor
      const created = yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) => payments.create(createRequest({ external_id: `g-${i}` }))
      )
      const sent = yield* Effect.forEach(created, (p) =>
        bank.simulateIncoming({ cvu: p.cvu, amount: ars(150000n) })
      )
      // 39 callers at once, their first notification sent twice; the last payment's notification
      // goes in a caller's unit of work that then fails.
      const [outcomes, own] = yield* Effect.all(
        [
          Effect.forEach([...sent.slice(0, 39), sent[0]!], transfers.ingest, { concurrency: "unbounded" }),
          Effect.flip(
            transactor.withTransaction(Effect.zipRight(transfers.ingest(sent[39]!), Effect.fail("abandoned")))
          )
        ],
        { concurrency: "unbounded" }
      )
      expect(own).toBe("abandoned")
      expect(outcomes.filter((o) => o._tag === "Credited")).toHaveLength(39)
      expect(outcomes.filter((o) => o._tag === "Duplicate")).toHaveLength(1)
      for (const p of created.slice(0, 39))
        expect((yield* payments.get(u1, p.id)).payment_status).toBe("SUCCESS")
      expect((yield* payments.get(u1, created[39]!.id)).transactions).toHaveLength(0)
      expect(yield* (yield* Ledger.Ledger).balance(LedgerAccount.bankClearing)).toEqual(ars(39n * 150000n))
      // Handed over again, it is credited.
      expect((yield* transfers.ingest(sent[39]!))._tag).toBe("Credited")
      yield* expectLedgerOk
    })
  }
]
