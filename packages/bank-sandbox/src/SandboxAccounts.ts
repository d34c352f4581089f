/**
 * Sandbox bank accounts a tester makes (`POST /sandbox/bank-accounts`): registered at the sandbox
 * bank, which answers holder look-ups for them and takes payouts and refunds to them like any
 * account, and stored (`SandboxAccountRepository`), so a restart or another instance still knows
 * them: `bankLayer` is the sandbox bank that looks a stored account up when asked about an
 * address it does not hold.
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import { BankAccount, BankProvider as Bank, Errors, type Ids, Spans } from "@cobro/core"
import { MemoryDb, Transactor, UserRepository } from "@cobro/core/ports"
import { randomAlias, randomCbu } from "./internal/random.js"
import * as A from "./SandboxAccount.js"
import * as Repository from "./SandboxAccountRepository.js"
import * as SandboxBank from "./SandboxBank.js"

const notFound = (cbu: string) => Errors.NotFound.of("sandbox_bank_account", cbu)

const toHolder = (account: A.SandboxAccount): SandboxBank.ExternalHolder => ({
  account: account.cbu,
  alias: account.alias,
  cuit: account.cuit,
  name: account.holder_name
})

/** Whether a repeated registration asks for exactly the stored account (then it answers it). */
const sameAccount = (stored: A.SandboxAccount, wanted: Omit<A.SandboxAccount, "creation_timestamp">) =>
  stored.user_id === wanted.user_id &&
  stored.cbu === wanted.cbu &&
  stored.alias === wanted.alias &&
  stored.holder_name === wanted.holder_name &&
  stored.cuit === wanted.cuit

export class SandboxAccounts extends Effect.Service<SandboxAccounts>()(
  "@cobro/bank-sandbox/SandboxAccounts",
  {
    effect: Effect.gen(function* () {
      const repo = yield* Repository.SandboxAccountRepository
      const users = yield* UserRepository.UserRepository
      const bank = yield* SandboxBank.SandboxBank
      const transactor = yield* Transactor.Transactor

      const owned = (owner: Ids.UserId, cbu: string) =>
        Effect.flatMap(repo.findByAddress(cbu), (found) =>
          Option.isSome(found) && found.value.user_id === owner && found.value.cbu === cbu
            ? Effect.succeed(found.value)
            : Effect.fail(notFound(cbu))
        )

      /** An address nobody uses: neither a stored account nor one the bank holds. */
      const free = (address: string) =>
        Effect.zipWith(
          repo.findByAddress(address),
          bank.knows(address),
          (stored, held) => Option.isNone(stored) && !held
        )

      /**
       * Registers an account for `owner`'s tests. The same request again (same number, alias,
       * holder and CUIT) answers the stored account; a number or alias in use fails with 409.
       */
      const register = Spans.fn("SandboxAccounts.register")(function* (
        owner: Ids.UserId,
        request: A.RegisterRequest
      ) {
        const user = yield* Effect.flatMap(users.findById(owner), (u) =>
          Option.isSome(u) ? Effect.succeed(u.value) : Effect.fail(Errors.NotFound.of("user", owner))
        )
        const cbu = request.cbu ?? (yield* drawFree(randomCbu, free, "CBU"))
        const alias: BankAccount.Alias = request.alias ?? (yield* drawFree(randomAlias, free, "alias"))
        const wanted = {
          cbu,
          alias,
          holder_name: request.holder_name ?? user.name,
          cuit: request.cuit ?? user.cuit,
          user_id: owner
        }
        const stored = yield* transactor.withTransaction(
          Effect.gen(function* () {
            // The merchant's row, locked: two registrations at once cannot both pass the cap.
            yield* users.findByIdForUpdate(owner)
            const byNumber = yield* repo.findByAddress(cbu)
            if (Option.isSome(byNumber)) {
              if (sameAccount(byNumber.value, wanted)) return byNumber.value
              return yield* new Errors.Conflict({
                key: "sandbox_bank_account.exists",
                message: `cbu: ${cbu} is already registered at the sandbox bank${
                  byNumber.value.user_id === owner ? " with other details" : ""
                }`
              })
            }
            if (yield* bank.knows(cbu)) {
              return yield* new Errors.Conflict({
                key: "sandbox_bank_account.exists",
                message: `cbu: ${cbu} is already an account of the sandbox bank`
              })
            }
            if (!(yield* free(alias))) {
              return yield* new Errors.Conflict({
                key: "sandbox_bank_account.alias.taken",
                message: `alias: ${alias} is already in use at the sandbox bank`
              })
            }
            if ((yield* repo.listOf(owner)).length >= A.maxAccountsPerMerchant) {
              return yield* new Errors.Conflict({
                key: "sandbox_bank_account.limit.reached",
                message: `a merchant may register at most ${A.maxAccountsPerMerchant} sandbox bank accounts; remove one first`
              })
            }
            const account = new A.SandboxAccount({ ...wanted, creation_timestamp: yield* DateTime.now })
            yield* repo.insert(account)
            return account
          })
        )
        // Known to this instance's bank at once; others find it in storage when asked.
        yield* bank.registerHolder(toHolder(stored))
        return stored
      })

      const list = Spans.fn("SandboxAccounts.list")(function* (owner: Ids.UserId) {
        return yield* repo.listOf(owner)
      })

      const get = Spans.fn("SandboxAccounts.get")(function* (owner: Ids.UserId, cbu: string) {
        return yield* owned(owner, cbu)
      })

      /** What the account received (payouts and refunds sent to it), newest first: its owner's only. */
      const received = Spans.fn("SandboxAccounts.received")(function* (owner: Ids.UserId, cbu: string) {
        const account = yield* owned(owner, cbu)
        return yield* bank.receivedBy(account.cbu, A.maxReceivedListed)
      })

      /** Removes the account: the bank no longer knows it (look-ups fail; transfers already sent stay). */
      const remove = Spans.fn("SandboxAccounts.remove")(function* (owner: Ids.UserId, cbu: string) {
        const account = yield* owned(owner, cbu)
        if (!(yield* repo.remove(owner, account.cbu))) return yield* notFound(cbu)
        yield* bank.forgetHolder(account.cbu)
        return account
      })

      return { register, list, get, received, remove } as const
    })
  }
) {}

/** Draws from `generate` until `isFree` says the value is unused. */
const drawFree = <A extends string>(
  generate: Effect.Effect<A>,
  isFree: (a: string) => Effect.Effect<boolean>,
  what: string
): Effect.Effect<A, Errors.ProviderFailure> =>
  Effect.gen(function* () {
    for (let i = 0; i < 100; i++) {
      const candidate = yield* generate
      if (yield* isFree(candidate)) return candidate
    }
    return yield* new Errors.ProviderFailure({
      key: "bank.unavailable",
      message: `the sandbox bank could not draw an unused ${what}`
    })
  })

/**
 * The sandbox bank (`BankProvider` and its `SandboxBank` controls) that also knows the stored
 * accounts: a holder look-up it cannot answer, a transfer to an alias, and an alias asked for a
 * new CVU consult `SandboxAccountRepository`, and a stored account found is registered at the bank.
 */
export const bankLayer: Layer.Layer<
  Bank.BankProvider | SandboxBank.SandboxBank,
  never,
  Repository.SandboxAccountRepository
> = Layer.effectContext(
  Effect.gen(function* () {
    const { bank, controls } = yield* SandboxBank.make
    const repo = yield* Repository.SandboxAccountRepository
    /** The stored account at `address`, made known to the bank. */
    const load = (address: string) =>
      Effect.tap(repo.findByAddress(address), (found) =>
        Option.isSome(found) ? controls.registerHolder(toHolder(found.value)) : Effect.void
      )
    const wrapped: Context.Tag.Service<Bank.BankProvider> = {
      ...bank,
      openAccount: (request) =>
        request.alias === undefined
          ? bank.openAccount(request)
          : Effect.flatMap(repo.findByAddress(request.alias), (stored) =>
              Option.isSome(stored)
                ? Effect.fail(
                    new Bank.BankError({
                      reason: "alias_taken",
                      message: `alias ${request.alias} is already in use`
                    })
                  )
                : bank.openAccount(request)
            ),
      lookupHolder: (address) =>
        bank.lookupHolder(address).pipe(
          Effect.catchIf(
            (e) => e.reason === "holder_not_found",
            (e) =>
              Effect.flatMap(load(address), (found) =>
                Option.match(found, {
                  onNone: () => Effect.fail(e),
                  onSome: (a) =>
                    Effect.succeed(
                      new Bank.AccountHolder({ account: a.cbu, cuit: a.cuit, name: a.holder_name })
                    )
                })
              )
          )
        ),
      sendTransfer: (transfer) =>
        BankAccount.isValidCbu(transfer.to)
          ? bank.sendTransfer(transfer)
          : Effect.zipRight(load(transfer.to), bank.sendTransfer(transfer))
    }
    return Context.make(Bank.BankProvider, wrapped).pipe(Context.add(SandboxBank.SandboxBank, controls))
  })
)

/**
 * The service over an in-memory store of its own (one process; the in-memory engine and tests):
 * registered accounts go straight to the sandbox bank, which is the only one that needs them.
 */
export const layerMemory: Layer.Layer<
  SandboxAccounts,
  never,
  SandboxBank.SandboxBank | UserRepository.UserRepository | Transactor.Transactor
> = SandboxAccounts.Default.pipe(Layer.provide(Repository.layerMemory), Layer.provide(MemoryDb.layer))
