/**
 * Payments stored together: `PaymentRepository.insertAll` (each payment answered as `insert` of
 * each in turn would, nothing stored when a CVU of the directory is taken), and concurrent
 * `Payments.create` calls sharing units of work (group commit), each answering what it would
 * alone: its payment, the payment its repeated request made, or its own conflict, with the CVU
 * it was given released.
 */
import { expect } from "@effect/vitest"
import { BankAccount, BankProvider, Customer, Ids, Metrics, Money, Payment, Payments } from "@cobro/core"
import { CustomerRepository, CvuDirectory, PaymentRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { Cause, DateTime, Effect, Either, Exit, Layer, Metric, Option } from "effect"
import type { Scenario } from "../Scenario.js"
import { createRequest, seedUser, u1 } from "./fixtures.js"

const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))

/** `payment` under another external id (and id), on CVU `to` when given. */
const copy = (payment: Payment.Payment, external: string, to?: BankAccount.Cvu) => {
  const external_id = Ids.ExternalId.make(external)
  const quote = payment.quotes[0]!
  return new Payment.Payment({
    ...payment,
    id: Ids.PaymentId.make(`VAR-${payment.user_id}-${external_id}`),
    external_id,
    quotes: [new Payment.Quote({ ...quote, address: to ?? cvu(1000 + Number(external.slice(1))) })]
  })
}

/**
 * A `Payments` of its own over the engine's ports, its bank's `openAccount` observed (and
 * answering `swap(n, account)` for the n-th account opened) and the sizes of `insertAll`'s lists;
 * concurrent creations stored together on every store.
 */
const observed = (swap: (n: number, cvu: BankAccount.Cvu) => BankAccount.Cvu = (_, c) => c) =>
  Effect.gen(function* () {
    const bank = yield* BankProvider.BankProvider
    const repo = yield* PaymentRepository.PaymentRepository
    const opened: Array<BankAccount.Cvu> = []
    const batches: Array<number> = []
    const spyBank = BankProvider.BankProvider.of({
      ...bank,
      openAccount: (request) =>
        Effect.map(bank.openAccount(request), (account) => {
          const given = swap(opened.length, account.cvu)
          opened.push(given)
          return new BankProvider.BankAccountRef({ ...account, cvu: given })
        })
    })
    const spyRepo = PaymentRepository.PaymentRepository.of({
      ...repo,
      storesTogether: true, // the memory store's own `false` would leave its `insertAll` untried
      insertAll: (payments) => {
        batches.push(payments.length)
        return repo.insertAll(payments)
      }
    })
    const payments = yield* Effect.provide(
      Payments.Payments,
      Payments.Payments.Default.pipe(
        Layer.provide(Layer.succeed(BankProvider.BankProvider, spyBank)),
        Layer.provide(Layer.succeed(PaymentRepository.PaymentRepository, spyRepo))
      )
    )
    return { payments, opened, batches }
  })

const created = Metric.value(Metrics.paymentsCreated)

/** Stores a customer of u1 on CVU `on`: the directory then holds `on` for a customer. */
const customerOn = (on: BankAccount.Cvu, at: Payment.Payment["creation_timestamp"]) =>
  Effect.flatMap(CustomerRepository.CustomerRepository, (customers) =>
    customers.insert(
      new Customer.Customer({
        user_id: u1,
        customer_id: Customer.CustomerId.make("20123456"),
        name: "Juan Pérez",
        alias: Customer.AliasSuffix.make(".juan"),
        bank_info: new Customer.BankInfo({ cvu: on, alias: BankAccount.Alias.make("tienda.juan") }),
        balance: Money.zero("ARS"),
        contact: null,
        webhook_url: null,
        creation_timestamp: at,
        last_modified_timestamp: at
      })
    )
  )

export const paymentsTogetherScenarios: ReadonlyArray<Scenario> = [
  {
    name: "payments: updateAll writes each payment as update of each would, the last of one listed twice",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* PaymentRepository.PaymentRepository
      const service = yield* Payments.Payments
      const [a, b, c, untouched] = yield* Effect.forEach(["e0", "e1", "e2", "e3"], (external_id) =>
        service.create(createRequest({ external_id }))
      )
      const later = DateTime.add(a!.last_modified_timestamp, { minutes: 5 })
      const a2 = new Payment.Payment({
        ...a!,
        payment_status: "SUCCESS",
        motive: "paid in full",
        team_id: Ids.TeamId.make("team-1"),
        last_modified_timestamp: later
      })
      const b2 = new Payment.Payment({
        ...b!,
        payment_status: "EXPIRED",
        cvu_released: true,
        expiration_timestamp: later
      })
      const c2 = new Payment.Payment({ ...c!, motive: "first" })
      const c3 = new Payment.Payment({ ...c!, motive: "last", team_id: null })
      yield* repo.updateAll([a2, b2, c2, c3])
      expect(yield* repo.findById(a!.id)).toEqual(Option.some(a2))
      expect(yield* repo.findById(b!.id)).toEqual(Option.some(b2))
      expect(yield* repo.findById(c!.id)).toEqual(Option.some(c3))
      expect(yield* repo.findById(untouched!.id)).toEqual(Option.some(untouched))
      // The columns moved with the documents: the team's page, the payments still due.
      const teamPage = yield* repo.page(
        { user_id: u1, team_id: Ids.TeamId.make("team-1") },
        Option.none(),
        10
      )
      expect(teamPage.map((p) => p.id)).toEqual([a!.id])
      const due = yield* repo.findDue(DateTime.add(later, { days: 365 }), 10)
      expect(due.map((p) => p.id).sort()).toEqual([a!.id, c!.id, untouched!.id].sort())
      yield* repo.updateAll([])
      yield* repo.updateAll([a!])
      expect(yield* repo.findById(a!.id)).toEqual(Option.some(a))
    })
  },
  {
    name: "payments: insertAll stores each payment as insert would, and none when a CVU of the directory is taken",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* PaymentRepository.PaymentRepository
      const dir = yield* CvuDirectory.CvuDirectory
      const first = yield* (yield* Payments.Payments).create(createRequest({ external_id: "e0" }))
      const a = copy(first, "e1")
      const b = copy(first, "e2")
      const list = [
        a,
        first, // stored before
        b,
        copy(first, "e1", cvu(1900)), // the id of one before it in the list
        copy(first, "e3", b.cvu) // the CVU of one before it in the list
      ]
      const answers = yield* repo.insertAll(list)
      expect(answers.map(Either.isRight)).toEqual([true, false, true, false, false])
      for (const answer of answers) if (Either.isLeft(answer)) expect(answer.left._tag).toBe("Conflict")
      expect(yield* repo.findById(a.id)).toEqual(Option.some(a))
      expect(yield* repo.findById(b.id)).toEqual(Option.some(b))
      expect(yield* repo.findById(first.id)).toEqual(Option.some(first))
      expect(yield* repo.findByExternalId(u1, Ids.ExternalId.make("e3"))).toEqual(Option.none())
      expect(yield* repo.findByCvu(cvu(1900))).toEqual(Option.none())
      for (const p of [first, a, b])
        expect(yield* dir.find(p.cvu)).toEqual(
          Option.some(
            new CvuDirectory.CvuEntry({ cvu: p.cvu, owner: "payment", owner_id: p.id, user_id: u1 })
          )
        )
      expect(yield* repo.insertAll([])).toEqual([])

      // A CVU a customer holds: the list dies with `CvuTaken`, and none of it is stored.
      const taken = cvu(5000)
      yield* customerOn(taken, first.creation_timestamp)
      const c = copy(first, "e4")
      const exit = yield* Effect.exit(repo.insertAll([c, copy(first, "e5", taken)]))
      const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
      expect(Option.getOrNull(defect)).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect((Option.getOrThrow(defect) as CvuDirectory.CvuTaken).cvu).toBe(taken)
      expect(yield* repo.findById(c.id)).toEqual(Option.none())
      expect(yield* dir.find(c.cvu)).toEqual(Option.none())
      expect(Option.map(yield* dir.find(taken), (e) => e.owner)).toEqual(Option.some("customer"))
    })
  },
  {
    name: "payments: 50 concurrent creations, with repeated and conflicting external ids, answer each as alone",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* PaymentRepository.PaymentRepository
      const dir = yield* CvuDirectory.CvuDirectory
      const bank = yield* SandboxBank.SandboxBank
      const { batches, opened, payments } = yield* observed()
      // 30 distinct orders; c0..c4 asked twice more, identically; k0..k4 twice at different prices.
      const requests = [
        ...Array.from({ length: 30 }, (_, i) => createRequest({ external_id: `c${i}` })),
        ...Array.from({ length: 10 }, (_, i) => createRequest({ external_id: `c${i % 5}` })),
        ...Array.from({ length: 10 }, (_, i) =>
          createRequest({ external_id: `k${i % 5}`, price: { amount: i < 5 ? 1500 : 2500, currency: "ARS" } })
        )
      ]
      const before = (yield* created).count
      const answers = yield* Effect.all(
        requests.map((r) => Effect.either(payments.create(r))),
        { concurrency: "unbounded" }
      )
      expect(Math.max(...batches)).toBeGreaterThan(1)
      const stored = new Map<string, Payment.Payment>()
      for (const ext of new Set(requests.map((r) => r.external_id!))) {
        const p = yield* repo.findByExternalId(u1, ext)
        expect(Option.isSome(p)).toBe(true)
        stored.set(ext, Option.getOrThrow(p))
      }
      expect(stored.size).toBe(35)
      for (let i = 0; i < 40; i++)
        expect(answers[i]).toEqual(Either.right(stored.get(`c${i < 30 ? i : i % 5}`)))
      for (let k = 0; k < 5; k++) {
        const pair = [answers[40 + k]!, answers[45 + k]!]
        const winner = stored.get(`k${k}`)!
        expect(pair.filter(Either.isRight)).toEqual([Either.right(winner)])
        const loser = pair.find(Either.isLeft)!
        expect(Either.isLeft(loser) && loser.left).toMatchObject({ key: "payment.external_id.conflict" })
        expect(Number(winner.price.minor)).toBe(pair[0] === loser ? 250000 : 150000)
      }
      expect((yield* created).count - before).toBe(35)
      // Every stored payment's CVU is in the directory, and open; every other CVU was released.
      expect(opened).toHaveLength(50)
      const kept = new Set([...stored.values()].map((p) => p.cvu as string))
      for (const p of stored.values())
        expect(yield* dir.find(p.cvu)).toEqual(
          Option.some(
            new CvuDirectory.CvuEntry({ cvu: p.cvu, owner: "payment", owner_id: p.id, user_id: u1 })
          )
        )
      for (const c of opened) {
        expect(yield* bank.isOpen(c)).toBe(kept.has(c))
        if (!kept.has(c)) expect(yield* dir.find(c)).toEqual(Option.none())
      }
    })
  },
  {
    name: "payments: a concurrent creation given a CVU of the directory dies alone; the others of its batch are stored",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* PaymentRepository.PaymentRepository
      const first = yield* (yield* Payments.Payments).create(createRequest({ external_id: "first" }))
      // The third account opened is given a CVU the directory holds for a customer.
      const held = cvu(7000)
      yield* customerOn(held, first.creation_timestamp)
      const { batches, payments } = yield* observed((n, c) => (n === 2 ? held : c))
      const exits = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) =>
          Effect.exit(payments.create(createRequest({ external_id: `o${i}` })))
        ),
        { concurrency: "unbounded" }
      )
      expect(Math.max(...batches)).toBeGreaterThan(1)
      const died = exits.filter((e) => Exit.isFailure(e) && Option.isSome(Cause.dieOption(e.cause)))
      expect(died).toHaveLength(1)
      const defect = Option.getOrThrow(Cause.dieOption((died[0] as Exit.Failure<unknown, unknown>).cause))
      expect(defect).toBeInstanceOf(CvuDirectory.CvuTaken)
      expect(yield* repo.findByCvu(held)).toEqual(Option.none())
      for (const exit of exits) {
        if (Exit.isSuccess(exit)) expect(yield* repo.findById(exit.value.id)).toEqual(Option.some(exit.value))
      }
      expect(exits.filter(Exit.isSuccess)).toHaveLength(5)
    })
  }
]
