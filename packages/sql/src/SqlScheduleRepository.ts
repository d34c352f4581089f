/**
 * `ScheduleRepository` over `SqlClient`: one implementation for Postgres and SQLite. Listings
 * and the job reads keep the memory adapter's order (time, then id); a payout's amount lives in
 * its own columns (the JSON record cannot hold a bigint), so the database checks it is positive.
 */
import { SqlClient } from "@effect/sql"
import { DueScope, Money, Schedule as S } from "@cobro/core"
import { ScheduleRepository as Port } from "@cobro/core/ports"
import { Scope, scopeCondition } from "./internal/dueScope.js"
import { Effect, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/schedule.js"
import { BigIntText, Doc, DocOnly, Millis, findAll, findByKey, orDie, write } from "./internal/sql.js"

/** A row of `cobro_schedules` as written. */
const ScheduleRow = Schema.Struct({
  schedule_id: Schema.String,
  user_id: Schema.String,
  partner_id: Schema.NullOr(Schema.String),
  schedule_status: Schema.String,
  next_run_ms: Millis,
  created_ms: Millis,
  doc: Doc(Documents.PayoutSchedule)
})
const scheduleRow = (s: S.PayoutSchedule): typeof ScheduleRow.Type => ({
  schedule_id: s.schedule_id,
  user_id: s.user_id,
  partner_id: s.partner_id,
  schedule_status: s.schedule_status,
  next_run_ms: s.next_run_date,
  created_ms: s.creation_timestamp,
  doc: s
})

/** A row of `cobro_payouts` as written. */
const PayoutRow = Schema.Struct({
  payout_id: Schema.String,
  schedule_id: Schema.String,
  user_id: Schema.String,
  payout_status: Schema.String,
  amount_minor: Schema.BigIntFromSelf,
  currency: Schema.String,
  attempted_ms: Millis,
  created_ms: Millis,
  doc: Doc(Documents.Payout)
})
const payoutRow = (p: S.Payout): typeof PayoutRow.Type => ({
  payout_id: p.payout_id,
  schedule_id: p.schedule_id,
  user_id: p.user_id,
  payout_status: p.payout_status,
  amount_minor: p.amount.minor,
  currency: p.amount.currency,
  attempted_ms: p.attempted_at,
  created_ms: p.creation_timestamp,
  doc: p
})

/** A payout as read: its document and its amount's columns (the amount selected as text). */
const StoredPayout = Schema.transform(
  Schema.Struct({ doc: Doc(Documents.Payout), amount_minor: BigIntText, currency: Money.Currency }),
  Schema.typeSchema(S.Payout),
  {
    strict: true,
    decode: (r) => new S.Payout({ ...r.doc, amount: Money.make(r.amount_minor, r.currency) }),
    encode: (p) => ({ doc: p, amount_minor: p.amount.minor, currency: p.amount.currency })
  }
)

const Schedules = DocOnly(Documents.PayoutSchedule)
/** A payout's columns as read (the amount as text: SQLite answers INTEGER as a JS number). */
const payoutColumns = "doc, CAST(amount_minor AS TEXT) AS amount_minor, currency"
const Due = Schema.Tuple(Millis, Schema.Number)

export const make: Effect.Effect<Port.ScheduleRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const selectPayout = sql`SELECT ${sql.literal(payoutColumns)} FROM cobro_payouts`

    /** Inserts a row unless its id is taken; whether it was. */
    const insertNew = <I, A>(Row: Schema.Schema<A, I>, table: string, key: string) => {
      const encode = Schema.encode(Row)
      return (row: A) =>
        encode(row).pipe(
          Effect.flatMap(
            (r) => sql`INSERT INTO ${sql(table)} ${sql.insert(r as Record<string, unknown>)}
              ON CONFLICT (${sql(key)}) DO NOTHING RETURNING ${sql(key)}`
          ),
          orDie,
          Effect.map((rows) => rows.length === 1)
        )
    }
    const insertSchedule = insertNew(ScheduleRow, "cobro_schedules", "schedule_id")
    const insertPayout = insertNew(PayoutRow, "cobro_payouts", "payout_id")

    const scheduleById = findByKey(sql, "cobro_schedules", "schedule_id", Schedules)
    const schedulesOf = findAll({
      Request: Schema.Tuple(Schema.String, Schema.UndefinedOr(Schema.String)),
      Result: Schedules,
      execute: ([user, partner]) => sql`SELECT doc FROM cobro_schedules WHERE user_id = ${user}
        ${partner === undefined ? sql`` : sql`AND partner_id = ${partner}`} ORDER BY created_ms, schedule_id`
    })
    const dueSchedules = findAll({
      Request: Schema.Tuple(Millis, Schema.Number, Scope),
      Result: Schedules,
      execute: ([now, limit, scope]) => sql`SELECT doc FROM cobro_schedules
        WHERE schedule_status = 'active' AND next_run_ms <= ${now}${scopeCondition(sql, scope)}
        ORDER BY next_run_ms, schedule_id LIMIT ${limit}`
    })
    const payoutById = findByKey(sql, "cobro_payouts", "payout_id", StoredPayout, payoutColumns)
    const pendingPayouts = findAll({
      Request: Due,
      Result: StoredPayout,
      execute: ([
        before,
        limit
      ]) => sql`${selectPayout} WHERE payout_status = 'PENDING' AND attempted_ms <= ${before}
        ORDER BY attempted_ms, payout_id LIMIT ${limit}`
    })
    const payoutsByUser = findAll({
      Request: Schema.Struct({
        user: Schema.String,
        before: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: StoredPayout,
      execute: ({ before, limit, user }) => {
        const conditions = [
          sql`user_id = ${user}`,
          ...(before === undefined ? [] : [sql`(created_ms, payout_id) < (${before.created}, ${before.id})`])
        ]
        return sql`${selectPayout} WHERE ${sql.and(conditions)}
          ORDER BY created_ms DESC, payout_id DESC LIMIT ${limit}`
      }
    })
    const updateSchedule = write({
      Request: ScheduleRow,
      execute: ({ schedule_id, ...fields }) =>
        sql`UPDATE cobro_schedules SET ${sql.update(fields)} WHERE schedule_id = ${schedule_id}`
    })
    const updatePayout = write({
      Request: PayoutRow,
      execute: ({ payout_id, ...fields }) =>
        sql`UPDATE cobro_payouts SET ${sql.update(fields)} WHERE payout_id = ${payout_id}`
    })

    return Port.ScheduleRepository.of({
      insert: (schedule) =>
        Effect.flatMap(insertSchedule(scheduleRow(schedule)), (inserted) =>
          inserted ? Effect.void : Effect.fail(Port.idTaken("schedule"))
        ),
      update: (schedule) => updateSchedule(scheduleRow(schedule)),
      findById: scheduleById(false),
      findByIdForUpdate: scheduleById(true),
      listByUser: (user) => schedulesOf([user, undefined]),
      listByUserAndPartner: (user, partner) => schedulesOf([user, partner]),
      findDue: (now, limit, scope = DueScope.everyone) => dueSchedules([now, limit, scope]),

      insertPayout: (payout) =>
        Effect.flatMap(insertPayout(payoutRow(payout)), (inserted) =>
          inserted ? Effect.void : Effect.fail(Port.idTaken("payout"))
        ),
      updatePayout: (payout) => updatePayout(payoutRow(payout)),
      findPayoutById: payoutById(false),
      findPayoutByIdForUpdate: payoutById(true),
      listPayouts: findAll({
        Request: Schema.String,
        Result: StoredPayout,
        execute: (schedule) =>
          sql`${selectPayout} WHERE schedule_id = ${schedule} ORDER BY created_ms, payout_id`
      }),
      listPayoutsByUser: (user, before, limit) =>
        payoutsByUser({
          user,
          before: Option.getOrUndefined(
            Option.map(before, (c) => ({ created: c.creation_timestamp, id: c.id }))
          ),
          limit
        }),
      findPendingPayouts: (attemptedBefore, limit) => pendingPayouts([attemptedBefore, limit])
    })
  }
)

export const layer: Layer.Layer<Port.ScheduleRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.ScheduleRepository,
  make
)
