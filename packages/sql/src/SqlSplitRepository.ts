/**
 * `SplitRepository` over `SqlClient`: split payments, their payouts, payout accounts and
 * verification requests, one implementation for Postgres and SQLite. Each record is kept whole as
 * the JSON of its wire form (`doc`) beside the columns the database constrains, orders or
 * searches. As in the memory adapter, an update never changes a record's identity or ordering
 * columns (id, owner, external id, CVU, alias, creation time): those are fixed at insert.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Errors, Split as S, SplitRepository as Port } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import {
  decodeJson,
  encodeJson,
  isUniqueViolation,
  millis,
  recoverable,
  violationText
} from "./internal/sql.js"

interface DocRow {
  readonly doc: unknown
}

type Taken = "external_id" | "cvu" | "alias"

/** The rule a violation names (used when the stored rows do not tell). */
const takenOf = (e: SqlError): Taken => {
  const text = violationText(e)
  return text.includes("alias") ? "alias" : text.includes("cvu") ? "cvu" : "external_id"
}

const conflict = (taken: Taken) =>
  new Errors.Conflict({
    key: `split.${taken}.taken`,
    message: "a split payment with this id or CVU already exists"
  })

const nullableMillis = (value: S.SplitPayment["hold_until"]) => (value === null ? null : millis(value))

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })

  const encodeSplit = encodeJson(S.SplitPayment)
  const decodeSplit = decodeJson(S.SplitPayment)
  const encodePayout = encodeJson(S.SplitPayout)
  const decodePayout = decodeJson(S.SplitPayout)
  const encodeAccount = encodeJson(S.PayoutAccount)
  const decodeAccount = decodeJson(S.PayoutAccount)
  const encodeRequest = encodeJson(S.VerificationRequest)
  const decodeRequest = decodeJson(S.VerificationRequest)

  const one =
    <A>(decode: (doc: unknown) => A) =>
    (rows: ReadonlyArray<DocRow>): Option.Option<A> =>
      Option.map(Option.fromNullable(rows[0]), (r) => decode(r.doc))
  const many =
    <A>(decode: (doc: unknown) => A) =>
    (rows: ReadonlyArray<DocRow>): ReadonlyArray<A> =>
      rows.map((r) => decode(r.doc))

  /** The columns an update may change (state, amounts, times of the state machine, the record). */
  const splitState = (s: S.SplitPayment) => {
    const due = S.dueAt(s)
    return {
      payment_status: s.payment_status,
      payout_status: s.payout_status,
      hold_until_ms: nullableMillis(s.hold_until),
      lease_until_ms: nullableMillis(s.lease_until),
      due_ms: due === null ? null : millis(due),
      amount_received_minor: s.amount_received.minor,
      amount_credited_minor: s.amount_credited.minor,
      payouts_total_minor: s.payouts_total === null ? null : s.payouts_total.minor,
      doc: encodeSplit(s)
    }
  }
  const splitRow = (s: S.SplitPayment) => ({
    split_payment_id: s.split_payment_id,
    user_id: s.user_id,
    partner_key: s.partner_id ?? "",
    external_id: s.external_id,
    cvu: s.cvu,
    alias: s.alias,
    created_ms: millis(s.creation_timestamp),
    ...splitState(s)
  })

  const payoutState = (p: S.SplitPayout) => ({
    account_id: p.account_id,
    position: p.position,
    amount_minor: p.amount.minor,
    status: p.status,
    doc: encodePayout(p)
  })
  const payoutRow = (p: S.SplitPayout) => ({
    payout_id: p.payout_id,
    split_payment_id: p.split_payment_id,
    ...payoutState(p)
  })

  const accountState = (a: S.PayoutAccount) => ({
    request_id: a.request_id,
    bank_account: a.bank_account,
    status: a.status,
    doc: encodeAccount(a)
  })
  const accountRow = (a: S.PayoutAccount) => ({
    account_id: a.account_id,
    user_id: a.user_id,
    created_ms: millis(a.creation_timestamp),
    ...accountState(a)
  })

  const requestState = (r: S.VerificationRequest) => ({
    status: r.status,
    attempts: r.attempts,
    exp_ms: millis(r.exp_timestamp),
    doc: encodeRequest(r)
  })
  const requestRow = (r: S.VerificationRequest) => ({
    request_id: r.request_id,
    user_id: r.user_id,
    created_ms: millis(r.creation_timestamp),
    ...requestState(r)
  })

  const findById = (id: S.SplitPayment["split_payment_id"]) =>
    sql<DocRow>`SELECT doc FROM cobro_split_payments WHERE split_payment_id = ${id}`.pipe(
      Effect.map(one(decodeSplit)),
      Effect.orDie
    )
  const findAccount = (id: S.PayoutAccount["account_id"]) =>
    sql<DocRow>`SELECT doc FROM cobro_payout_accounts WHERE account_id = ${id}`.pipe(
      Effect.map(one(decodeAccount)),
      Effect.orDie
    )
  const findRequest = (id: S.VerificationRequest["request_id"]) =>
    sql<DocRow>`SELECT doc FROM cobro_verification_requests WHERE request_id = ${id}`.pipe(
      Effect.map(one(decodeRequest)),
      Effect.orDie
    )

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
      })
    )
  }

  return Port.SplitRepository.of({
    insert: (split) =>
      recoverable(sql)(sql`INSERT INTO cobro_split_payments ${sql.insert(splitRow(split))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", (e) =>
          isUniqueViolation(e)
            ? Effect.flatMap(Effect.orDie(taken(split)), (found) =>
                Effect.fail(conflict(Option.getOrElse(found, () => takenOf(e))))
              )
            : Effect.die(e)
        )
      ),
    update: (split) =>
      sql`UPDATE cobro_split_payments SET ${sql.update(splitState(split))}
        WHERE split_payment_id = ${split.split_payment_id}`.pipe(Effect.asVoid, Effect.orDie),
    findById,
    findByIdForUpdate: (id) =>
      sql<DocRow>`SELECT doc FROM cobro_split_payments WHERE split_payment_id = ${id}${forUpdate}`.pipe(
        Effect.map(one(decodeSplit)),
        Effect.orDie
      ),
    findByExternalId: (user, partner, externalId) =>
      sql<DocRow>`SELECT doc FROM cobro_split_payments
        WHERE user_id = ${user} AND partner_key = ${partner ?? ""} AND external_id = ${externalId}`.pipe(
        Effect.map(one(decodeSplit)),
        Effect.orDie
      ),
    findByCvu: (cvu) =>
      sql<DocRow>`SELECT doc FROM cobro_split_payments WHERE cvu = ${cvu}`.pipe(
        Effect.map(one(decodeSplit)),
        Effect.orDie
      ),
    findDue: (now, limit) =>
      sql<DocRow>`SELECT doc FROM cobro_split_payments WHERE due_ms IS NOT NULL AND due_ms <= ${millis(now)}
        ORDER BY due_ms, split_payment_id LIMIT ${limit}`.pipe(Effect.map(many(decodeSplit)), Effect.orDie),

    insertPayouts: (payouts) =>
      payouts.length === 0
        ? Effect.void
        : sql`INSERT INTO cobro_split_payouts ${sql.insert(payouts.map(payoutRow))}`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
    updatePayout: (payout) =>
      sql`UPDATE cobro_split_payouts SET ${sql.update(payoutState(payout))}
        WHERE payout_id = ${payout.payout_id} AND split_payment_id = ${payout.split_payment_id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    payoutsOf: (id) =>
      sql<DocRow>`SELECT doc FROM cobro_split_payouts WHERE split_payment_id = ${id} ORDER BY position`.pipe(
        Effect.map(many(decodePayout)),
        Effect.orDie
      ),

    insertAccounts: (accounts) =>
      accounts.length === 0
        ? Effect.void
        : sql`INSERT INTO cobro_payout_accounts ${sql.insert(accounts.map(accountRow))}`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
    updateAccount: (account) =>
      sql`UPDATE cobro_payout_accounts SET ${sql.update(accountState(account))}
        WHERE account_id = ${account.account_id}`.pipe(Effect.asVoid, Effect.orDie),
    findAccount,
    findAccountForUpdate: (id) =>
      sql<DocRow>`SELECT doc FROM cobro_payout_accounts WHERE account_id = ${id}${forUpdate}`.pipe(
        Effect.map(one(decodeAccount)),
        Effect.orDie
      ),
    accountsOf: (user) =>
      sql<DocRow>`SELECT doc FROM cobro_payout_accounts WHERE user_id = ${user}
        ORDER BY created_ms, account_id`.pipe(Effect.map(many(decodeAccount)), Effect.orDie),

    insertRequest: (request) =>
      sql`INSERT INTO cobro_verification_requests ${sql.insert(requestRow(request))}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    updateRequest: (request) =>
      sql`UPDATE cobro_verification_requests SET ${sql.update(requestState(request))}
        WHERE request_id = ${request.request_id}`.pipe(Effect.asVoid, Effect.orDie),
    findRequest,
    findRequestForUpdate: (id) =>
      sql<DocRow>`SELECT doc FROM cobro_verification_requests WHERE request_id = ${id}${forUpdate}`.pipe(
        Effect.map(one(decodeRequest)),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.SplitRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.SplitRepository,
  make
)
