/**
 * `LedgerRepository` over `SqlClient`. The journal tables are append-only (triggers) and the
 * balance table refuses a negative balance owed to someone (CHECK), so the database holds the
 * ledger's invariants even against code that bypasses the service. Amounts and sums are read as
 * text (`CAST … AS TEXT`): SQLite hands an INTEGER to JavaScript as a number, which is not exact
 * beyond 2^53, and `verify` must never report books broken that are not (or the reverse).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Ids, LedgerAccount, Money } from "@cobro/core"
import { LedgerRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import {
  BigIntText,
  Millis,
  execute,
  findAll,
  findOne,
  inTransaction,
  millis,
  statementsAreRoundTrips,
  toBigInt
} from "./internal/sql.js"

/** One line of `entries`' join: an entry's columns and one of its postings (none: nulls). */
const PostingRow = Schema.Struct({
  position: Schema.Union(Schema.Number, Schema.NumberFromString),
  entry_id: Ids.LedgerEntryId,
  kind: Schema.String,
  reference: Schema.String,
  created_ms: Millis,
  account: Schema.NullOr(Schema.String),
  currency: Schema.NullOr(Money.Currency),
  amount_minor: Schema.NullOr(BigIntText)
})
type PostingRow = typeof PostingRow.Type

/** A row of `cobro_ledger_balances`, the sum read as text. */
const BalanceRow = Schema.Struct({
  account: Schema.String,
  currency: Money.Currency,
  sum_minor: BigIntText
})

/** Whether a posting of `entries` takes from a balance owed to someone (the balances' CHECK). */
const takesFromOwed = (entries: ReadonlyArray<Port.JournalEntry>): boolean =>
  entries.some((entry) =>
    entry.postings.some(
      (p) =>
        LedgerAccount.mustStayNonNegative(p.account) && LedgerAccount.toNormal(p.account, p.amount.minor) < 0n
    )
  )

interface Delta {
  readonly account: string
  readonly currency: string
  readonly minor: bigint
}

const balanceKey = (account: string, currency: string) => `${account}\u0000${currency}`

const isCheckViolation = (cause: unknown) => {
  const c = cause as { code?: unknown; message?: unknown } | undefined
  return (
    c?.code === "23514" || (typeof c?.message === "string" && c.message.includes("CHECK constraint failed"))
  )
}

/** The entries the join's lines are, in order, each with its postings. */
const entriesOf = (rows: ReadonlyArray<PostingRow>) => {
  const out: Array<{ position: number; entry: Port.JournalEntry }> = []
  let current: { position: number; head: PostingRow; postings: Array<Port.Posting> } | undefined
  const flush = () => {
    if (current === undefined) return
    out.push({
      position: current.position,
      entry: new Port.JournalEntry({
        entry_id: current.head.entry_id,
        kind: current.head.kind,
        reference: current.head.reference,
        created_at: current.head.created_ms,
        postings: current.postings
      })
    })
  }
  for (const r of rows) {
    if (current?.position !== r.position) {
      flush()
      current = { position: r.position, head: r, postings: [] }
    }
    if (r.account !== null && r.currency !== null && r.amount_minor !== null) {
      current.postings.push(
        new Port.Posting({
          account: r.account as LedgerAccount.LedgerAccount,
          amount: Money.make(r.amount_minor, r.currency)
        })
      )
    }
  }
  flush()
  return out
}

export const make: Effect.Effect<Port.LedgerRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const cases = sql.join(" ", false)
    const values = sql.join(", ", false)
    const rowsOf = (deltas: ReadonlyArray<Delta>) =>
      sql.or(deltas.map((d) => sql`(account = ${d.account} AND currency = ${d.currency})`))
    /**
     * Postgres: creates the missing balance rows and locks the existing ones in one order,
     * (account, currency), before the update. A single UPDATE locks its rows in the order it meets
     * them on the heap, which moves with every new row version, and rows created on the way are
     * locked when they are created: two entries sharing accounts (every credit touches the bank
     * clearing and commission accounts) would then lock in opposite orders and deadlock (found by
     * `bench:http`'s concurrent faucet). The no-op upsert proposes rows at zero, which every
     * balance CHECK accepts. `deltas` come in that order (`deltasOf`). SQLite has one writer at a
     * time and needs no row locks.
     */
    const ensureInOrder = (deltas: ReadonlyArray<Delta>) =>
      sql.onDialectOrElse({
        pg: () =>
          execute(
            sql`INSERT INTO cobro_ledger_balances ${sql.insert(
              deltas.map((d) => ({ account: d.account, currency: d.currency, sum_minor: 0 }))
            )} ON CONFLICT (account, currency) DO UPDATE SET sum_minor = cobro_ledger_balances.sum_minor`
          ),
        orElse: () => Effect.succeed([])
      })
    /** Adds each delta to its balance row in one statement; answers the rows that exist. */
    const addToBalances = (deltas: ReadonlyArray<Delta>) =>
      execute(sql<{ account: string; currency: string }>`UPDATE cobro_ledger_balances
      SET sum_minor = sum_minor + CASE ${cases(
        deltas.map(
          (d) => sql`WHEN account = ${d.account} AND currency = ${d.currency} THEN CAST(${d.minor} AS BIGINT)`
        )
      )} END
      WHERE ${rowsOf(deltas)}
      RETURNING account, currency`)

    /** Each account and currency's change, the amounts of its postings summed, in (account, currency) order. */
    const deltasOf = (entries: ReadonlyArray<Port.JournalEntry>): ReadonlyArray<Delta> => {
      const deltas = new Map<string, Delta>()
      for (const p of entries.flatMap((entry) => entry.postings)) {
        const key = balanceKey(p.account, p.amount.currency)
        const seen = deltas.get(key)
        if (seen === undefined)
          deltas.set(key, { account: p.account, currency: p.amount.currency, minor: p.amount.minor })
        else deltas.set(key, { ...seen, minor: seen.minor + p.amount.minor })
      }
      return [...deltas.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, delta]) => delta)
    }

    const entryRows = (entries: ReadonlyArray<Port.JournalEntry>) =>
      sql.insert(
        entries.map((entry) => ({
          entry_id: entry.entry_id,
          kind: entry.kind,
          reference: entry.reference,
          created_ms: millis(entry.created_at)
        }))
      )

    /** The entries, their postings and the balances they move, a statement each (both dialects). */
    const appendStepwise = (entries: ReadonlyArray<Port.JournalEntry>) =>
      Effect.gen(function* () {
        const inserted = yield* execute(
          sql<{
            position: unknown
            entry_id: string
          }>`INSERT INTO cobro_ledger_entries ${entryRows(entries)} RETURNING position, entry_id`
        )
        const positions = new Map(inserted.map((r) => [r.entry_id, toBigInt(r.position)]))
        const postings = entries.flatMap((entry) =>
          entry.postings.map((p, line) => ({
            entry_position: positions.get(entry.entry_id)!,
            line,
            account: p.account,
            currency: p.amount.currency,
            amount_minor: p.amount.minor
          }))
        )
        if (postings.length === 0) return
        yield* execute(sql`INSERT INTO cobro_ledger_postings ${sql.insert(postings)}`)
        // One statement adds every posting to its balance row (amounts of the same account and
        // currency summed first); rows that do not exist yet (SQLite; on Postgres `ensureInOrder`
        // created them) are created at zero, then added to. (Not an upsert carrying the amount: a
        // CHECK is evaluated on an upsert's proposed row before its conflict is resolved, so it
        // would refuse a debit the existing balance covers.)
        const all = deltasOf(entries)
        yield* ensureInOrder(all)
        const updated = yield* addToBalances(all)
        if (updated.length === all.length) return
        const found = new Set(updated.map((r) => balanceKey(r.account, r.currency)))
        const missing = all.filter((d) => !found.has(balanceKey(d.account, d.currency)))
        yield* execute(
          sql`INSERT INTO cobro_ledger_balances ${sql.insert(
            missing.map((d) => ({ account: d.account, currency: d.currency, sum_minor: 0 }))
          )} ON CONFLICT (account, currency) DO NOTHING`
        )
        yield* addToBalances(missing)
      })

    /**
     * Postgres, entries that take from no balance owed to someone: the entries, their postings
     * and the balances in one statement (data-modifying CTEs), one round trip where
     * `appendStepwise` takes four. Each posting finds its entry's position by the entry's id.
     * The balances are an upsert carrying the amounts, its rows in (account, currency) order, so
     * it locks them in the order `ensureInOrder` does; its proposed rows pass the balances' CHECK,
     * as no amount takes from a balance owed to someone. The foreign key from a posting to its
     * entry is checked at the end of the statement, when both are written.
     */
    const appendAtOnce = (entries: ReadonlyArray<Port.JournalEntry>) => {
      const postings = entries.flatMap((entry) =>
        entry.postings.map(
          (p, line) =>
            sql`(CAST(${entry.entry_id} AS TEXT), CAST(${line} AS INTEGER), CAST(${p.account} AS TEXT), CAST(${p.amount.currency} AS TEXT), CAST(${p.amount.minor} AS BIGINT))`
        )
      )
      if (postings.length === 0) return execute(sql`INSERT INTO cobro_ledger_entries ${entryRows(entries)}`)
      return execute(sql`WITH entries AS (
        INSERT INTO cobro_ledger_entries ${entryRows(entries)} RETURNING position, entry_id
      ), postings AS (
        INSERT INTO cobro_ledger_postings (entry_position, line, account, currency, amount_minor)
        SELECT entries.position, v.line, v.account, v.currency, v.amount_minor
        FROM (VALUES ${values(postings)}) AS v (entry_id, line, account, currency, amount_minor)
        JOIN entries ON entries.entry_id = v.entry_id
      )
      INSERT INTO cobro_ledger_balances ${sql.insert(
        deltasOf(entries).map((d) => ({ account: d.account, currency: d.currency, sum_minor: d.minor }))
      )}
      ON CONFLICT (account, currency) DO UPDATE SET sum_minor = cobro_ledger_balances.sum_minor + EXCLUDED.sum_minor`)
    }

    const atOnce = statementsAreRoundTrips(sql)
    const appendAll = (entries: ReadonlyArray<Port.JournalEntry>): Effect.Effect<unknown, SqlError> =>
      entries.length === 0
        ? Effect.void
        : atOnce && !takesFromOwed(entries)
          ? appendAtOnce(entries)
          : appendStepwise(entries)

    /**
     * The entries as one: in a transaction of their own, a SAVEPOINT inside a unit of work, so
     * that the balances' CHECK refusing a movement is `insufficientFunds` and leaves the unit of
     * work usable. Entries that take from no balance owed to someone (an incoming transfer's
     * credit: the commonest entry) cannot meet that CHECK; inside a unit of work they are written
     * in it directly, without the savepoint's two statements (two round trips on Postgres).
     */
    const atomically = (entries: ReadonlyArray<Port.JournalEntry>) => {
      const guarded = sql
        .withTransaction(appendAll(entries))
        .pipe(
          Effect.catchTag("SqlError", (e) =>
            isCheckViolation(e.cause) ? Effect.fail(Port.insufficientFunds()) : Effect.die(e)
          )
        )
      return takesFromOwed(entries)
        ? guarded
        : Effect.flatMap(inTransaction, (inside) => (inside ? Effect.orDie(appendAll(entries)) : guarded))
    }

    const sumOf = findOne({
      Request: Schema.Tuple(Schema.String, Schema.String),
      Result: BalanceRow.pipe(Schema.pluck("sum_minor")),
      execute: ([
        account,
        currency
      ]) => sql`SELECT CAST(sum_minor AS TEXT) AS sum_minor FROM cobro_ledger_balances
      WHERE account = ${account} AND currency = ${currency}`
    })
    const balances = findAll({
      Request: Schema.Void,
      Result: BalanceRow,
      execute: () =>
        sql`SELECT account, currency, CAST(sum_minor AS TEXT) AS sum_minor FROM cobro_ledger_balances`
    })
    const postings = findAll({
      Request: Schema.Tuple(Schema.Number, Schema.Number),
      Result: PostingRow,
      execute: ([
        after,
        limit
      ]) => sql`SELECT e.position, e.entry_id, e.kind, e.reference, e.created_ms, p.account,
        p.currency, CAST(p.amount_minor AS TEXT) AS amount_minor
      FROM (SELECT * FROM cobro_ledger_entries WHERE position > ${after} ORDER BY position LIMIT ${limit}) e
      LEFT JOIN cobro_ledger_postings p ON p.entry_position = e.position
      ORDER BY e.position, p.line`
    })

    return Port.LedgerRepository.of({
      append: (entry) => atomically([entry]),
      appendAll: atomically,
      sumOf: (account, currency) =>
        Effect.map(
          sumOf([account, currency]),
          Option.getOrElse(() => 0n)
        ),
      balances: Effect.map(balances(undefined), (rows) =>
        rows.map((r) => ({
          account: r.account as LedgerAccount.LedgerAccount,
          currency: r.currency,
          sum: r.sum_minor
        }))
      ),
      entries: (after, limit) => Effect.map(postings([after, limit]), entriesOf)
    })
  }
)

export const layer: Layer.Layer<Port.LedgerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.LedgerRepository,
  make
)
