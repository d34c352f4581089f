/**
 * Fixed customers: creation with a permanent CVU under the account's alias prefix, alias
 * changes (keeping the CVU when the bank allows it), listing and transaction reads. Incoming
 * transfers are credited by `Transfers` (`transfers/receivers/customer.ts`).
 */
import { Chunk, DateTime, Effect, Option, Stream } from "effect"
import type { Alias } from "../bank/BankAccount.js"
import { type BankAccountRef, type BankError, BankProvider } from "../bank/BankProvider.js"
import * as C from "./Customer.js"
import { type CustomerCursor, CustomerRepository } from "./CustomerRepository.js"
import { Conflict, NotPermitted, InvalidInput, NotFound, ProviderFailure } from "../Errors.js"
import type { UserId } from "../Ids.js"
import * as Page from "../Page.js"
import * as Idempotency from "../Idempotency.js"
import { Transactor } from "../Transactor.js"
import type { User } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"
import * as WebhookDestination from "../webhooks/WebhookDestination.js"
import * as Spans from "../Spans.js"

const PAGE_SIZE = 200

/** The transfer log's `target_id` of a customer (customer ids are unique per user only). */
export { transferTargetId } from "./Customer.js"

const aliasTaken = (alias: Alias) =>
  new Conflict({ key: "customer.alias.taken", message: `the alias ${alias} is already in use` })

export class Customers extends Effect.Service<Customers>()("@cobro/core/Customers", {
  effect: Effect.gen(function* () {
    const repo = yield* CustomerRepository
    const users = yield* UserRepository
    const bank = yield* BankProvider
    const transactor = yield* Transactor
    const checkWebhookUrl = yield* WebhookDestination.checker

    const bankFailure =
      (what: string) =>
      (e: BankError): Effect.Effect<never, Conflict | InvalidInput | ProviderFailure> =>
        e.reason === "alias_taken"
          ? Effect.fail(new Conflict({ key: "customer.alias.taken", message: e.message }))
          : e.reason === "alias_invalid"
            ? Effect.fail(InvalidInput.of("alias", e.message, "customer.alias.invalid"))
            : Effect.fail(new ProviderFailure({ key: "bank.unavailable", message: `${what}: ${e.message}` }))

    /** A customer's CVU collects for the merchant: opened in the merchant's name, as payments' are. */
    const openAccount = (user: User, alias: Alias) =>
      bank
        .openAccount({ alias, holder: { cuit: user.cuit, name: user.name } })
        .pipe(Effect.catchAll(bankFailure("the bank could not open an account")))

    const release = (cvu: C.Customer["bank_info"]["cvu"]) =>
      bank
        .releaseAccount(cvu)
        .pipe(
          Effect.catchAll((e) =>
            Effect.logWarning("releasing a customer's replaced CVU failed; transfers to it bounce", cvu, e)
          )
        )

    const ownUser = (owner: UserId, user_id: UserId) =>
      user_id !== owner
        ? Effect.fail(NotFound.of("user", user_id))
        : Effect.flatMap(users.findById(owner), (u) =>
            Option.isSome(u) ? Effect.succeed(u.value) : Effect.fail(NotFound.of("user", owner))
          )

    /** The customer's bank alias under the account's current prefix. */
    const aliasFor = (user: User, suffix: C.AliasSuffix) =>
      user.alias_prefix === null
        ? Effect.fail(
            InvalidInput.of(
              "alias",
              "the account has no alias_prefix; set one before creating customers",
              C.prefixNotSetKey
            )
          )
        : C.bankAlias(user.alias_prefix, suffix)

    const findOwned = (owner: UserId, id: C.CustomerId, lock = false) =>
      Effect.flatMap(lock ? repo.findByIdForUpdate(owner, id) : repo.findById(owner, id), (c) =>
        Option.isSome(c) ? Effect.succeed(c.value) : Effect.fail(NotFound.of("customer", id))
      )

    const ensureAliasFree = (alias: Alias) =>
      Effect.flatMap(repo.findByAlias(alias), (c) =>
        Option.isSome(c) ? Effect.fail(aliasTaken(alias)) : Effect.void
      )

    const create = Spans.fn("Customers.create")(function* (owner: UserId, request: C.CreateCustomerRequest) {
      yield* checkWebhookUrl("webhook_url", request.webhook_url)
      const user = yield* ownUser(owner, request.user_id)
      if (user.account_status !== "ACTIVE") {
        return yield* new NotPermitted({
          key: "account.not.active",
          message: `the account is ${user.account_status}`
        })
      }
      const alias = yield* aliasFor(user, request.alias)
      if (Option.isSome(yield* repo.findById(owner, request.customer_id))) {
        return yield* new Conflict({
          key: "customer.exists",
          message: `a customer with customer_id ${request.customer_id} already exists`
        })
      }
      yield* ensureAliasFree(alias)
      const account = yield* openAccount(user, alias)
      const now = yield* DateTime.now
      const customer = new C.Customer({
        customer_id: request.customer_id,
        user_id: owner,
        name: request.name,
        alias: request.alias,
        bank_info: new C.BankInfo({ cvu: account.cvu, alias: account.alias }),
        balance: C.zeroBalance,
        contact: request.contact ?? null,
        webhook_url: request.webhook_url ?? null,
        creation_timestamp: now,
        last_modified_timestamp: now
      })
      // A concurrent create won the id or alias: give the CVU back.
      // The storage enters the CVU in the directory with the customer (CvuDirectory).
      // Under an `Idempotency-Key`, with the answer (`Idempotency.commitsAnswer`).
      return yield* Idempotency.commitsAnswer(transactor, Effect.as(repo.insert(customer), customer)).pipe(
        Effect.tapError(() => release(account.cvu))
      )
    })

    /**
     * Moves the customer to the bank account `account`; when it is a new CVU the old one is
     * released once the change is stored. Runs inside the unit of work holding the row lock.
     */
    const rebind = (current: C.Customer, suffix: C.AliasSuffix, account: BankAccountRef) =>
      Effect.gen(function* () {
        const updated = new C.Customer({
          ...current,
          alias: suffix,
          bank_info: new C.BankInfo({ cvu: account.cvu, alias: account.alias }),
          last_modified_timestamp: yield* DateTime.now
        })
        const replaced = account.cvu !== current.bank_info.cvu
        yield* repo
          .update(updated)
          .pipe(
            Effect.tapError(() =>
              replaced
                ? release(account.cvu)
                : bank.changeAlias(current.bank_info.cvu, current.bank_info.alias).pipe(Effect.ignore)
            )
          )
        return { updated, retired: replaced ? Option.some(current.bank_info.cvu) : Option.none() }
      })

    /**
     * `create_new_cvu` true: a new CVU with the new alias, the old one released. false: the bank
     * changes the alias of the current CVU; if it refuses, a new CVU is assigned as with true.
     * The row stays locked while the bank is asked, so changes of one customer are serialized.
     */
    const changeAlias = Spans.fn("Customers.changeAlias")(function* (
      owner: UserId,
      id: C.CustomerId,
      request: C.ChangeAliasRequest
    ) {
      const user = yield* ownUser(owner, owner)
      const alias = yield* aliasFor(user, request.alias)
      const { updated, retired } = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const current = yield* findOwned(owner, id, true)
          if (alias === current.bank_info.alias) {
            if (request.create_new_cvu) {
              return yield* InvalidInput.of(
                "alias",
                "the customer already has this alias; a new CVU needs a different alias",
                "customer.alias.unchanged"
              )
            }
            return { updated: current, retired: Option.none() }
          }
          yield* ensureAliasFree(alias)
          const account = request.create_new_cvu
            ? yield* openAccount(user, alias)
            : yield* bank
                .changeAlias(current.bank_info.cvu, alias)
                .pipe(
                  Effect.catchAll(
                    (e): Effect.Effect<BankAccountRef, Conflict | InvalidInput | ProviderFailure> =>
                      e.reason === "alias_change_refused"
                        ? openAccount(user, alias)
                        : bankFailure("the bank could not change the alias")(e)
                  )
                )
          return yield* rebind(current, request.alias, account)
        })
      )
      if (Option.isSome(retired)) yield* release(retired.value)
      return updated
    })

    const get = Spans.fn("Customers.get")(function* (owner: UserId, id: C.CustomerId) {
      return yield* findOwned(owner, id)
    })

    /** A user's customers, oldest first, read page by page. */
    const list = (owner: UserId, user_id: UserId): Stream.Stream<C.Customer, NotFound> =>
      user_id !== owner
        ? Stream.fail(NotFound.of("user", user_id))
        : Stream.paginateChunkEffect(Option.none<CustomerCursor>(), (cursor) =>
            Effect.map(repo.listByUser(owner, cursor, PAGE_SIZE), (rows) => {
              const last = rows.at(-1)
              const next: Option.Option<Option.Option<CustomerCursor>> =
                rows.length < PAGE_SIZE || last === undefined
                  ? Option.none()
                  : Option.some(
                      Option.some({
                        creation_timestamp: last.creation_timestamp,
                        customer_id: last.customer_id
                      })
                    )
              return [Chunk.fromIterable(rows), next] as const
            })
          )

    const getTransaction = Spans.fn("Customers.getTransaction")(function* (
      owner: UserId,
      customer_id: C.CustomerId,
      transaction_id: C.CustomerTransactionId
    ) {
      yield* findOwned(owner, customer_id)
      return yield* Effect.flatMap(repo.findTransaction(owner, customer_id, transaction_id), (t) =>
        Option.isSome(t) ? Effect.succeed(t.value) : Effect.fail(NotFound.of("transaction", transaction_id))
      )
    })

    /**
     * One page of a customer's transactions, newest first, after `before` (the previous page's
     * `next`). The customer must be the owner's.
     */
    const listTransactions = Spans.fn("Customers.listTransactions")(function* (
      owner: UserId,
      customer_id: C.CustomerId,
      before: Option.Option<Page.Cursor>,
      requestedLimit?: number
    ) {
      const limit = yield* Page.checkLimit(requestedLimit)
      yield* findOwned(owner, customer_id)
      const rows = yield* repo.listTransactions(owner, customer_id, before, limit + 1)
      return Page.fromRows(rows, limit, (t) => ({
        creation_timestamp: t.creation_timestamp,
        id: t.transaction_id
      }))
    })

    return { create, changeAlias, get, list, getTransaction, listTransactions } as const
  })
}) {}
