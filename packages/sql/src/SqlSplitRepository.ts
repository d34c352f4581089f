/**
 * `SplitRepository` over `SqlClient`: split payments, their payouts, payout accounts and
 * verification requests, one implementation for Postgres and SQLite. Each record is kept whole as
 * its document (`doc`) beside the columns the database constrains, orders or searches. As in the
 * memory adapter, an update never changes a record's identity or ordering columns (id, owner,
 * external id, CVU, alias, creation time): those are fixed at insert.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DueScope, Split as S } from "@cobro/core"
import { CvuDirectory, SplitRepository as Port } from "@cobro/core/ports"
import { Scope, scopeCondition } from "./internal/dueScope.js"
import { isCvuTaken } from "./SqlCvuDirectory.js"
import { Effect, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/split.js"
import {
  Doc,
  DocOnly,
  Millis,
  NullableMillis,
  findAll,
  findByKey,
  findOne,
  orDie,
  violationText,
  write,
  insertUnique
} from "./internal/sql.js"

type Taken = "external_id" | "cvu" | "alias"

/** The rule a violation names (used when the stored rows do not tell). */
const takenOf = (e: SqlError): Taken => {
  const text = violationText(e)
  return text.includes("alias") ? "alias" : text.includes("cvu") ? "cvu" : "external_id"
}

/** The columns an update of a split payment may change (its state, amounts and times). */
const SplitState = Schema.Struct({
  payment_status: Schema.String,
  payout_status: Schema.NullOr(Schema.String),
  hold_until_ms: NullableMillis,
  lease_until_ms: NullableMillis,
  due_ms: NullableMillis,
  amount_received_minor: Schema.BigIntFromSelf,
  amount_credited_minor: Schema.BigIntFromSelf,
  payouts_total_minor: Schema.NullOr(Schema.BigIntFromSelf),
  doc: Doc(Documents.SplitPayment)
})
/** A row of `cobro_split_payments` as written. */
const SplitRow = Schema.Struct({
  ...SplitState.fields,
  split_payment_id: Schema.String,
  user_id: Schema.String,
  partner_key: Schema.String,
  external_id: Schema.String,
  cvu: Schema.String,
  alias: Schema.String,
  created_ms: Millis
})
const splitState = (s: S.SplitPayment): typeof SplitState.Type => ({
  payment_status: s.payment_status,
  payout_status: s.payout_status,
  hold_until_ms: s.hold_until,
  lease_until_ms: s.lease_until,
  due_ms: S.dueAt(s),
  amount_received_minor: s.amount_received.minor,
  amount_credited_minor: s.amount_credited.minor,
  payouts_total_minor: s.payouts_total === null ? null : s.payouts_total.minor,
  doc: s
})
const splitRow = (s: S.SplitPayment): typeof SplitRow.Type => ({
  ...splitState(s),
  split_payment_id: s.split_payment_id,
  user_id: s.user_id,
  partner_key: s.partner_id ?? "",
  external_id: s.external_id,
  cvu: s.cvu,
  alias: s.alias,
  created_ms: s.creation_timestamp
})

/** A row of `cobro_split_payouts` as written (an update changes all but the keys). */
const PayoutRow = Schema.Struct({
  payout_id: Schema.String,
  split_payment_id: Schema.String,
  account_id: Schema.String,
  position: Schema.Number,
  amount_minor: Schema.BigIntFromSelf,
  status: Schema.String,
  created_ms: Millis,
  doc: Doc(Documents.SplitPayout)
})
const payoutRow = (p: S.SplitPayout): typeof PayoutRow.Type => ({
  payout_id: p.payout_id,
  split_payment_id: p.split_payment_id,
  account_id: p.account_id,
  position: p.position,
  amount_minor: p.amount.minor,
  status: p.status,
  created_ms: p.creation_timestamp,
  doc: p
})

/** A row of `cobro_payout_accounts` as written (an update changes request, account, status, doc). */
const AccountRow = Schema.Struct({
  account_id: Schema.String,
  user_id: Schema.String,
  created_ms: Millis,
  request_id: Schema.NullOr(Schema.String),
  bank_account: Schema.String,
  status: Schema.String,
  doc: Doc(Documents.PayoutAccount)
})
const accountRow = (a: S.PayoutAccount): typeof AccountRow.Type => ({
  account_id: a.account_id,
  user_id: a.user_id,
  created_ms: a.creation_timestamp,
  request_id: a.request_id,
  bank_account: a.bank_account,
  status: a.status,
  doc: a
})

/** A row of `cobro_verification_requests` as written (an update changes status to doc). */
const RequestRow = Schema.Struct({
  request_id: Schema.String,
  user_id: Schema.String,
  created_ms: Millis,
  status: Schema.String,
  attempts: Schema.Number,
  exp_ms: Millis,
  doc: Doc(Documents.VerificationRequest)
})
const requestRow = (r: S.VerificationRequest): typeof RequestRow.Type => ({
  request_id: r.request_id,
  user_id: r.user_id,
  created_ms: r.creation_timestamp,
  status: r.status,
  attempts: r.attempts,
  exp_ms: r.exp_timestamp,
  doc: r
})

export const make: Effect.Effect<Port.SplitRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const split = findByKey(sql, "cobro_split_payments", "split_payment_id", DocOnly(Documents.SplitPayment))
    const account = findByKey(sql, "cobro_payout_accounts", "account_id", DocOnly(Documents.PayoutAccount))
    const request = findByKey(
      sql,
      "cobro_verification_requests",
      "request_id",
      DocOnly(Documents.VerificationRequest)
    )

    const insertSplit = insertUnique(sql, "cobro_split_payments", SplitRow)
    /**
     * Which rule a refused insert broke, with the memory adapter's precedence: the id or external
     * id, then the CVU, then the alias (each dialect reports only one violated constraint, in its
     * own order). Runs after the refused statement's savepoint rolled back.
     */
    const taken = (s: S.SplitPayment) => {
      const sameExternal = sql`(user_id = ${s.user_id} AND partner_key = ${s.partner_id ?? ""}
        AND external_id = ${s.external_id})`
      return sql<{ taken: Taken }>`SELECT CASE
          WHEN split_payment_id = ${s.split_payment_id} OR ${sameExternal} THEN 'external_id'
          WHEN cvu = ${s.cvu} THEN 'cvu'
          ELSE 'alias' END AS taken
        FROM cobro_split_payments
        WHERE split_payment_id = ${s.split_payment_id} OR ${sameExternal} OR cvu = ${s.cvu} OR alias = ${s.alias}`.pipe(
        Effect.map((rows) => {
          const found = new Set(rows.map((r) => r.taken))
          return Option.fromNullable((["external_id", "cvu", "alias"] as const).find((t) => found.has(t)))
        }),
        orDie
      )
    }
    const updateSplit = write({
      Request: Schema.Struct({ id: Schema.String, state: SplitState }),
      execute: ({ id, state }) =>
        sql`UPDATE cobro_split_payments SET ${sql.update(state)} WHERE split_payment_id = ${id}`
    })
    const payoutsByUser = findAll({
      Request: Schema.Struct({
        user: Schema.String,
        before: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: DocOnly(Documents.SplitPayout),
      execute: ({ before, limit, user }) => {
        const conditions = [
          sql`user_id = ${user}`,
          ...(before === undefined ? [] : [sql`(created_ms, payout_id) < (${before.created}, ${before.id})`])
        ]
        return sql`SELECT doc FROM cobro_split_payouts WHERE ${sql.and(conditions)}
          ORDER BY created_ms DESC, payout_id DESC LIMIT ${limit}`
      }
    })
    const insertPayouts = write({
      Request: Schema.Array(PayoutRow),
      execute: (rows) => sql`INSERT INTO cobro_split_payouts ${sql.insert(rows)}`
    })
    const updatePayout = write({
      Request: PayoutRow,
      execute: ({ payout_id, split_payment_id, ...fields }) => sql`UPDATE cobro_split_payouts
        SET ${sql.update(fields)} WHERE payout_id = ${payout_id} AND split_payment_id = ${split_payment_id}`
    })
    const insertAccounts = write({
      Request: Schema.Array(AccountRow),
      execute: (rows) => sql`INSERT INTO cobro_payout_accounts ${sql.insert(rows)}`
    })
    const updateAccount = write({
      Request: AccountRow,
      execute: ({ account_id, created_ms: _c, user_id: _u, ...fields }) =>
        sql`UPDATE cobro_payout_accounts SET ${sql.update(fields)} WHERE account_id = ${account_id}`
    })
    const insertRequest = write({
      Request: RequestRow,
      execute: (r) => sql`INSERT INTO cobro_verification_requests ${sql.insert(r)}`
    })
    const updateRequest = write({
      Request: RequestRow,
      execute: ({ created_ms: _c, request_id, user_id: _u, ...fields }) =>
        sql`UPDATE cobro_verification_requests SET ${sql.update(fields)} WHERE request_id = ${request_id}`
    })

    const byExternalId = findOne({
      Request: Schema.Tuple(Schema.String, Schema.NullOr(Schema.String), Schema.String),
      Result: DocOnly(Documents.SplitPayment),
      execute: ([user, partner, externalId]) => sql`SELECT doc FROM cobro_split_payments
        WHERE user_id = ${user} AND partner_key = ${partner ?? ""} AND external_id = ${externalId}`
    })
    const findDue = findAll({
      Request: Schema.Tuple(Millis, Schema.Number, Scope),
      Result: DocOnly(Documents.SplitPayment),
      execute: ([now, limit, scope]) => sql`SELECT doc FROM cobro_split_payments
        WHERE due_ms IS NOT NULL AND due_ms <= ${now}${scopeCondition(sql, scope)} ORDER BY due_ms, split_payment_id LIMIT ${limit}`
    })

    return Port.SplitRepository.of({
      insert: (s) =>
        insertSplit(splitRow(s), (e) =>
          isCvuTaken(e)
            ? Effect.die(new CvuDirectory.CvuTaken({ cvu: s.cvu }))
            : Effect.flatMap(taken(s), (found) =>
                Effect.fail(Port.taken(Option.getOrElse(found, () => takenOf(e))))
              )
        ),
      update: (s) => updateSplit({ id: s.split_payment_id, state: splitState(s) }),
      findById: split(false),
      findByIdForUpdate: split(true),
      findByExternalId: (user, partner, externalId) => byExternalId([user, partner, externalId]),
      findByCvu: findByKey(sql, "cobro_split_payments", "cvu", DocOnly(Documents.SplitPayment))(false),
      findDue: (now, limit, scope = DueScope.everyone) => findDue([now, limit, scope]),

      insertPayouts: (payouts) =>
        payouts.length === 0
          ? Effect.void
          : Effect.zipRight(
              insertPayouts(payouts.map(payoutRow)),
              // The split's user, copied so a user's payouts are one index range (0014).
              orDie(sql`UPDATE cobro_split_payouts SET user_id = (SELECT s.user_id
                  FROM cobro_split_payments s WHERE s.split_payment_id = cobro_split_payouts.split_payment_id)
                WHERE ${sql.in("split_payment_id", [...new Set(payouts.map((p) => p.split_payment_id))])}
                AND user_id IS NULL`)
            ),
      listPayoutsByUser: (user, before, limit) =>
        payoutsByUser({
          user,
          before: Option.getOrUndefined(
            Option.map(before, (c) => ({ created: c.creation_timestamp, id: c.id }))
          ),
          limit
        }),
      updatePayout: (payout) => updatePayout(payoutRow(payout)),
      payoutsOf: findAll({
        Request: Schema.String,
        Result: DocOnly(Documents.SplitPayout),
        execute: (id) =>
          sql`SELECT doc FROM cobro_split_payouts WHERE split_payment_id = ${id} ORDER BY position`
      }),

      insertAccounts: (accounts) =>
        accounts.length === 0 ? Effect.void : insertAccounts(accounts.map(accountRow)),
      updateAccount: (a) => updateAccount(accountRow(a)),
      findAccount: account(false),
      findAccountForUpdate: account(true),
      accountsOf: findAll({
        Request: Schema.String,
        Result: DocOnly(Documents.PayoutAccount),
        execute: (user) => sql`SELECT doc FROM cobro_payout_accounts WHERE user_id = ${user}
          ORDER BY created_ms, account_id`
      }),

      insertRequest: (r) => insertRequest(requestRow(r)),
      updateRequest: (r) => updateRequest(requestRow(r)),
      findRequest: request(false),
      findRequestForUpdate: request(true)
    })
  }
)

export const layer: Layer.Layer<Port.SplitRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.SplitRepository,
  make
)
