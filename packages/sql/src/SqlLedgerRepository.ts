/**
 * `LedgerRepository` over `SqlClient`. The journal tables are append-only (triggers) and the
 * balance table refuses a negative balance owed to someone (CHECK), so the database holds the
 * ledger's invariants even against code that bypasses the service.
 */
import { SqlClient } from "@effect/sql"
import { Errors, Ids, LedgerAccount, LedgerRepository as Port, Money } from "@cobro/core"
import { Effect, Layer } from "effect"
import { millis, toBigInt, toDateTime } from "./internal/sql.js"

interface PostingRow {
  readonly position: unknown
  readonly entry_id: string
  readonly kind: string
  readonly reference: string
  readonly created_ms: unknown
  readonly account: string
  readonly currency: string
  readonly amount_minor: unknown
}

const isCheckViolation = (cause: unknown) => {
  const c = cause as { code?: unknown; message?: unknown } | undefined
  return (
    c?.code === "23514" || (typeof c?.message === "string" && c.message.includes("CHECK constraint failed"))
  )
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const append = (entry: Port.JournalEntry) =>
    Effect.gen(function* () {
      const [inserted] = yield* sql<{ position: unknown }>`INSERT INTO cobro_ledger_entries ${sql.insert({
        entry_id: entry.entry_id,
        kind: entry.kind,
        reference: entry.reference,
        created_ms: millis(entry.created_at)
      })} RETURNING position`
      const position = toBigInt(inserted!.position)
      if (entry.postings.length === 0) return
      yield* sql`INSERT INTO cobro_ledger_postings ${sql.insert(
        entry.postings.map((p, line) => ({
          entry_position: position,
          line,
          account: p.account,
          currency: p.amount.currency,
          amount_minor: p.amount.minor
        }))
      )}`
      // Add to the balance row; only when it does not exist yet, create it at zero and add again.
      // (Not `INSERT … ON CONFLICT DO UPDATE`: a CHECK is evaluated on an upsert's proposed row
      // before its conflict is resolved, so it would refuse a debit the existing balance covers.)
      for (const p of entry.postings) {
        const add = sql<{ account: string }>`UPDATE cobro_ledger_balances
          SET sum_minor = sum_minor + ${p.amount.minor}
          WHERE account = ${p.account} AND currency = ${p.amount.currency} RETURNING account`
        if ((yield* add).length > 0) continue
        yield* sql`INSERT INTO cobro_ledger_balances ${sql.insert({
          account: p.account,
          currency: p.amount.currency,
          sum_minor: 0
        })} ON CONFLICT (account, currency) DO NOTHING`
        yield* add
      }
    })

  return Port.LedgerRepository.of({
    append: (entry) =>
      sql.withTransaction(append(entry)).pipe(
        Effect.catchTag("SqlError", (e) =>
          isCheckViolation(e.cause)
            ? Effect.fail(
                new Errors.Conflict({
                  key: "ledger.insufficient.funds",
                  message: "the balance is not enough for this movement"
                })
              )
            : Effect.die(e)
        )
      ),
    sumOf: (account, currency) =>
      sql<{ sum_minor: unknown }>`SELECT sum_minor FROM cobro_ledger_balances
        WHERE account = ${account} AND currency = ${currency}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? 0n : toBigInt(rows[0].sum_minor))),
        Effect.orDie
      ),
    balances: sql<{
      account: string
      currency: string
      sum_minor: unknown
    }>`SELECT account, currency, sum_minor
      FROM cobro_ledger_balances`.pipe(
      Effect.map((rows) =>
        rows.map((r) => ({
          account: r.account as LedgerAccount.LedgerAccount,
          currency: r.currency as Money.Currency,
          sum: toBigInt(r.sum_minor)
        }))
      ),
      Effect.orDie
    ),
    entries: (after, limit) =>
      sql<PostingRow>`SELECT e.position, e.entry_id, e.kind, e.reference, e.created_ms, p.account, p.currency, p.amount_minor
        FROM (SELECT * FROM cobro_ledger_entries WHERE position > ${after} ORDER BY position LIMIT ${limit}) e
        LEFT JOIN cobro_ledger_postings p ON p.entry_position = e.position
        ORDER BY e.position, p.line`.pipe(
        Effect.map((rows) => {
          const out: Array<{ position: number; entry: Port.JournalEntry }> = []
          let current: { position: number; head: PostingRow; postings: Array<Port.Posting> } | undefined
          const flush = () => {
            if (current === undefined) return
            out.push({
              position: current.position,
              entry: new Port.JournalEntry({
                entry_id: Ids.LedgerEntryId.make(current.head.entry_id),
                kind: current.head.kind,
                reference: current.head.reference,
                created_at: toDateTime(current.head.created_ms),
                postings: current.postings
              })
            })
          }
          for (const r of rows) {
            const position = Number(r.position)
            if (current?.position !== position) {
              flush()
              current = { position, head: r, postings: [] }
            }
            if (r.account !== null) {
              current.postings.push(
                new Port.Posting({
                  account: r.account as LedgerAccount.LedgerAccount,
                  amount: Money.make(toBigInt(r.amount_minor), r.currency as Money.Currency)
                })
              )
            }
          }
          flush()
          return out
        }),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.LedgerRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.LedgerRepository,
  make
)
