/**
 * Storage of the bank accounts sandbox testers registered (`SandboxAccount`): the sandbox bank
 * keeps accounts in memory only, so these are stored, and found again by number or alias when the
 * bank is asked about one it does not hold (after a restart, on another instance, or when the
 * operator's CLI registered it).
 */
import { Context, Effect, Either, HashMap, Layer, Option } from "effect"
import { Errors, type Ids } from "@cobro/core"
import { MemoryDb } from "@cobro/core/ports"
import type { SandboxAccount } from "./SandboxAccount.js"

export class SandboxAccountRepository extends Context.Tag("@cobro/bank-sandbox/SandboxAccountRepository")<
  SandboxAccountRepository,
  {
    /** Stores a new account; `Conflict` when its number or alias is already registered. */
    readonly insert: (account: SandboxAccount) => Effect.Effect<void, Errors.Conflict>
    /** The account with this number (CBU/CVU) or alias. */
    readonly findByAddress: (address: string) => Effect.Effect<Option.Option<SandboxAccount>>
    /** The merchant's accounts, oldest first. */
    readonly listOf: (user: Ids.UserId) => Effect.Effect<ReadonlyArray<SandboxAccount>>
    /** Removes the merchant's account with this number; whether there was one. */
    readonly remove: (user: Ids.UserId, cbu: string) => Effect.Effect<boolean>
  }
>() {}

export const exists = (cbu: string) =>
  new Errors.Conflict({
    key: "sandbox_bank_account.exists",
    message: `the account ${cbu} or its alias is already registered at the sandbox bank`
  })

export const makeMemory = Effect.gen(function* () {
  const table = yield* MemoryDb.makeRef(HashMap.empty<string, SandboxAccount>())
  const matches = (address: string) => (a: SandboxAccount) => a.cbu === address || a.alias === address
  return SandboxAccountRepository.of({
    insert: (account) =>
      table.updateOrFail((t) =>
        Option.isSome(HashMap.findFirst(t, (a) => matches(account.cbu)(a) || matches(account.alias)(a)))
          ? Either.left(exists(account.cbu))
          : Either.right(HashMap.set(t, account.cbu, account))
      ),
    findByAddress: (address) =>
      Effect.map(table.get, (t) => Option.map(HashMap.findFirst(t, matches(address)), ([, a]) => a)),
    listOf: (user) =>
      Effect.map(table.get, (t) =>
        Array.from(HashMap.values(t))
          .filter((a) => a.user_id === user)
          .sort((x, y) => x.creation_timestamp.epochMillis - y.creation_timestamp.epochMillis)
      ),
    remove: (user, cbu) =>
      table.modify((t) =>
        Option.exists(HashMap.get(t, cbu), (a) => a.user_id === user)
          ? ([true, HashMap.remove(t, cbu)] as const)
          : ([false, t] as const)
      )
  })
})

/** The accounts in the memory store (one process), beside the other memory repositories. */
export const layerMemory: Layer.Layer<SandboxAccountRepository, never, MemoryDb.MemoryDb> = Layer.effect(
  SandboxAccountRepository,
  makeMemory
)
