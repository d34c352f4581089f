/**
 * Split payments (closed beta). A split collects transfers in its own CVU; the merchant
 * whitelists payout accounts (one 2FA code per list of accounts), then sends the split's one
 * payouts instruction, which moves the total from the split's balance to held and starts a
 * 12-hour hold. After the hold `runDue` executes it (see `internal/splitExecution.ts`).
 */
import { DateTime, Effect, Option } from "effect"
import { BankProvider } from "../bank/BankProvider.js"
import { Conflict, InvalidInput, NotFound } from "../Errors.js"
import { SplitPaymentId, SplitPayoutId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import * as PayoutAccounts from "./payoutAccounts.js"
import * as SplitExecution from "./splitExecution.js"
import { activeUser, bankFailure, ownedAccount, partnerOf } from "./splitShared.js"
import { credit, debit, Ledger } from "../ledger/Ledger.js"
import * as Accounts from "../ledger/LedgerAccount.js"
import * as Money from "../Money.js"
import type { Principal } from "../Principal.js"
import * as Split from "./Split.js"
import { SplitRepository } from "./SplitRepository.js"
import * as Idempotency from "../Idempotency.js"
import { Transactor } from "../Transactor.js"
import { UserRepository } from "../accounts/UserRepository.js"
import * as WebhookDestination from "../webhooks/WebhookDestination.js"
import * as Spans from "../Spans.js"

export class Splits extends Effect.Service<Splits>()("@cobro/core/Splits", {
  effect: Effect.gen(function* () {
    const repo = yield* SplitRepository
    const users = yield* UserRepository
    const bank = yield* BankProvider
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const checkWebhookUrl = yield* WebhookDestination.checker
    const accounts = yield* PayoutAccounts.make
    const execution = yield* SplitExecution.make

    /** A user sees all its splits; a partner only those it created. Anything else is not found. */
    const findSplit = (principal: Principal, id: Split.SplitPayment["split_payment_id"], lock = false) =>
      Effect.flatMap(lock ? repo.findByIdForUpdate(id) : repo.findById(id), (found) =>
        Option.isSome(found) &&
        found.value.user_id === principal.user_id &&
        (principal._tag === "User" || found.value.partner_id === principal.partner_id)
          ? Effect.succeed(found.value)
          : Effect.fail(NotFound.of("split_payment", id))
      )

    const view = (split: Split.SplitPayment) =>
      Effect.zipWith(
        ledger.balance(Accounts.splitBalance(split.split_payment_id)),
        repo.payoutsOf(split.split_payment_id),
        (balance, payouts) => Split.SplitPaymentView.of(split, balance, payouts)
      )

    // -------------------------------------------------------------------------------------------
    // Split payments and incoming money

    const sameOrConflict = (existing: Split.SplitPayment, webhook_url: string | null) =>
      existing.webhook_url === webhook_url
        ? view(existing)
        : Effect.fail(
            new Conflict({
              key: "split.external_id.conflict",
              message: `external_id ${existing.external_id} was already used for a different split payment`
            })
          )

    /** Opens a split with its own CVU. Repeating a create with the same body answers the same split. */
    const create = Spans.fn("Splits.create")(function* (
      principal: Principal,
      request: Split.CreateSplitPaymentRequest
    ) {
      const owner = principal.user_id
      const partner = partnerOf(principal)
      const webhook_url = request.webhook_url ?? null
      yield* checkWebhookUrl("webhook_url", webhook_url)
      const user = yield* activeUser(users, owner)
      const existing = yield* repo.findByExternalId(owner, partner, request.external_id)
      if (Option.isSome(existing)) return yield* sameOrConflict(existing.value, webhook_url)
      const account = yield* Effect.mapError(
        // The split's CVU collects for the merchant: opened in its name, as payments' are.
        bank.openAccount({ holder: { cuit: user.cuit, name: user.name } }),
        bankFailure("the bank could not open an account")
      )
      const now = yield* DateTime.now
      const split = new Split.SplitPayment({
        split_payment_id: SplitPaymentId.make(yield* newId("split")),
        user_id: owner,
        partner_id: partner,
        external_id: request.external_id,
        webhook_url,
        cvu: account.cvu,
        alias: account.alias,
        ...Split.initialState(),
        creation_timestamp: now,
        last_modified_timestamp: now
      })
      // One write: the storage enters the CVU in the directory with the split (CvuDirectory).
      // Under an `Idempotency-Key`, with the answer (`Idempotency.commitsAnswer`).
      return yield* Idempotency.commitsAnswer(
        transactor,
        Effect.zipRight(repo.insert(split), view(split))
      ).pipe(
        // A concurrent identical request won the race: give the CVU back and answer as it did.
        Effect.catchTag("Conflict", (conflict) =>
          bank.releaseAccount(account.cvu).pipe(
            Effect.ignore,
            Effect.zipRight(repo.findByExternalId(owner, partner, request.external_id)),
            Effect.flatMap(
              Option.match({
                onNone: () => Effect.fail(conflict),
                onSome: (winner) => sameOrConflict(winner, webhook_url)
              })
            )
          )
        )
      )
    })

    /** State, amounts received, balance and each payout's state. */
    const get = Spans.fn("Splits.get")(function* (
      principal: Principal,
      id: Split.SplitPayment["split_payment_id"]
    ) {
      return yield* view(yield* findSplit(principal, id))
    })

    // -------------------------------------------------------------------------------------------
    // The payouts instruction and its execution

    /** Accepts the split's one instruction: balance → held, `ON_HOLD` until now + 12 h. */
    const instructPayouts = Spans.fn("Splits.instructPayouts")(function* (
      principal: Principal,
      id: Split.SplitPayment["split_payment_id"],
      request: Split.InstructPayoutsRequest
    ) {
      const owner = principal.user_id
      if (request.payouts.length === 0)
        return yield* InvalidInput.of("payouts", "must hold at least one payout")
      const seen = new Map<string, number>()
      for (const [i, item] of request.payouts.entries()) {
        if (!Money.isPositive(item.amount))
          return yield* InvalidInput.of(`payouts[${i}].amount`, "must be positive")
        const first = seen.get(item.account_id)
        if (first !== undefined) {
          return yield* InvalidInput.of(
            `payouts[${i}].account_id`,
            `repeats the account of payouts[${first}]`
          )
        }
        seen.set(item.account_id, i)
      }
      yield* activeUser(users, owner)
      const total = Money.orThrow(
        Money.sum(
          "ARS",
          request.payouts.map((p) => p.amount)
        )
      )
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const split = yield* findSplit(principal, id, true)
          const payout_status = yield* Split.transition(
            Split.payoutMachine,
            Split.payoutStatusOf(split),
            "ON_HOLD",
            "split.payouts.already_instructed"
          )
          const accounts = yield* Effect.forEach(request.payouts, (item) =>
            ownedAccount(repo, owner, item.account_id)
          )
          const inactive = accounts.find((a) => a.status !== "ACTIVE")
          if (inactive !== undefined) {
            return yield* new Conflict({
              key: "payout_account.not.active",
              message: `payout account ${inactive.account_id} is ${inactive.status}; only ACTIVE accounts receive payouts`
            })
          }
          const balance = yield* ledger.balance(Accounts.splitBalance(split.split_payment_id))
          if (Money.orThrow(Money.compare(total, balance)) > 0) {
            return yield* new Conflict({
              key: "split.balance.insufficient",
              message: `the payouts total ${Money.format(total)} but the available balance is ${Money.format(balance)}`
            })
          }
          const now = yield* DateTime.now
          const payouts = yield* Effect.forEach(request.payouts, (item, position) =>
            Effect.map(
              newId("spo"),
              (payoutId) =>
                new Split.SplitPayout({
                  payout_id: SplitPayoutId.make(payoutId),
                  split_payment_id: split.split_payment_id,
                  account_id: item.account_id,
                  destination: accounts[position]!.bank_account,
                  amount: item.amount,
                  status: "PENDING",
                  bank_transaction_id: null,
                  failure_reason: null,
                  position,
                  creation_timestamp: now,
                  executed_timestamp: null
                })
            )
          )
          const held = new Split.SplitPayment({
            ...split,
            payout_status,
            hold_until: DateTime.addDuration(now, Split.holdDuration),
            payouts_total: total,
            last_modified_timestamp: now
          })
          yield* repo.insertPayouts(payouts)
          yield* repo.update(held)
          yield* ledger.post({
            kind: "split.payouts.held",
            reference: split.split_payment_id,
            postings: [
              debit(Accounts.splitBalance(split.split_payment_id), total),
              credit(Accounts.splitHeld(split.split_payment_id), total)
            ]
          })
          const answer = Split.SplitPaymentView.of(
            held,
            Money.orThrow(Money.subtract(balance, total)),
            payouts
          )
          yield* Idempotency.committing(answer)
          return answer
        })
      )
    })

    /** The split that owns a CVU, whoever it belongs to (routing of incoming transfers, faucet). */
    const findByCvu = (cvu: Split.SplitPayment["cvu"]) => repo.findByCvu(cvu)

    return {
      create,
      get,
      findByCvu,
      ...accounts,
      instructPayouts,
      runDue: execution.runDue
    } as const
  })
}) {}
