/**
 * Append-only storage of journal entries and the running balance of every account.
 */
import { Chunk, Context, Effect, HashMap, Layer, Option, Schema } from "effect"
import { Conflict } from "../Errors.js"
import { LedgerEntryId } from "../Ids.js"
import { logAfter, makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { LedgerAccount } from "./LedgerAccount.js"
import { Currency, Money } from "../Money.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** One line of an entry: a signed amount, debits positive and credits negative. */
export class Posting extends Class<Posting>("Posting")({
  account: LedgerAccount,
  amount: Schema.typeSchema(Money)
}) {}

export class JournalEntry extends Class<JournalEntry>("JournalEntry")({
  entry_id: LedgerEntryId,
  /** What happened, e.g. `payment.transfer`, `payout.sent`. */
  kind: Schema.String,
  /** The business object it belongs to (payment id, bank transaction id, payout id…). */
  reference: Schema.String,
  created_at: Timestamp,
  postings: Schema.Array(Posting)
}) {}

/** A stored balance: the signed sum of an account's postings in one currency. */
export interface StoredBalance {
  readonly account: LedgerAccount
  readonly currency: Currency
  readonly sum: bigint
}

/**
 * The refusal of a movement that would take an account owed to someone below zero, whoever
 * detects it (the ledger's own check, or an adapter's database constraint).
 */
export const insufficientFunds = (account?: LedgerAccount): Conflict =>
  new Conflict({
    key: "ledger.insufficient.funds",
    message:
      account === undefined
        ? "the balance is not enough for this movement"
        : `the balance of ${account} is not enough for this movement`
  })

export class LedgerRepository extends Context.Tag("@cobro/core/LedgerRepository")<
  LedgerRepository,
  {
    /**
     * Stores the entry and adds its postings to the stored balances, atomically. An adapter whose
     * database refuses a negative balance owed to someone fails with `ledger.insufficient.funds`.
     */
    readonly append: (entry: JournalEntry) => Effect.Effect<void, Conflict>
    /**
     * `append` of several entries, in order, as one: all are stored or none. The balances are
     * checked once all are added (an intermediate balance within the batch is never visible).
     */
    readonly appendAll: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<void, Conflict>
    /** The stored signed sum (debits positive) of an account; 0 when it has no postings. */
    readonly sumOf: (account: LedgerAccount, currency: Currency) => Effect.Effect<bigint>
    readonly balances: Effect.Effect<ReadonlyArray<StoredBalance>>
    /** Entries in append order, after position `after` (0 = from the start). */
    readonly entries: (
      after: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<{ readonly position: number; readonly entry: JournalEntry }>>
  }
>() {}

const balanceKey = (account: string, currency: string) => `${account}\u0000${currency}`

export const makeMemory = Effect.gen(function* () {
  const state = yield* makeRef({
    entries: Chunk.empty<JournalEntry>(),
    sums: HashMap.empty<string, StoredBalance>()
  })
  const appendAll = (entries: ReadonlyArray<JournalEntry>) =>
    state.update((s) => {
      let sums = s.sums
      for (const p of entries.flatMap((e) => e.postings)) {
        const key = balanceKey(p.account, p.amount.currency)
        const prev = Option.getOrElse(HashMap.get(sums, key), () => ({
          account: p.account,
          currency: p.amount.currency,
          sum: 0n
        }))
        sums = HashMap.set(sums, key, { ...prev, sum: prev.sum + p.amount.minor })
      }
      return { entries: Chunk.appendAll(s.entries, Chunk.fromIterable(entries)), sums }
    })
  return LedgerRepository.of({
    append: (entry) => appendAll([entry]),
    appendAll,
    sumOf: (account, currency) =>
      Effect.map(state.get, (s) =>
        Option.match(HashMap.get(s.sums, balanceKey(account, currency)), {
          onNone: () => 0n,
          onSome: (b) => b.sum
        })
      ),
    balances: Effect.map(state.get, (s) => Array.from(HashMap.values(s.sums))),
    entries: (after, limit) =>
      Effect.map(state.get, (s) =>
        logAfter(s.entries, after, limit, (entry, position) => ({ position, entry }))
      )
  })
})

export const layerMemory: Layer.Layer<LedgerRepository, never, MemoryDb> = Layer.effect(
  LedgerRepository,
  makeMemory
)
