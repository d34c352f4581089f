/**
 * A credit written by hand, shared by the baselines of `bench/credit.ts` (`raw-server.ts` on the
 * driver, `effect-server.ts` on `@effect/sql`): the rows cobro's faucet writes for a payment paid
 * by a transfer, on tables of the same shape as cobro's (`packages/sql/src/migrations/0001`), with
 * the statements a careful hand would write. In one transaction:
 *
 * 1. the payment looked up by its CVU (the unique index) and locked (`FOR UPDATE` on Postgres;
 *    SQLite's write transaction is `BEGIN IMMEDIATE`);
 * 2. the transfer inserted, a repeated one inserting nothing (and crediting nothing);
 * 3. the payment's document rewritten (paid, the transfer in it);
 * 4. the ledger: an entry, its four postings (the bank's clearing account, the merchant's net,
 *    the commission, its VAT) and the four balances (Postgres: one statement with data-modifying
 *    CTEs, as cobro's ledger writes them; SQLite: three);
 * 5. the outbox row (`payment.updated`; the bench's payments carry no webhook URL, so cobro
 *    writes no delivery row either).
 *
 * On Postgres that is BEGIN, five statements and COMMIT after the token's look-up (cobro: the
 * CVU directory, the payment, the merchant, the transfer, the payment, the ledger, the outbox).
 */

export type Dialect = "pg" | "sqlite"

/** `POST /cvu/<22 digits>/faucet`. */
export const FAUCET = /^\/cvu\/(\d{22})\/faucet$/

export const ddl = (dialect: Dialect, prefix: string): ReadonlyArray<string> => {
  const serial = dialect === "pg" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
  return [
    `CREATE TABLE IF NOT EXISTS ${prefix}_transfers (bank_transaction_id TEXT PRIMARY KEY, cvu TEXT NOT NULL, amount_minor BIGINT NOT NULL CHECK (amount_minor > 0), currency TEXT NOT NULL, target TEXT NOT NULL, target_id TEXT, received_ms BIGINT NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${prefix}_transfers_received ON ${prefix}_transfers (received_ms, bank_transaction_id)`,
    `CREATE TABLE IF NOT EXISTS ${prefix}_ledger_entries (position ${serial}, entry_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, reference TEXT NOT NULL, created_ms BIGINT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${prefix}_ledger_postings (entry_position BIGINT NOT NULL REFERENCES ${prefix}_ledger_entries (position), line INTEGER NOT NULL, account TEXT NOT NULL, currency TEXT NOT NULL, amount_minor BIGINT NOT NULL, PRIMARY KEY (entry_position, line))`,
    `CREATE TABLE IF NOT EXISTS ${prefix}_ledger_balances (account TEXT NOT NULL, currency TEXT NOT NULL, sum_minor BIGINT NOT NULL, PRIMARY KEY (account, currency))`,
    `CREATE TABLE IF NOT EXISTS ${prefix}_outbox (position ${serial}, event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, user_id TEXT NOT NULL, doc TEXT NOT NULL, created_ms BIGINT NOT NULL)`
  ]
}

const POSTINGS = 4

/** `$from, $from+1, …` as `count` placeholders (Postgres), or `?`s (SQLite). */
const holders = (dialect: Dialect, from: number, count: number, cast?: ReadonlyArray<string>) =>
  Array.from({ length: count }, (_, i) => {
    const p = dialect === "pg" ? `$${from + i}` : "?"
    const type = cast?.[i]
    return type === undefined ? p : `CAST(${p} AS ${type})`
  }).join(", ")

export const statements = (dialect: Dialect, prefix: string) => {
  const h = (from: number, count: number, cast?: ReadonlyArray<string>) => holders(dialect, from, count, cast)
  const balancesValues = Array.from({ length: POSTINGS }, (_, i) => `(${h(1 + i * 3, 3)})`)
  const upsert = `ON CONFLICT (account, currency) DO UPDATE SET sum_minor = ${prefix}_ledger_balances.sum_minor + EXCLUDED.sum_minor`
  const entry = `INSERT INTO ${prefix}_ledger_entries (entry_id, kind, reference, created_ms) VALUES (${h(1, 4)})`
  return {
    payment: `SELECT id, user_id, doc FROM ${prefix}_payments WHERE cvu = ${h(1, 1)}${dialect === "pg" ? " FOR UPDATE" : ""}`,
    transfer: `INSERT INTO ${prefix}_transfers (bank_transaction_id, cvu, amount_minor, currency, target, target_id, received_ms) VALUES (${h(1, 7)}) ON CONFLICT (bank_transaction_id) DO NOTHING RETURNING bank_transaction_id`,
    updatePayment: `UPDATE ${prefix}_payments SET doc = ${h(1, 1)} WHERE id = ${h(2, 1)}`,
    /** Postgres: the entry, its postings and the balances in one statement (parameters: entry, postings, balances). */
    ledger: `WITH entry AS (INSERT INTO ${prefix}_ledger_entries (entry_id, kind, reference, created_ms) VALUES (${h(1, 4)}) RETURNING position),
      postings AS (INSERT INTO ${prefix}_ledger_postings (entry_position, line, account, currency, amount_minor)
        SELECT entry.position, v.line, v.account, v.currency, v.amount_minor FROM entry, (VALUES ${Array.from(
          { length: POSTINGS },
          (_, i) => `(${h(5 + i * 4, 4, ["INTEGER", "TEXT", "TEXT", "BIGINT"])})`
        ).join(", ")}) AS v (line, account, currency, amount_minor))
      INSERT INTO ${prefix}_ledger_balances (account, currency, sum_minor) VALUES ${Array.from(
        { length: POSTINGS },
        (_, i) => `(${h(5 + POSTINGS * 4 + i * 3, 3)})`
      ).join(", ")} ${upsert}`,
    /** SQLite: the entry (its position is the row id), then the postings, then the balances. */
    entry,
    entryReturning: `${entry} RETURNING position`,
    postings: `INSERT INTO ${prefix}_ledger_postings (entry_position, line, account, currency, amount_minor) VALUES ${Array.from(
      { length: POSTINGS },
      (_, i) => `(${h(1 + i * 5, 5)})`
    ).join(", ")}`,
    balances: `INSERT INTO ${prefix}_ledger_balances (account, currency, sum_minor) VALUES ${balancesValues.join(", ")} ${upsert}`,
    outbox: `INSERT INTO ${prefix}_outbox (event_id, type, user_id, doc, created_ms) VALUES (${h(1, 5)})`
  }
}

export interface PaymentRow {
  readonly id: string
  readonly user_id: string
  readonly doc: string
}

export type Outcome =
  | { readonly _tag: "Credited"; readonly transfer: string; readonly payment: string }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "NotFound" }

export type Plan =
  | { readonly _tag: "NotFound" }
  | {
      readonly _tag: "Credit"
      readonly transfer: ReadonlyArray<unknown>
      readonly payment: ReadonlyArray<unknown>
      readonly entry: ReadonlyArray<unknown>
      /** line, account, currency, amount. */
      readonly postings: ReadonlyArray<ReadonlyArray<unknown>>
      /** account, currency, amount, in the accounts' order (the locks' order). */
      readonly balances: ReadonlyArray<ReadonlyArray<unknown>>
      readonly outbox: ReadonlyArray<unknown>
    }

let sequence = 0
const id = (kind: string) =>
  `${kind}_${process.pid.toString(36)}${(++sequence).toString(36).padStart(10, "0")}`

/**
 * The rows of a credit of `minor` (ARS) to `row`, the payment of `cvu`, for merchant `userId`:
 * nothing when the payment is not the merchant's. The fees as cobro's demo merchant's: 1 %
 * commission and 21 % VAT on it.
 */
export const plan = (userId: string, cvu: string, minor: number, row: PaymentRow | undefined): Plan => {
  if (row === undefined || row.user_id !== userId) return { _tag: "NotFound" }
  const now = Date.now()
  const transfer = `RAW-${id("t")}`
  const commission = Math.round(minor / 100)
  const tax = Math.round((commission * 21) / 100)
  const doc = JSON.parse(row.doc) as Record<string, unknown>
  const received = Array.isArray(doc["transfers"]) ? (doc["transfers"] as ReadonlyArray<unknown>) : []
  const updated = {
    ...doc,
    status: "paid",
    paid_at: new Date(now).toISOString(),
    transfers: [...received, { bank_transaction_id: transfer, amount_minor: minor, currency: "ARS" }]
  }
  const postings: ReadonlyArray<ReadonlyArray<unknown>> = [
    [0, "bank:clearing", "ARS", minor],
    [1, `merchant:${userId}:available`, "ARS", -(minor - commission - tax)],
    [2, "platform:commission", "ARS", -commission],
    [3, "platform:tax:IVA", "ARS", -tax]
  ]
  const event = id("evt")
  return {
    _tag: "Credit",
    transfer: [transfer, cvu, minor, "ARS", "payment", row.id, now],
    payment: [JSON.stringify(updated), row.id],
    entry: [id("le"), "payment.transfer", transfer, now],
    postings,
    balances: postings
      .map((p) => [p[1], p[2], p[3]] as const)
      .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
    outbox: [
      event,
      "payment.updated",
      userId,
      JSON.stringify({
        event_id: event,
        type: "payment.updated",
        user_id: userId,
        partner_id: null,
        webhook_url: null,
        payload: { message: "Payment updated", paymentId: row.id, externalId: doc["external_id"] },
        created_at: new Date(now).toISOString()
      }),
      now
    ]
  }
}

/** The HTTP status and body of a credit's outcome, in cobro's envelope. */
export const answer = (outcome: Outcome): readonly [number, unknown] => {
  switch (outcome._tag) {
    case "Credited":
      return [
        200,
        {
          message: "faucet.transfer.sent",
          error: false,
          code: 200,
          data: {
            transaction_id: outcome.transfer,
            outcome: "credited",
            target: "payment",
            target_id: outcome.payment
          }
        }
      ]
    case "Duplicate":
      return [409, { message: "transfer.duplicate", error: true, code: 409 }]
    case "NotFound":
      return [404, { message: "cvu.not_found", error: true, code: 404 }]
  }
}
