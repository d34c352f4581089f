/**
 * Split payments, their payouts, payout accounts and verification requests (`SplitRepository`).
 * The primary keys and UNIQUE constraints are the port's uniqueness rules: a split's CVU and alias
 * are unique, and its `external_id` is unique per (user, partner or none). NULLs are distinct in
 * UNIQUE constraints, so "no partner" is stored as `partner_key = ''` (partner ids are never empty).
 * Money is BIGINT minor units, times are UTC epoch milliseconds (`*_ms`); `due_ms` is when a split
 * next becomes due for execution (`Split.dueAt`: the hold's end while ON_HOLD, the lease's end while
 * PROCESSING, NULL otherwise). Ids that order listings compare byte-wise on both dialects
 * (`COLLATE "C"` on Postgres, SQLite's default BINARY), as the memory adapter compares strings.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const ordered = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })

  // Which rule a refused insert broke is read back from the rows (`SqlSplitRepository.insert`):
  // the dialects report one violated constraint each, not in the same order.
  yield* sql.unsafe(`CREATE TABLE cobro_split_payments (
    split_payment_id ${ordered} NOT NULL,
    user_id TEXT NOT NULL,
    partner_key TEXT NOT NULL,
    external_id TEXT NOT NULL,
    cvu TEXT NOT NULL,
    alias TEXT NOT NULL,
    payment_status TEXT NOT NULL CHECK (payment_status IN ('PENDING', 'RECEIVED')),
    payout_status TEXT CHECK (payout_status IN ('ON_HOLD', 'PROCESSING', 'SUCCESS', 'PARTIAL_FAILURE', 'FAILED')),
    hold_until_ms BIGINT,
    lease_until_ms BIGINT,
    due_ms BIGINT,
    amount_received_minor BIGINT NOT NULL CHECK (amount_received_minor >= 0),
    amount_credited_minor BIGINT NOT NULL CHECK (amount_credited_minor >= 0),
    payouts_total_minor BIGINT CHECK (payouts_total_minor >= 0),
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_split_payments_pkey PRIMARY KEY (split_payment_id),
    CONSTRAINT cobro_split_payments_external_id UNIQUE (user_id, partner_key, external_id),
    CONSTRAINT cobro_split_payments_cvu UNIQUE (cvu),
    CONSTRAINT cobro_split_payments_alias UNIQUE (alias)
  )`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_split_payments_due ON cobro_split_payments (due_ms, split_payment_id) WHERE due_ms IS NOT NULL`
  )

  // One row per payout of a split's instruction, in instruction order.
  yield* sql.unsafe(`CREATE TABLE cobro_split_payouts (
    payout_id TEXT NOT NULL,
    split_payment_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED')),
    doc TEXT NOT NULL,
    CONSTRAINT cobro_split_payouts_pkey PRIMARY KEY (payout_id),
    CONSTRAINT cobro_split_payouts_split FOREIGN KEY (split_payment_id)
      REFERENCES cobro_split_payments (split_payment_id),
    CONSTRAINT cobro_split_payouts_position UNIQUE (split_payment_id, position)
  )`)

  yield* sql.unsafe(`CREATE TABLE cobro_payout_accounts (
    account_id ${ordered} NOT NULL,
    user_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    bank_account TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('PENDING_VERIFICATION', 'ACTIVE', 'DISABLED')),
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_payout_accounts_pkey PRIMARY KEY (account_id)
  )`)
  yield* sql.unsafe(
    `CREATE INDEX cobro_payout_accounts_user ON cobro_payout_accounts (user_id, created_ms, account_id)`
  )

  // One 2FA verification per list of accounts; the code itself is the SecondFactor port's.
  yield* sql.unsafe(`CREATE TABLE cobro_verification_requests (
    request_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'VERIFIED', 'LOCKED')),
    attempts INTEGER NOT NULL CHECK (attempts >= 0),
    exp_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    doc TEXT NOT NULL,
    CONSTRAINT cobro_verification_requests_pkey PRIMARY KEY (request_id)
  )`)
})
