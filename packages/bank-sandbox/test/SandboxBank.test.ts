import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Random } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { BankAccount, BankProvider as Bank, Money } from "@cobro/core"
import * as SandboxBank from "../src/SandboxBank.js"

const { Alias, isValidAlias, isValidCbu, isValidCuit, isValidCvu, makeCuit, makeCvu } = BankAccount
const BankProvider = Bank.BankProvider
type BankProvider = Bank.BankProvider

const ars = (minor: bigint) => Money.make(minor, "ARS")
const EXTERNAL_CVU = makeCvu("0000007", "1234567890123")
const EXTERNAL_CBU = "2850590940090418135201"
const HOLDER_CUIT = makeCuit("20", "12345678")

setFlagsFromString("--expose-gc")
const collect = runInNewContext("gc") as () => void
/** The heap still reachable after a full collection, in bytes. */
const retainedHeap = Effect.sync(() => {
  collect()
  return process.memoryUsage().heapUsed
})

const withSandbox = <A, E>(self: Effect.Effect<A, E, BankProvider | SandboxBank.SandboxBank>) =>
  Effect.provide(self, SandboxBank.layer)

describe("SandboxBank accounts", () => {
  it.effect("opens 200 accounts with valid, unique CVUs and aliases", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const refs = yield* Effect.forEach(Array.from({ length: 200 }), () => bank.openAccount({}))
      for (const ref of refs) {
        expect(isValidCvu(ref.cvu)).toBe(true)
        expect(ref.cvu.startsWith("0000003")).toBe(true)
        expect(isValidAlias(ref.alias)).toBe(true)
        expect(ref.alias).toMatch(/^[a-z]+\.[a-z]+\.[a-z]+$/)
      }
      expect(new Set(refs.map((r) => r.cvu)).size).toBe(200)
      expect(new Set(refs.map((r) => r.alias)).size).toBe(200)
      expect(yield* sandbox.isOpen(refs[0]!.cvu)).toBe(true)
    }).pipe(withSandbox)
  )

  it.effect("draws aliases from millions: 3,000 accounts use over 250 words in each place", () =>
    // With 48 words there were 110,592 aliases, and a load test's 110,593rd open payment failed
    // with `unavailable`. 288 words make 23.9 million; 3,000 draws show nearly all of them.
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const refs = yield* Effect.forEach(Array.from({ length: 3000 }), () => bank.openAccount({}))
      const words = refs.map((r) => r.alias.split("."))
      for (const place of [0, 1, 2]) {
        expect(new Set(words.map((w) => w[place])).size).toBeGreaterThan(250)
      }
    }).pipe(withSandbox)
  )

  it.effect(
    "forgets closed accounts and transfers in: 20,000 of each leave the heap as it was",
    () =>
      // It kept every CVU ever issued (~300 bytes each) and every transfer id (~360 bytes), so a
      // server on it grew by ~13 MB per 20,000 payments paid through the faucet, for ever.
      Effect.gen(function* () {
        const bank = yield* BankProvider
        const sandbox = yield* SandboxBank.SandboxBank
        const { cvu } = yield* bank.openAccount({})
        const before = yield* retainedHeap
        for (let i = 0; i < 20_000; i++) {
          const account = yield* bank.openAccount({})
          yield* sandbox.simulateIncoming({ cvu: account.cvu, amount: ars(100n) })
          yield* bank.releaseAccount(account.cvu)
        }
        const growth = (yield* retainedHeap) - before
        expect(growth).toBeLessThan(2 * 1024 * 1024)
        // and what it forgot still behaves: a transfer in can still be returned
        const incoming = yield* sandbox.simulateIncoming({ cvu, amount: ars(100n) })
        yield* bank.returnTransfer(incoming)
        expect(yield* sandbox.returnedTransfers).toEqual([incoming])
      }).pipe(withSandbox),
    60_000
  )

  it.effect("is deterministic under a seeded Random", () =>
    Effect.gen(function* () {
      const open = () =>
        Effect.gen(function* () {
          const bank = yield* BankProvider
          return yield* Effect.forEach([1, 2, 3], () => bank.openAccount({}))
        }).pipe(withSandbox, Effect.withRandom(Random.make("seed")))
      const [first, second] = [yield* open(), yield* open()]
      expect(second.map((r) => [r.cvu, r.alias])).toEqual(first.map((r) => [r.cvu, r.alias]))
    })
  )

  it.effect("honours a requested alias and refuses a taken one", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const alias = Alias.make("mi.tienda.online")
      const ref = yield* bank.openAccount({ alias })
      expect(ref.alias).toBe(alias)
      const error = yield* Effect.flip(bank.openAccount({ alias }))
      expect(error.reason).toBe("alias_taken")
    }).pipe(withSandbox)
  )

  it.effect("release closes the account, frees its alias and is idempotent", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const alias = Alias.make("mi.tienda.online")
      const ref = yield* bank.openAccount({ alias })
      yield* bank.releaseAccount(ref.cvu)
      yield* bank.releaseAccount(ref.cvu)
      expect(yield* sandbox.isOpen(ref.cvu)).toBe(false)
      const again = yield* bank.openAccount({ alias })
      expect(again.alias).toBe(alias)
      expect(again.cvu).not.toBe(ref.cvu)
      expect((yield* Effect.flip(bank.changeAlias(ref.cvu, Alias.make("otra.cosa")))).reason).toBe("rejected")
    }).pipe(withSandbox)
  )

  it.effect("changes aliases unless refused, taken or unknown", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const a = yield* bank.openAccount({})
      const b = yield* bank.openAccount({})
      const changed = yield* bank.changeAlias(a.cvu, Alias.make("nuevo.alias"))
      expect(changed.alias).toBe("nuevo.alias")
      // the old alias is free again
      expect((yield* bank.changeAlias(b.cvu, a.alias)).alias).toBe(a.alias)
      expect((yield* Effect.flip(bank.changeAlias(a.cvu, a.alias))).reason).toBe("alias_taken")
      expect((yield* Effect.flip(bank.changeAlias(EXTERNAL_CVU, Alias.make("x.y.zzz")))).reason).toBe(
        "rejected"
      )

      yield* sandbox.refuseAliasChange(a.cvu)
      for (let i = 0; i < 2; i++) {
        const refused = yield* Effect.flip(bank.changeAlias(a.cvu, Alias.make("otro.alias")))
        expect(refused.reason).toBe("alias_change_refused")
      }
      yield* sandbox.allowAliasChange(a.cvu)
      expect((yield* bank.changeAlias(a.cvu, Alias.make("otro.alias"))).alias).toBe("otro.alias")
    }).pipe(withSandbox)
  )
})

describe("SandboxBank holders", () => {
  it.effect("finds registered holders by CVU, CBU and alias", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      yield* sandbox.registerHolder({
        account: EXTERNAL_CVU,
        alias: "juan.perez.mp",
        cuit: HOLDER_CUIT,
        name: "Juan"
      })
      yield* sandbox.registerHolder({ account: EXTERNAL_CBU, cuit: HOLDER_CUIT, name: "Ana" })

      const byCvu = yield* bank.lookupHolder(EXTERNAL_CVU)
      expect(byCvu).toMatchObject({ account: EXTERNAL_CVU, cuit: HOLDER_CUIT, name: "Juan" })
      expect(yield* bank.lookupHolder("juan.perez.mp")).toEqual(byCvu)
      expect((yield* bank.lookupHolder(EXTERNAL_CBU)).name).toBe("Ana")

      for (const unknown of ["no.such.alias", makeCvu("0000003", "0000000000001"), "not an address", ""]) {
        expect((yield* Effect.flip(bank.lookupHolder(unknown))).reason).toBe("holder_not_found")
      }
      // a registered alias cannot be issued to one of our accounts
      const error = yield* Effect.flip(bank.openAccount({ alias: Alias.make("juan.perez.mp") }))
      expect(error.reason).toBe("alias_taken")
    }).pipe(withSandbox)
  )

  it.effect("names the holder an account was opened for, by CVU and alias, until it is closed", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const holder = { cuit: makeCuit("30", "71234567"), name: "Tienda Uno" }
      const opened = yield* bank.openAccount({ holder })
      const named = yield* bank.lookupHolder(opened.cvu)
      expect(named).toMatchObject({ account: opened.cvu, ...holder })
      expect(yield* bank.lookupHolder(opened.alias)).toEqual(named)
      // The alias moves with the account.
      const renamed = yield* bank.changeAlias(opened.cvu, Alias.make("tienda.uno.pagos"))
      expect(yield* bank.lookupHolder("tienda.uno.pagos")).toEqual(named)
      expect((yield* Effect.flip(bank.lookupHolder(opened.alias))).reason).toBe("holder_not_found")
      // Closed: nobody holds it any more.
      yield* bank.releaseAccount(opened.cvu)
      expect((yield* Effect.flip(bank.lookupHolder(opened.cvu))).reason).toBe("holder_not_found")
      expect((yield* Effect.flip(bank.lookupHolder(renamed.alias))).reason).toBe("holder_not_found")
      // Opened without a holder: the bank names none.
      const anonymous = yield* bank.openAccount({})
      expect((yield* Effect.flip(bank.lookupHolder(anonymous.cvu))).reason).toBe("holder_not_found")
    }).pipe(withSandbox)
  )

  it.effect("refuses to register an invalid account", () =>
    Effect.gen(function* () {
      const sandbox = yield* SandboxBank.SandboxBank
      const exit = yield* Effect.exit(
        sandbox.registerHolder({ account: "123", cuit: HOLDER_CUIT, name: "X" })
      )
      expect(exit._tag).toBe("Failure")
    }).pipe(withSandbox)
  )
})

describe("SandboxBank transfers", () => {
  it.effect("sendTransfer is idempotent on reference", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const transfer = { to: EXTERNAL_CVU, amount: ars(10_000n), reference: "payout-1" }
      const first = yield* bank.sendTransfer(transfer)
      const second = yield* bank.sendTransfer(transfer)
      const other = yield* bank.sendTransfer({ ...transfer, reference: "payout-2" })
      expect(second.bank_transaction_id).toBe(first.bank_transaction_id)
      expect(other.bank_transaction_id).not.toBe(first.bank_transaction_id)
      const sent = yield* sandbox.sentTransfers
      expect(sent.map((t) => t.reference)).toEqual(["payout-1", "payout-2"])
      expect(sent[0]).toMatchObject({ to: EXTERNAL_CVU, bank_transaction_id: first.bank_transaction_id })
    }).pipe(withSandbox)
  )

  it.effect("fails transfers per control, also through an alias, until cleared", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      yield* sandbox.registerHolder({
        account: EXTERNAL_CVU,
        alias: "juan.perez.mp",
        cuit: HOLDER_CUIT,
        name: "Juan"
      })
      yield* sandbox.failTransfersTo(EXTERNAL_CVU, "unavailable")
      const transfer = { to: EXTERNAL_CVU, amount: ars(500n), reference: "payout-1" }
      expect((yield* Effect.flip(bank.sendTransfer(transfer))).reason).toBe("unavailable")
      const viaAlias = { ...transfer, to: "juan.perez.mp", reference: "payout-2" }
      expect((yield* Effect.flip(bank.sendTransfer(viaAlias))).reason).toBe("unavailable")
      yield* sandbox.failTransfersTo(EXTERNAL_CVU, "rejected")
      expect((yield* Effect.flip(bank.sendTransfer(transfer))).reason).toBe("rejected")
      expect(yield* sandbox.sentTransfers).toEqual([])

      yield* sandbox.clearFailures(EXTERNAL_CVU)
      const ok = yield* bank.sendTransfer(transfer)
      expect(ok.bank_transaction_id).toMatch(/^SBX-[0-9a-f]{16,}$/)
      expect(yield* sandbox.sentTransfers).toHaveLength(1)
    }).pipe(withSandbox)
  )

  it.effect("rejects transfers to malformed addresses and of non-positive amounts", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const bad = yield* Effect.flip(bank.sendTransfer({ to: "Bad Alias", amount: ars(1n), reference: "r1" }))
      expect(bad.reason).toBe("rejected")
      const zero = yield* Effect.flip(
        bank.sendTransfer({ to: EXTERNAL_CBU, amount: ars(0n), reference: "r2" })
      )
      expect(zero.reason).toBe("rejected")
    }).pipe(withSandbox)
  )

  it.effect("simulateIncoming gives valid senders and unique ids", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const { cvu } = yield* bank.openAccount({})
      const transfers = yield* Effect.forEach(Array.from({ length: 100 }), () =>
        sandbox.simulateIncoming({ cvu, amount: ars(150_000n) })
      )
      for (const t of transfers) {
        expect(t.cvu).toBe(cvu)
        expect(t.amount).toEqual(ars(150_000n))
        expect(isValidCuit(t.sender_cuit)).toBe(true)
        expect(isValidCbu(t.sender_account)).toBe(true)
        expect(t.sender_name).toBe("Pagador Sandbox")
        expect(t.bank_transaction_id).toMatch(/^SBX-[0-9a-f]{16,}$/)
      }
      expect(new Set(transfers.map((t) => t.bank_transaction_id)).size).toBe(100)

      const named = yield* sandbox.simulateIncoming({
        cvu,
        amount: ars(1n),
        senderCuit: HOLDER_CUIT,
        senderName: "Juan",
        senderAccount: EXTERNAL_CBU
      })
      expect(named).toMatchObject({
        sender_cuit: HOLDER_CUIT,
        sender_name: "Juan",
        sender_account: EXTERNAL_CBU
      })
    }).pipe(withSandbox)
  )

  it.effect("returnTransfer is idempotent and only for received transfers", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const { cvu } = yield* bank.openAccount({})
      const incoming = yield* sandbox.simulateIncoming({ cvu, amount: ars(100n) })
      yield* bank.returnTransfer(incoming)
      yield* bank.returnTransfer(incoming)
      expect(yield* sandbox.returnedTransfers).toEqual([incoming])

      // a transfer another bank instance made up is unknown here
      const foreign = yield* Effect.flatMap(SandboxBank.SandboxBank, (other) =>
        other.simulateIncoming({ cvu, amount: ars(100n) })
      ).pipe(withSandbox)
      expect((yield* Effect.flip(bank.returnTransfer(foreign))).reason).toBe("rejected")
    }).pipe(withSandbox)
  )

  it.effect("a drawn transfer is the bank's own but reaches the statement only once booked", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const { cvu } = yield* bank.openAccount({})
      const statement = Effect.map(
        bank.incomingTransfers({
          from: DateTime.unsafeMake(0),
          to: DateTime.unsafeMake("2100-01-01T00:00:00Z")
        }),
        (s) => s.transfers
      )
      const drawn = yield* sandbox.drawIncoming({ cvu, amount: ars(100n) })
      const other = yield* sandbox.drawIncoming({ cvu, amount: ars(100n) })
      expect(drawn.bank_transaction_id).not.toBe(other.bank_transaction_id)
      expect(yield* statement).toEqual([])
      yield* sandbox.bookIncoming(drawn)
      expect(yield* statement).toEqual([drawn])
      // never booked, still sealed as this bank's: it can be returned
      yield* bank.returnTransfer(other)
      expect(yield* sandbox.returnedTransfers).toEqual([other])
    }).pipe(withSandbox)
  )
})
