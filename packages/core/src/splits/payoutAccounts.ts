/**
 * Payout accounts of split payments: a whitelist of bank accounts, created a list at a time and
 * activated by one 2FA code per list (delivered and checked by the `SecondFactor` port; attempts
 * and expiry are counted here, on the verification request). An active account is never changed,
 * only disabled. Part of the `Splits` service.
 */
import { DateTime, Effect, Either, Match, Option } from "effect"
import { BankProvider } from "../bank/BankProvider.js"
import { Conflict, InvalidInput, NotFound, ProviderFailure } from "../Errors.js"
import { PayoutAccountId, type UserId, VerificationRequestId } from "../Ids.js"
import type { Principal } from "../Principal.js"
import { RealTime } from "../RealTime.js"
import { SecondFactor, type SecondFactorError, type SecondFactorRefused } from "../auth/SecondFactor.js"
import * as Split from "./Split.js"
import { SplitRepository } from "./SplitRepository.js"
import { Transactor } from "../Transactor.js"
import { UserRepository } from "../accounts/UserRepository.js"
import { newId } from "../internal/ids.js"
import { activeUser, bankFailure, ownedAccount, partnerOf } from "./splitShared.js"
import * as Spans from "../Spans.js"

/** A refusal of the merchant's factor is a conflict with its state (409); any other failure, the provider's. */
const secondFactorFailure = (e: SecondFactorError | SecondFactorRefused): Conflict | ProviderFailure =>
  e._tag === "SecondFactorRefused"
    ? new Conflict({ key: e.key, message: e.message })
    : new ProviderFailure({ key: "second_factor.unavailable", message: e.message })

export const make = Effect.gen(function* () {
  const repo = yield* SplitRepository
  const users = yield* UserRepository
  const bank = yield* BankProvider
  const secondFactor = yield* SecondFactor
  const transactor = yield* Transactor
  // A 2FA code is typed by a person: its request's times are real time, the accounts' the engine's.
  const realTime = yield* RealTime

  const findRequest = (owner: UserId, id: VerificationRequestId, lock = false) =>
    Effect.flatMap(lock ? repo.findRequestForUpdate(id) : repo.findRequest(id), (found) =>
      Option.isSome(found) && found.value.user_id === owner
        ? Effect.succeed(found.value)
        : Effect.fail(NotFound.of("verification_request", id))
    )

  /**
   * Moves an account to `to` (the account machine refuses a step it does not allow), with the
   * timestamp of that step and its last change at `now`, and stores it.
   */
  const moveAccount = (
    account: Split.PayoutAccount,
    to: "ACTIVE" | "DISABLED",
    stamp: Partial<Pick<Split.PayoutAccount, "activation_timestamp" | "disabled_timestamp">>,
    now: DateTime.Utc
  ) =>
    Effect.gen(function* () {
      const moved = new Split.PayoutAccount({
        ...account,
        ...stamp,
        status: yield* Split.transition(Split.accountMachine, account.status, to),
        last_modified_timestamp: now
      })
      yield* repo.updateAccount(moved)
      return moved
    })

  /** Looks up each holder at the bank, stores the accounts and one request, delivers one code. */
  const createAccounts = Spans.fn("Splits.createAccounts")(function* (
    principal: Principal,
    inputs: ReadonlyArray<Split.PayoutAccountInput>
  ) {
    const owner = principal.user_id
    if (inputs.length === 0 || inputs.length > Split.maxAccountsPerRequest) {
      return yield* InvalidInput.of("accounts", `must hold 1 to ${Split.maxAccountsPerRequest} accounts`)
    }
    yield* activeUser(users, owner)
    const holders = yield* Effect.forEach(inputs, (input, i) =>
      bank
        .lookupHolder(input.address)
        .pipe(
          Effect.mapError((e) =>
            e.reason === "holder_not_found"
              ? InvalidInput.of(
                  `accounts[${i}].address`,
                  `no bank account found for ${input.address}`,
                  "payout_account.holder.not.found"
                )
              : bankFailure("the bank could not look up the account holder")(e)
          )
        )
    )
    const seen = new Map<string, number>()
    for (const [i, holder] of holders.entries()) {
      const first = seen.get(holder.account)
      if (first !== undefined) {
        return yield* InvalidInput.of(
          `accounts[${i}].address`,
          `names the same bank account as accounts[${first}]`
        )
      }
      seen.set(holder.account, i)
    }
    return yield* transactor.withTransaction(
      Effect.gen(function* () {
        const active = (yield* repo.accountsOf(owner)).filter((a) => a.status === "ACTIVE")
        for (const [i, holder] of holders.entries()) {
          const clash = active.find((a) => a.bank_account === holder.account)
          if (clash !== undefined) {
            return yield* new Conflict({
              key: "payout_account.exists",
              message: `accounts[${i}] is already the active payout account ${clash.account_id}`
            })
          }
        }
        const now = yield* DateTime.now
        const issued = yield* realTime.now
        const request_id = VerificationRequestId.make(yield* newId("vreq"))
        const accounts = yield* Effect.forEach(inputs, (input, i) =>
          Effect.map(
            newId("pacc"),
            (id) =>
              new Split.PayoutAccount({
                account_id: PayoutAccountId.make(id),
                user_id: owner,
                partner_id: partnerOf(principal),
                address: input.address,
                bank_account: holders[i]!.account,
                holder_name: holders[i]!.name,
                holder_cuit: holders[i]!.cuit,
                label: input.label ?? null,
                status: "PENDING_VERIFICATION",
                request_id,
                creation_timestamp: now,
                activation_timestamp: null,
                disabled_timestamp: null,
                last_modified_timestamp: now
              })
          )
        )
        const request = new Split.VerificationRequest({
          request_id,
          user_id: owner,
          account_ids: accounts.map((a) => a.account_id),
          status: "PENDING",
          attempts: 0,
          exp_timestamp: DateTime.addDuration(issued, Split.verificationLifetime),
          creation_timestamp: issued,
          verified_timestamp: null
        })
        yield* repo.insertAccounts(accounts)
        yield* repo.insertRequest(request)
        // Inside the unit of work: a code that could not be delivered leaves no request behind.
        yield* secondFactor.deliver({ request_id, user_id: owner }).pipe(Effect.mapError(secondFactorFailure))
        return Split.VerificationRequestView.of(request, accounts)
      })
    )
  })

  /** Why a request can take no code now, if so. Checked before and again under lock. */
  const unusable = (request: Split.VerificationRequest, now: DateTime.Utc) =>
    Match.value(request.status).pipe(
      Match.when("VERIFIED", () =>
        Option.some<Conflict | InvalidInput>(
          new Conflict({
            key: "verification.used",
            message: "this verification request was already verified"
          })
        )
      ),
      Match.when("LOCKED", () =>
        Option.some<Conflict | InvalidInput>(
          new Conflict({
            key: "verification.locked",
            message: "too many wrong codes; create the accounts again to get a new code"
          })
        )
      ),
      Match.when("PENDING", () =>
        DateTime.lessThan(now, request.exp_timestamp)
          ? Option.none()
          : Option.some<Conflict | InvalidInput>(
              InvalidInput.of(
                "code",
                "the code has expired; create the accounts again",
                "verification.expired"
              )
            )
      ),
      Match.exhaustive
    )

  /** Checks the code; a right one makes every account of the request ACTIVE. */
  const verifyAccounts = Spans.fn("Splits.verifyAccounts")(function* (
    principal: Principal,
    input: Split.VerifyAccountsRequest
  ) {
    const owner = principal.user_id
    const before = yield* findRequest(owner, input.request_id)
    const refused = unusable(before, yield* realTime.now)
    if (Option.isSome(refused)) return yield* refused.value
    const right = yield* secondFactor
      .check({ request_id: input.request_id, user_id: owner, code: input.code })
      .pipe(Effect.mapError(secondFactorFailure))
    const outcome = yield* transactor.withTransaction(
      Effect.gen(function* () {
        const request = yield* findRequest(owner, input.request_id, true)
        const now = yield* DateTime.now
        const stillRefused = unusable(request, yield* realTime.now)
        if (Option.isSome(stillRefused)) return yield* stillRefused.value
        if (!right) {
          const attempts = request.attempts + 1
          const status = yield* Split.transition(
            Split.requestMachine,
            request.status,
            attempts >= Split.maxVerificationAttempts ? "LOCKED" : "PENDING"
          )
          yield* repo.updateRequest(new Split.VerificationRequest({ ...request, attempts, status }))
          return Either.left(Split.maxVerificationAttempts - attempts)
        }
        const status = yield* Split.transition(Split.requestMachine, request.status, "VERIFIED")
        const verified = new Split.VerificationRequest({
          ...request,
          status,
          verified_timestamp: yield* realTime.now
        })
        yield* repo.updateRequest(verified)
        const accounts = yield* Effect.forEach(request.account_ids, (id) =>
          Effect.gen(function* () {
            const account = yield* ownedAccount(repo, owner, id, true)
            return yield* Match.value(account.status).pipe(
              Match.when("PENDING_VERIFICATION", () =>
                moveAccount(account, "ACTIVE", { activation_timestamp: now }, now)
              ),
              // Disabled while pending: stays disabled. (ACTIVE cannot happen: one request, one code.)
              Match.when("ACTIVE", () => Effect.succeed(account)),
              Match.when("DISABLED", () => Effect.succeed(account)),
              Match.exhaustive
            )
          })
        )
        return Either.right(Split.VerificationRequestView.of(verified, accounts))
      })
    )
    if (Either.isRight(outcome)) return outcome.right
    return yield* outcome.left > 0
      ? InvalidInput.of("code", `wrong code; ${outcome.left} attempts left`, "verification.code.invalid")
      : new Conflict({
          key: "verification.locked",
          message: "too many wrong codes; create the accounts again to get a new code"
        })
  })

  /** Blocks new payouts to the account; its history is unchanged. Disabling twice is a no-op. */
  const disableAccount = Spans.fn("Splits.disableAccount")(function* (
    principal: Principal,
    id: Split.PayoutAccount["account_id"]
  ) {
    return yield* transactor.withTransaction(
      Effect.gen(function* () {
        const account = yield* ownedAccount(repo, principal.user_id, id, true)
        if (account.status === "DISABLED") return account
        const now = yield* DateTime.now
        return yield* moveAccount(account, "DISABLED", { disabled_timestamp: now }, now)
      })
    )
  })

  /** The user's payout accounts, oldest first. */
  const listAccounts = Spans.fn("Splits.listAccounts")(function* (principal: Principal) {
    return yield* repo.accountsOf(principal.user_id)
  })

  return { createAccounts, verifyAccounts, disableAccount, listAccounts } as const
})
