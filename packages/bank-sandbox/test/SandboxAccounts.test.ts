/**
 * The sandbox bank that knows stored accounts (`SandboxAccounts.bankLayer`): an account in
 * storage that the bank's memory does not hold (registered by another process, or before a
 * restart) answers holder look-ups, takes transfers to its alias (booked to its number) and keeps
 * its alias from new CVUs; and the bank's own bookkeeping of registered holders.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { BankAccount, BankProvider as Bank, Ids, Money } from "@cobro/core"
import { MemoryDb } from "@cobro/core/ports"
import * as SandboxBank from "../src/SandboxBank.js"
import { SandboxAccount } from "../src/SandboxAccount.js"
import * as Repository from "../src/SandboxAccountRepository.js"
import * as SandboxAccounts from "../src/SandboxAccounts.js"

const { Alias, makeCuit } = BankAccount
const { UserId } = Ids
const BankProvider = Bank.BankProvider

const CBU = "2850590940090418135201"
const CUIT = makeCuit("20", "12345678")

const stored = new SandboxAccount({
  cbu: CBU,
  alias: Alias.make("cuenta.guardada"),
  holder_name: "Ana",
  cuit: CUIT,
  user_id: UserId.make("tienda"),
  creation_timestamp: DateTime.unsafeMake(0)
})

const bankOverStorage = SandboxAccounts.bankLayer.pipe(
  Layer.provideMerge(Repository.layerMemory),
  Layer.provide(MemoryDb.layer)
)

describe("SandboxAccounts.bankLayer", () => {
  it.effect("finds a stored account the bank's memory does not hold", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const repo = yield* Repository.SandboxAccountRepository
      // Unknown anywhere: holder_not_found, as before.
      expect((yield* Effect.flip(bank.lookupHolder(CBU))).reason).toBe("holder_not_found")
      yield* repo.insert(stored)
      expect(yield* sandbox.knows(CBU)).toBe(false)
      const byAlias = yield* bank.lookupHolder("cuenta.guardada")
      expect(byAlias).toMatchObject({ account: CBU, cuit: CUIT, name: "Ana" })
      expect(yield* sandbox.knows(CBU)).toBe(true)
      expect(yield* bank.lookupHolder(CBU)).toMatchObject({ account: CBU, name: "Ana" })
    }).pipe(Effect.provide(bankOverStorage))
  )

  it.effect("a transfer to a stored account's alias is booked to its number", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      yield* (yield* Repository.SandboxAccountRepository).insert(stored)
      yield* bank.sendTransfer({ to: "cuenta.guardada", amount: Money.make(1234n, "ARS"), reference: "po_1" })
      yield* bank.sendTransfer({ to: CBU, amount: Money.make(500n, "ARS"), reference: "po_2" })
      const received = yield* sandbox.receivedBy(CBU, 10)
      expect(received.map((t) => [t.reference, t.to, t.account, t.amount.minor, t.status])).toEqual([
        ["po_2", CBU, CBU, 500n, "completed"],
        ["po_1", "cuenta.guardada", CBU, 1234n, "completed"]
      ])
      expect(yield* sandbox.receivedBy(CBU, 1)).toHaveLength(1)
    }).pipe(Effect.provide(bankOverStorage))
  )

  it.effect("a stored alias is not given to a new CVU", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      yield* (yield* Repository.SandboxAccountRepository).insert(stored)
      const refused = yield* Effect.flip(bank.openAccount({ alias: Alias.make("cuenta.guardada") }))
      expect(refused.reason).toBe("alias_taken")
    }).pipe(Effect.provide(bankOverStorage))
  )
})

describe("SandboxBank registered holders", () => {
  it.effect("knows its own CVUs and registered accounts; forgets a holder with its alias", () =>
    Effect.gen(function* () {
      const bank = yield* BankProvider
      const sandbox = yield* SandboxBank.SandboxBank
      const own = yield* bank.openAccount({ holder: { cuit: CUIT, name: "Tienda" } })
      expect(yield* sandbox.knows(own.cvu)).toBe(true)
      expect(yield* sandbox.knows(own.alias)).toBe(true)
      yield* sandbox.registerHolder({ account: CBU, alias: "cuenta.externa", cuit: CUIT, name: "Ana" })
      expect(yield* sandbox.knows("cuenta.externa")).toBe(true)
      yield* sandbox.forgetHolder(CBU)
      expect(yield* sandbox.knows(CBU)).toBe(false)
      expect(yield* sandbox.knows("cuenta.externa")).toBe(false)
      expect((yield* Effect.flip(bank.lookupHolder("cuenta.externa"))).reason).toBe("holder_not_found")
      // A transfer that fails is not received.
      yield* sandbox.failTransfersLate(CBU, "account closed")
      yield* bank.sendTransfer({ to: CBU, amount: Money.make(100n, "ARS"), reference: "po_9" })
      yield* bank.transferStatus("po_9")
      expect(yield* sandbox.receivedBy(CBU, 10)).toEqual([])
    }).pipe(Effect.provide(SandboxBank.layer))
  )
})
