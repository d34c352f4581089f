/**
 * `ReconciliationCursor` over `SqlClient` (table `cobro_bank_reconciliation`, migration 0013):
 * one row per collecting account. A claim is one conditional upsert (`ON CONFLICT … DO UPDATE …
 * WHERE` the lease is free, ran out, or is the claimer's own), so two instances claiming at once
 * on Postgres get one `Claimed` and one `Busy`; a release moves the cursor forward only, and only
 * for the lease's holder.
 */
import { SqlClient } from "@effect/sql"
import { Spans } from "@cobro/core"
import { ReconciliationCursor as Port } from "@cobro/core/ports"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { execute, findOne, Millis, millis, NullableMillis, orDie } from "./internal/sql.js"

const QuarantineRows = Schema.Array(
  Schema.Struct({
    bank_transaction_id: Schema.String,
    reason: Schema.String,
    body: Schema.String,
    quarantined_ms: Millis
  })
)
const decodeQuarantine = Schema.decodeUnknown(QuarantineRows)

const ClaimRow = Schema.Struct({ cursor_ms: NullableMillis })

const Claim = Schema.Struct({
  account: Schema.String,
  owner: Schema.String,
  now: Schema.Number,
  until: Schema.Number
})

const Release = Schema.Struct({
  account: Schema.String,
  owner: Schema.String,
  to: Schema.NullOr(Schema.Number)
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const claimRow = findOne({
    Request: Claim,
    Result: ClaimRow,
    execute: ({ account, owner, now, until }) =>
      sql`INSERT INTO cobro_bank_reconciliation (account, cursor_ms, lease_owner, lease_until_ms)
        VALUES (${account}, NULL, ${owner}, ${until})
        ON CONFLICT (account) DO UPDATE
          SET lease_owner = excluded.lease_owner, lease_until_ms = excluded.lease_until_ms
          WHERE cobro_bank_reconciliation.lease_owner IS NULL
            OR cobro_bank_reconciliation.lease_owner = excluded.lease_owner
            OR cobro_bank_reconciliation.lease_until_ms <= ${now}
        RETURNING cursor_ms`
  })

  const releaseRow = findOne({
    Request: Release,
    Result: Schema.Struct({ account: Schema.String }),
    execute: ({ account, owner, to }) =>
      to === null
        ? sql`UPDATE cobro_bank_reconciliation SET lease_owner = NULL, lease_until_ms = NULL
            WHERE account = ${account} AND lease_owner = ${owner} RETURNING account`
        : sql`UPDATE cobro_bank_reconciliation
            SET lease_owner = NULL, lease_until_ms = NULL,
              cursor_ms = CASE WHEN cursor_ms IS NULL OR cursor_ms < CAST(${to} AS BIGINT)
                THEN CAST(${to} AS BIGINT) ELSE cursor_ms END
            WHERE account = ${account} AND lease_owner = ${owner} RETURNING account`
  })

  return Port.ReconciliationCursor.of({
    claim: (account, owner, now, until) =>
      claimRow({ account, owner, now: millis(now), until: millis(until) }).pipe(
        Effect.map(
          Option.match({
            onNone: (): Port.Claim => ({ _tag: "Busy" }),
            onSome: (row): Port.Claim => ({
              _tag: "Claimed",
              cursor: Option.fromNullable(row.cursor_ms) as Option.Option<DateTime.Utc>
            })
          })
        ),
        Spans.span("ReconciliationCursor.claim")
      ),
    release: (account, owner, to) =>
      releaseRow({ account, owner, to: Option.match(to, { onNone: () => null, onSome: millis }) }).pipe(
        Effect.map(Option.isSome),
        Spans.span("ReconciliationCursor.release")
      ),
    quarantine: (account, entries) =>
      entries.length === 0
        ? Effect.void
        : orDie(
            execute(
              sql`INSERT INTO cobro_bank_quarantine ${sql.insert(
                entries.map((q) => ({
                  account,
                  entry_key: Port.quarantineKey(q),
                  bank_transaction_id: q.bank_transaction_id,
                  reason: q.reason,
                  body: q.body,
                  quarantined_ms: millis(q.quarantined_at)
                }))
              )} ON CONFLICT (account, entry_key) DO NOTHING`
            )
          ).pipe(Effect.asVoid),
    quarantined: (account, limit) =>
      orDie(
        Effect.flatMap(
          execute(sql`SELECT bank_transaction_id, reason, body, quarantined_ms FROM cobro_bank_quarantine
            WHERE account = ${account} ORDER BY quarantined_ms, entry_key LIMIT ${limit}`),
          decodeQuarantine
        )
      ).pipe(
        Effect.map((rows) =>
          rows.map(({ quarantined_ms, ...q }) => ({ ...q, quarantined_at: quarantined_ms }))
        )
      )
  })
})

/** The cursors (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.ReconciliationCursor, never, SqlClient.SqlClient> = Layer.effect(
  Port.ReconciliationCursor,
  make
)
