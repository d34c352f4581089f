/**
 * Double-entry bookkeeping. Every money movement is one balanced entry (postings sum to zero in
 * each currency), posted inside the caller's unit of work; balances that must not go negative
 * are checked before the unit of work commits.
 */
import { DateTime, Effect, Option } from "effect"
import type { LedgerEntryId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import * as Accounts from "./LedgerAccount.js"
import { insufficientFunds, JournalEntry, LedgerRepository, Posting } from "./LedgerRepository.js"
import * as Money from "../Money.js"
import * as Spans from "../Spans.js"

export interface PostingInput {
  readonly account: Accounts.LedgerAccount
  /** Signed: positive debits, negative credits. */
  readonly amount: Money.Money
}

/** A debit of `amount` to `account`. */
export const debit = (account: Accounts.LedgerAccount, amount: Money.Money): PostingInput => ({
  account,
  amount
})
/** A credit of `amount` to `account`. */
export const credit = (account: Accounts.LedgerAccount, amount: Money.Money): PostingInput => ({
  account,
  amount: Money.make(-amount.minor, amount.currency)
})

/** One journal entry to post: what happened, what it belongs to, its signed lines. */
export interface EntryInput {
  readonly kind: string
  readonly reference: string
  readonly postings: ReadonlyArray<PostingInput>
}

export interface VerifyReport {
  readonly entries: number
  readonly accounts: number
  readonly problems: ReadonlyArray<string>
}

const unbalanced = (postings: ReadonlyArray<PostingInput>): Option.Option<string> => {
  const sums = new Map<string, bigint>()
  for (const p of postings) sums.set(p.amount.currency, (sums.get(p.amount.currency) ?? 0n) + p.amount.minor)
  for (const [currency, sum] of sums) if (sum !== 0n) return Option.some(`${currency} postings sum to ${sum}`)
  return Option.none()
}

export class Ledger extends Effect.Service<Ledger>()("@cobro/core/Ledger", {
  effect: Effect.gen(function* () {
    const repo = yield* LedgerRepository

    /**
     * Posts balanced entries, in order, as one: all or none. Zero lines are dropped. An
     * unbalanced entry is a bug and dies; a balance owed to someone left below zero once all are
     * added fails with `ledger.insufficient.funds` (the caller's transaction then rolls back).
     * Only the accounts the entries take from are read back: a credit to a balance owed to
     * someone cannot take it below zero.
     */
    const postAll = Spans.fn("Ledger.postAll")(function* (inputs: ReadonlyArray<EntryInput>) {
      const created_at = yield* DateTime.now
      const entries: Array<JournalEntry> = []
      for (const input of inputs) {
        const postings = input.postings.filter((p) => p.amount.minor !== 0n)
        const problem = unbalanced(postings)
        if (Option.isSome(problem)) {
          return yield* Effect.dieMessage(
            `unbalanced ledger entry ${input.kind}/${input.reference}: ${problem.value}`
          )
        }
        // Typed values (the inputs' accounts and amounts, a new id, the clock's instant): the
        // classes do not check them again.
        entries.push(
          new JournalEntry(
            {
              entry_id: (yield* newId("le")) as LedgerEntryId,
              kind: input.kind,
              reference: input.reference,
              created_at,
              postings: postings.map((p) => new Posting({ account: p.account, amount: p.amount }, true))
            },
            true
          )
        )
      }
      yield* repo.appendAll(entries)
      const takenFrom = new Map<string, Posting>()
      for (const p of entries.flatMap((e) => e.postings)) {
        if (Accounts.mustStayNonNegative(p.account) && Accounts.toNormal(p.account, p.amount.minor) < 0n)
          takenFrom.set(`${p.account}\u0000${p.amount.currency}`, p)
      }
      for (const p of takenFrom.values()) {
        const sum = yield* repo.sumOf(p.account, p.amount.currency)
        if (Accounts.toNormal(p.account, sum) < 0n) {
          return yield* insufficientFunds(p.account)
        }
      }
      return entries
    })

    /** Posts one balanced entry (`postAll` of one). */
    const post = (input: EntryInput) => Effect.map(postAll([input]), (entries) => entries[0]!)

    /** The balance of an account on its normal side (what is owed to its holder). */
    const balance = (account: Accounts.LedgerAccount, currency: Money.Currency = "ARS") =>
      Effect.map(repo.sumOf(account, currency), (sum) =>
        Money.make(Accounts.toNormal(account, sum), currency)
      )

    /**
     * Checks every invariant over the whole journal: each entry balances per currency, stored
     * balances equal the sum of postings, and no account that must stay non-negative is negative.
     * Reads the journal page by page.
     */
    const verify = Spans.fn("Ledger.verify")(function* () {
      const problems: Array<string> = []
      const sums = new Map<
        string,
        { account: Accounts.LedgerAccount; currency: Money.Currency; sum: bigint }
      >()
      let after = 0
      let count = 0
      while (true) {
        const page = yield* repo.entries(after, 500)
        if (page.length === 0) break
        for (const { entry, position } of page) {
          count++
          after = position
          Option.map(unbalanced(entry.postings), (p) =>
            problems.push(`entry ${entry.entry_id} does not balance: ${p}`)
          )
          for (const p of entry.postings) {
            const key = `${p.account}\u0000${p.amount.currency}`
            const prev = sums.get(key) ?? { account: p.account, currency: p.amount.currency, sum: 0n }
            sums.set(key, { ...prev, sum: prev.sum + p.amount.minor })
          }
        }
      }
      const stored = yield* repo.balances
      const storedByKey = new Map(stored.map((b) => [`${b.account}\u0000${b.currency}`, b]))
      for (const [key, computed] of sums) {
        const s = storedByKey.get(key)
        if (s === undefined || s.sum !== computed.sum) {
          problems.push(
            `stored balance of ${computed.account} ${computed.currency} is ${s?.sum ?? "missing"}, postings sum to ${computed.sum}`
          )
        }
        if (
          Accounts.mustStayNonNegative(computed.account) &&
          Accounts.toNormal(computed.account, computed.sum) < 0n
        ) {
          problems.push(`${computed.account} ${computed.currency} is negative`)
        }
      }
      for (const s of stored) {
        if (!sums.has(`${s.account}\u0000${s.currency}`) && s.sum !== 0n) {
          problems.push(`stored balance of ${s.account} ${s.currency} has no postings`)
        }
      }
      return { entries: count, accounts: sums.size, problems } satisfies VerifyReport
    })

    return { post, postAll, balance, verify } as const
  })
}) {}
