import { describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Effect, Either, ParseResult, Schema, Stream, TestClock } from "effect"
import {
  BankAccount,
  BankProvider,
  Customer,
  Customers,
  FeePolicy,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  Transfers,
  User
} from "../src/index.js"
import { Faucet, SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { ars, events, expectLedgerOk, retriedAfterStop, seedUser } from "./fixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const u1 = Ids.UserId.make("u1")
const u2 = Ids.UserId.make("u2")
const cid = (s: string) => Customer.CustomerId.make(s)

/** Seeds u1 (prefix "tienda") and u2 (prefix "otra"). */
const seedUsers = Effect.gen(function* () {
  yield* seedUser({ alias_prefix: User.AliasPrefix.make("tienda") })
  yield* seedUser({
    user_id: u2,
    email: "dos@example.com",
    name: "Tienda Dos",
    alias_prefix: User.AliasPrefix.make("otra")
  })
})

const createRequest = (fields: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
    user_id: "u1",
    alias: ".juan",
    customer_id: "20123456",
    name: "Juan Pérez",
    contact: { email: "juan@example.com" },
    webhook_url: "https://shop.example.com/hooks/customers",
    ...fields
  })

const decodeCreate = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownEither(Customer.CreateCustomerRequest)({
    user_id: "u1",
    alias: ".juan",
    customer_id: "20123456",
    name: "Juan Pérez",
    ...fields
  }).pipe(Either.mapLeft((e) => ParseResult.TreeFormatter.formatErrorSync(e)))

/** The decode error's text, or "" when the request is valid. */
const decodeError = (fields: Record<string, unknown>) =>
  Either.match(decodeCreate(fields), { onLeft: (message) => message, onRight: () => "" })

const create = (owner: Ids.UserId, fields: Record<string, unknown> = {}) =>
  Effect.flatMap(Customers.Customers, (s) => s.create(owner, createRequest({ user_id: owner, ...fields })))

const changeAlias = (owner: Ids.UserId, id: string, alias: string, create_new_cvu: boolean) =>
  Effect.flatMap(Customers.Customers, (s) =>
    s.changeAlias(
      owner,
      cid(id),
      Schema.decodeUnknownSync(Customer.ChangeAliasRequest)({ alias, create_new_cvu })
    )
  )

const pay = (cvu: BankAccount.Cvu, amount: Money.Money) =>
  Effect.gen(function* () {
    const bank = yield* SandboxBank.SandboxBank
    const transfers = yield* Transfers.Transfers
    const transfer = yield* bank.simulateIncoming({
      cvu,
      amount,
      senderCuit: BankAccount.makeCuit("20", "30111222"),
      senderName: "Ana Gómez"
    })
    return { transfer, outcome: yield* transfers.ingest(transfer) }
  })

const ledgerBalance = (owner: Ids.UserId, id: string) =>
  Effect.flatMap(Ledger.Ledger, (l) => l.balance(LedgerAccount.customerBalance(owner, id)))

const stored = (owner: Ids.UserId, id: string) =>
  Effect.flatMap(Customers.Customers, (s) => s.get(owner, cid(id)))

describe("Customers.create", () => {
  it.effect(
    "under an Idempotency-Key the answer commits with the customer: a retry after a stop replays it",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* seedUsers
          const customers = yield* Customers.Customers
          const retry = yield* retriedAfterStop("c-1", customers.create(u1, createRequest()), (c) => ({
            cvu: c.bank_info.cvu
          }))
          expect(retry.replayed).toBe(true)
          const stored = yield* customers.get(u1, cid("20123456"))
          expect(JSON.parse(retry.result)).toEqual({ cvu: stored.bank_info.cvu })
        })
      )
  )

  it.effect("opens a permanent CVU under prefix + suffix with a zero balance", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 0))
        const customer = yield* create(u1)
        expect(customer.customer_id).toBe("20123456")
        expect(customer.alias).toBe(".juan")
        expect(customer.bank_info.alias).toBe("tienda.juan")
        expect(BankAccount.isValidCvu(customer.bank_info.cvu)).toBe(true)
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(customer.bank_info.cvu)).toBe(true)
        expect(customer.balance).toEqual(Money.zero("ARS"))
        expect(customer.contact?.email).toBe("juan@example.com")

        const wire = yield* Schema.encode(Customer.CustomerCreated)(
          Customer.CustomerCreated.fromCustomer(customer)
        )
        expect(wire).toEqual({
          customer_id: "20123456",
          bank_info: { cvu: customer.bank_info.cvu, alias: "tienda.juan" },
          balance: 0,
          creation_timestamp: "2026-11-20T12:00:00.000Z"
        })
        const full = yield* Schema.encode(Customer.Customer)(customer)
        expect(full.balance).toBe(0)
        expect(yield* ledgerBalance(u1, "20123456")).toEqual(Money.zero("ARS"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("without an alias prefix fails with user.alias.prefix.not.set on the alias field", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const error = yield* Effect.flip(create(u1))
        expect(error).toMatchObject({
          _tag: "InvalidInput",
          key: "user.alias.prefix.not.set",
          field: "alias"
        })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects a prefix + alias over 20 characters and accepts exactly 20", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        // "tienda" (6) + 15 = 21
        const tooLong = yield* Effect.flip(create(u1, { alias: ".abcdefghijklmn" }))
        expect(tooLong).toMatchObject({ _tag: "InvalidInput", key: "customer.alias.invalid", field: "alias" })
        expect(tooLong.message).toContain("20 characters")
        const exact = yield* create(u1, { alias: ".abcdefghijklm" })
        expect(exact.bank_info.alias).toHaveLength(20)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects invalid alias characters and a total alias shorter than 6", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        for (const alias of ["Juan", "juan_perez", "juan perez", "juan!", "", "ñandu"]) {
          const decoded = decodeCreate({ alias })
          expect(Either.isLeft(decoded), alias).toBe(true)
        }
        expect(decodeError({ alias: "Juan" })).toContain("lowercase letters, digits, '.' and '-'")
        yield* seedUser({
          user_id: Ids.UserId.make("u3"),
          email: "tres@example.com",
          alias_prefix: User.AliasPrefix.make("ab")
        })
        const short = yield* Effect.flip(create(Ids.UserId.make("u3"), { alias: "c" }))
        expect(short).toMatchObject({ key: "customer.alias.invalid", field: "alias" })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("writes the prefix's underscores as dots in the bank alias", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser({ alias_prefix: User.AliasPrefix.make("mi_shop_") })
        const customer = yield* create(u1, { alias: "juan" })
        expect(customer.bank_info.alias).toBe("mi.shop.juan")
        expect(BankAccount.isValidAlias(customer.bank_info.alias)).toBe(true)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects an alias held by another customer of the same or another user", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        yield* create(u1, { customer_id: "c1", alias: ".juan" })
        const same = yield* Effect.flip(create(u1, { customer_id: "c2", alias: ".juan" }))
        expect(same).toMatchObject({ _tag: "Conflict", key: "customer.alias.taken" })

        // u2's prefix "tiend" + "a.ana" spells the same bank alias as u1's "tienda" + ".ana".
        yield* seedUser({
          user_id: Ids.UserId.make("u3"),
          email: "tres@example.com",
          alias_prefix: User.AliasPrefix.make("tiend")
        })
        yield* create(u1, { customer_id: "c3", alias: ".ana" })
        const other = yield* Effect.flip(create(Ids.UserId.make("u3"), { customer_id: "c1", alias: "a.ana" }))
        expect(other).toMatchObject({ _tag: "Conflict", key: "customer.alias.taken" })

        // An alias the bank already gave someone else (here: a payment-like account) is refused too.
        yield* (yield* BankProvider.BankProvider).openAccount({
          alias: BankAccount.Alias.make("tienda.pedro")
        })
        const atBank = yield* Effect.flip(create(u1, { customer_id: "c4", alias: ".pedro" }))
        expect(atBank).toMatchObject({ _tag: "Conflict", key: "customer.alias.taken" })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("customer_id is unique per user: a duplicate is customer.exists, another user may reuse it", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        yield* create(u1, { customer_id: "20123456", alias: ".juan" })
        const dup = yield* Effect.flip(create(u1, { customer_id: "20123456", alias: ".juan2" }))
        expect(dup).toMatchObject({ _tag: "Conflict", key: "customer.exists" })
        const theirs = yield* create(u2, { customer_id: "20123456", alias: ".juan" })
        expect(theirs.bank_info.alias).toBe("otra.juan")
        expect(
          Either.isLeft(decodeCreate({ customer_id: "has space" })) &&
            Either.isLeft(decodeCreate({ customer_id: "x".repeat(65) })) &&
            Either.isRight(decodeCreate({ customer_id: "3f2b8c1e-9a4d-4c1b-8e2f-1a2b3c4d5e6f" }))
        ).toBe(true)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("concurrent creates of one customer_id: one wins, the loser's CVU and alias are given back", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const results = yield* Effect.all(
          [
            create(u1, { customer_id: "c1", alias: ".aaa" }),
            create(u1, { customer_id: "c1", alias: ".bbb" })
          ],
          { concurrency: "unbounded", mode: "either" }
        )
        const winners = results.filter(Either.isRight).map((r) => r.right)
        const losers = results.filter(Either.isLeft).map((r) => r.left)
        expect(winners).toHaveLength(1)
        expect(losers).toEqual([expect.objectContaining({ _tag: "Conflict", key: "customer.exists" })])
        const loserAlias = winners[0]!.alias === ".aaa" ? ".bbb" : ".aaa"
        const reuse = yield* create(u1, { customer_id: "c2", alias: loserAlias })
        expect(reuse.bank_info.alias).toBe(`tienda${loserAlias}`)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("requires an email when a contact is sent and a valid webhook_url", () =>
    Effect.sync(() => {
      const noEmail = decodeCreate({ contact: {} })
      expect(Either.isLeft(noEmail)).toBe(true)
      expect(decodeError({ contact: {} })).toContain("email")
      expect(Either.isLeft(decodeCreate({ contact: { email: "not-an-email" } }))).toBe(true)
      expect(Either.isRight(decodeCreate({ contact: null }))).toBe(true)
      expect(Either.isRight(decodeCreate({}))).toBe(true)
      for (const url of ["not a url", "ftp://example.com/x", "/relative/path"]) {
        expect(Either.isLeft(decodeCreate({ webhook_url: url })), url).toBe(true)
      }
      expect(Either.isRight(decodeCreate({ webhook_url: "http://localhost:8080/hook" }))).toBe(true)
    })
  )
})

describe("Customers.changeAlias", () => {
  it.effect("create_new_cvu false keeps the CVU and changes the alias at the bank", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const before = yield* create(u1)
        yield* TestClock.adjust("1 hour")
        const after = yield* changeAlias(u1, "20123456", ".jperez", false)
        expect(after.bank_info.cvu).toBe(before.bank_info.cvu)
        expect(after.bank_info.alias).toBe("tienda.jperez")
        expect(after.alias).toBe(".jperez")
        expect(DateTime.toEpochMillis(after.last_modified_timestamp)).toBe(
          DateTime.toEpochMillis(before.creation_timestamp) + 3_600_000
        )
        const wire = yield* Schema.encode(Customer.CustomerAliasChanged)(
          Customer.CustomerAliasChanged.fromCustomer(after)
        )
        expect(Object.keys(wire).sort()).toEqual([
          "alias",
          "bank_info",
          "customer_id",
          "last_modified_timestamp"
        ])
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(before.bank_info.cvu)).toBe(true)
        // The old alias is free again, the CVU still takes money.
        yield* create(u1, { customer_id: "c2", alias: ".juan" })
        const { outcome } = yield* pay(after.bank_info.cvu, ars("100"))
        expect(outcome._tag).toBe("Credited")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("create_new_cvu true assigns a new CVU, releases the old one, and bounces transfers to it", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const sandbox = yield* SandboxBank.SandboxBank
        const before = yield* create(u1)
        yield* pay(before.bank_info.cvu, ars("50"))
        const after = yield* changeAlias(u1, "20123456", ".juan.nuevo", true)
        expect(after.bank_info.cvu).not.toBe(before.bank_info.cvu)
        expect(after.bank_info.alias).toBe("tienda.juan.nuevo")
        expect(yield* sandbox.isOpen(before.bank_info.cvu)).toBe(false)
        expect(yield* sandbox.isOpen(after.bank_info.cvu)).toBe(true)
        expect(after.balance).toEqual(ars("49.40"))

        const old = yield* pay(before.bank_info.cvu, ars("30"))
        expect(old.outcome._tag).toBe("Bounced")
        expect((yield* sandbox.returnedTransfers).map((t) => t.bank_transaction_id)).toContain(
          old.transfer.bank_transaction_id
        )
        const fresh = yield* pay(after.bank_info.cvu, ars("20"))
        expect(fresh.outcome).toMatchObject({ _tag: "Credited", target: "customer" })
        const balance = (yield* stored(u1, "20123456")).balance
        expect(balance).toEqual(yield* ledgerBalance(u1, "20123456"))
        // 50 + 20 gross, less 1 % commission and 21 % IVA on it: 49.40 + 19.76.
        expect(balance).toEqual(ars("69.16"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("when the bank refuses an in-place change a new CVU is assigned and the old one released", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const sandbox = yield* SandboxBank.SandboxBank
        const before = yield* create(u1)
        yield* sandbox.refuseAliasChange(before.bank_info.cvu)
        const after = yield* changeAlias(u1, "20123456", ".jp", false)
        expect(after.bank_info.cvu).not.toBe(before.bank_info.cvu)
        expect(after.bank_info.alias).toBe("tienda.jp")
        expect(yield* sandbox.isOpen(before.bank_info.cvu)).toBe(false)
        expect(yield* sandbox.isOpen(after.bank_info.cvu)).toBe(true)
        expect((yield* pay(before.bank_info.cvu, ars("10"))).outcome._tag).toBe("Bounced")
        expect((yield* pay(after.bank_info.cvu, ars("10"))).outcome._tag).toBe("Credited")
        expect((yield* stored(u1, "20123456")).bank_info.cvu).toBe(after.bank_info.cvu)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects a taken alias, another user's customer, and a new CVU under the same alias", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const juan = yield* create(u1, { customer_id: "c1", alias: ".juan" })
        yield* create(u1, { customer_id: "c2", alias: ".ana" })
        const taken = yield* Effect.flip(changeAlias(u1, "c1", ".ana", false))
        expect(taken).toMatchObject({ _tag: "Conflict", key: "customer.alias.taken" })
        const foreign = yield* Effect.flip(changeAlias(u2, "c1", ".x.y.z", false))
        expect(foreign).toMatchObject({ _tag: "NotFound", key: "customer.not.found" })
        const same = yield* Effect.flip(changeAlias(u1, "c1", ".juan", true))
        expect(same).toMatchObject({ _tag: "InvalidInput", key: "customer.alias.unchanged" })
        const noop = yield* changeAlias(u1, "c1", ".juan", false)
        expect(noop.bank_info).toEqual(juan.bank_info)
        const tooLong = yield* Effect.flip(changeAlias(u1, "c1", ".abcdefghijklmn", true))
        expect(tooLong).toMatchObject({ key: "customer.alias.invalid" })
        expect(yield* stored(u1, "c1")).toEqual(juan)
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(juan.bank_info.cvu)).toBe(true)
        yield* expectLedgerOk
      })
    )
  )
})

describe("Customers.list", () => {
  it.effect("lists only the caller's customers, page by page, oldest first", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const service = yield* Customers.Customers
        for (let i = 0; i < 250; i++) {
          yield* create(u1, { customer_id: `c${i}`, alias: `.c${i}`, name: `Cliente ${i}` })
          if (i % 50 === 0) yield* TestClock.adjust("1 second")
        }
        yield* create(u2, { customer_id: "theirs", alias: ".x1" })
        const mine = Chunk.toReadonlyArray(yield* Stream.runCollect(service.list(u1, u1)))
        expect(mine).toHaveLength(250)
        expect(new Set(mine.map((c) => c.customer_id)).size).toBe(250)
        expect(mine.every((c) => c.user_id === u1)).toBe(true)
        expect(mine[0]!.customer_id).toBe("c0")
        const theirs = Chunk.toReadonlyArray(yield* Stream.runCollect(service.list(u2, u2)))
        expect(theirs.map((c) => c.customer_id)).toEqual(["theirs"])
        const wire = yield* Schema.encode(Customer.CustomerSummary)(
          Customer.CustomerSummary.fromCustomer(theirs[0]!)
        )
        expect(Object.keys(wire).sort()).toEqual([
          "balance",
          "bank_info",
          "creation_timestamp",
          "customer_id",
          "name"
        ])
        const foreign = yield* Effect.flip(Stream.runCollect(service.list(u1, u2)))
        expect(foreign).toMatchObject({ _tag: "NotFound" })
        yield* expectLedgerOk
      })
    )
  )
})

describe("Customer transfers", () => {
  it.effect("a transfer is recorded, credited net of fees, booked and announced", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 0))
        const customer = yield* create(u1)
        const { transfer, outcome } = yield* pay(customer.bank_info.cvu, ars("1000"))
        expect(outcome).toMatchObject({ _tag: "Credited", target: "customer" })

        const event = (yield* events).find((e) => e.type === "customer.payment_received")!
        expect(event.webhook_url).toBe("https://shop.example.com/hooks/customers")
        expect(event.user_id).toBe(u1)
        expect(Object.keys(event.payload).sort()).toEqual(["customerId", "message", "transactionId"])
        expect(event.payload).toMatchObject({ message: "Customer payment received", customerId: "20123456" })

        const service = yield* Customers.Customers
        const id = Customer.CustomerTransactionId.make(event.payload["transactionId"] as string)
        const tx = yield* service.getTransaction(u1, cid("20123456"), id)
        expect(tx.amount).toEqual(ars("1000"))
        expect(tx.commission_amount).toEqual(ars("10"))
        expect(tx.commission_tax_amount).toEqual(ars("2.10"))
        expect(tx.credited_amount).toEqual(ars("987.90"))
        expect(tx.sender_cuit).toBe(BankAccount.makeCuit("20", "30111222"))
        expect(tx.sender_name).toBe("Ana Gómez")
        expect(tx.bank_transaction_id).toBe(transfer.bank_transaction_id)
        expect(tx.address).toBe(customer.bank_info.cvu)
        const wire = yield* Schema.encode(Customer.CustomerTransaction)(tx)
        expect(wire).toMatchObject({
          amount: "1000.00",
          credited_amount: "987.90",
          currency: "ARS",
          creation_timestamp: "2026-11-20T12:00:00.000Z"
        })

        const after = yield* stored(u1, "20123456")
        expect(after.balance).toEqual(ars("987.90"))
        expect(yield* ledgerBalance(u1, "20123456")).toEqual(after.balance)
        expect(after.last_modified_timestamp).toEqual(customer.last_modified_timestamp)

        const foreign = yield* Effect.flip(service.getTransaction(u2, cid("20123456"), id))
        expect(foreign).toMatchObject({ _tag: "NotFound" })
        yield* create(u1, { customer_id: "other", alias: ".otro" })
        const wrongCustomer = yield* Effect.flip(service.getTransaction(u1, cid("other"), id))
        expect(wrongCustomer).toMatchObject({ _tag: "NotFound", key: "transaction.not.found" })
        const missing = yield* Effect.flip(
          service.getTransaction(u1, cid("20123456"), Customer.CustomerTransactionId.make("ctx_nope"))
        )
        expect(missing).toMatchObject({ _tag: "NotFound", key: "transaction.not.found" })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a duplicate bank notification credits once", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const customer = yield* create(u1)
        const transfers = yield* Transfers.Transfers
        const { transfer } = yield* pay(customer.bank_info.cvu, ars("500"))
        const again = yield* transfers.ingest(transfer)
        expect(again._tag).toBe("Duplicate")
        const raced = yield* Effect.all([transfers.ingest(transfer), transfers.ingest(transfer)], {
          concurrency: "unbounded"
        })
        expect(raced.map((o) => o._tag)).toEqual(["Duplicate", "Duplicate"])
        expect((yield* stored(u1, "20123456")).balance).toEqual(ars("493.95"))
        expect((yield* events).filter((e) => e.type === "customer.payment_received")).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("200 concurrent transfers leave the balance exact and the ledger balanced", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const customer = yield* create(u1)
        const outcomes = yield* Effect.all(
          Array.from({ length: 200 }, (_, i) =>
            pay(customer.bank_info.cvu, Money.make(BigInt(10_000 + i), "ARS"))
          ),
          { concurrency: "unbounded" }
        )
        expect(outcomes.every((o) => o.outcome._tag === "Credited")).toBe(true)
        // Each credit is gross − 1 % commission − 21 % IVA on it, rounded half-even per line.
        const policy = FeePolicy.percent(FeePolicy.sandboxPolicy)
        const credits = yield* Effect.forEach(outcomes, ({ transfer }) =>
          Effect.map(policy.feesFor({ user_id: u1, amount: transfer.amount, kind: "customer" }), (fees) =>
            FeePolicy.credited(transfer.amount, fees)
          )
        )
        const expected = credits.reduce((acc, m) => acc + m.minor, 0n)
        const balance = (yield* stored(u1, "20123456")).balance
        expect(balance.minor).toBe(expected)
        expect(yield* ledgerBalance(u1, "20123456")).toEqual(balance)
        expect((yield* events).filter((e) => e.type === "customer.payment_received")).toHaveLength(200)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a non-ARS transfer to a customer's CVU is returned", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const customer = yield* create(u1)
        const { outcome } = yield* pay(customer.bank_info.cvu, Money.make(1000n, "BRL"))
        expect(outcome._tag).toBe("Bounced")
        expect((yield* stored(u1, "20123456")).balance).toEqual(Money.zero("ARS"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("the faucet accepts the owner's customer CVUs only", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const faucet = yield* Faucet.Faucet
        const customer = yield* create(u1)
        const sent = yield* faucet.send(u1, customer.bank_info.cvu, new Faucet.FaucetRequest({ amount: 100 }))
        expect(sent.outcome).toMatchObject({ _tag: "Credited", target: "customer" })
        expect((yield* stored(u1, "20123456")).balance).toEqual(ars("98.79"))
        const foreign = yield* Effect.flip(
          faucet.send(u2, customer.bank_info.cvu, new Faucet.FaucetRequest({ amount: 100 }))
        )
        expect(foreign).toMatchObject({ _tag: "NotFound" })
        yield* expectLedgerOk
      })
    )
  )
})
