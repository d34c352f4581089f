/**
 * `ScheduleRepository` over `SqlClient`: one implementation for Postgres and SQLite. Listings
 * and the job reads keep the memory adapter's order (time, then id); a payout's amount lives in
 * its own columns (the JSON record cannot hold a bigint), so the database checks it is positive.
 */
import { SqlClient } from "@effect/sql"
import { Errors, Money, Schedule as S, ScheduleRepository as Port } from "@cobro/core"
import { Effect, Layer, Option, Schema } from "effect"
import { decodeJson, encodeJson, millis, toBigInt } from "./internal/sql.js"

interface PayoutRow {
  readonly doc: unknown
  readonly amount_minor: unknown
  readonly currency: string
}

/** A payout without its amount: what the `doc` column holds. */
const PayoutDoc = Schema.Struct(S.Payout.fields).pipe(Schema.omit("amount"))

const taken = (what: string) =>
  new Errors.Conflict({ key: `${what}.id.taken`, message: `a ${what} with this id already exists` })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const encodeSchedule = encodeJson(S.PayoutSchedule)
  const decodeSchedule = decodeJson(S.PayoutSchedule)
  const encodePayout = encodeJson(PayoutDoc)
  const decodePayout = decodeJson(PayoutDoc)
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })

  const schedules = (rows: ReadonlyArray<{ doc: unknown }>) => rows.map((r) => decodeSchedule(r.doc))
  const oneSchedule = (rows: ReadonlyArray<{ doc: unknown }>) =>
    Option.map(Option.fromNullable(rows[0]), (r) => decodeSchedule(r.doc))
  const fromPayoutRow = (r: PayoutRow) =>
    new S.Payout({
      ...decodePayout(r.doc),
      amount: Money.make(toBigInt(r.amount_minor), r.currency as Money.Currency)
    })
  const onePayout = (rows: ReadonlyArray<PayoutRow>) =>
    Option.map(Option.fromNullable(rows[0]), fromPayoutRow)

  const scheduleRow = (s: S.PayoutSchedule) => ({
    schedule_id: s.schedule_id,
    user_id: s.user_id,
    partner_id: s.partner_id,
    schedule_status: s.schedule_status,
    next_run_ms: millis(s.next_run_date),
    created_ms: millis(s.creation_timestamp),
    doc: encodeSchedule(s)
  })
  const payoutRow = (p: S.Payout) => ({
    payout_id: p.payout_id,
    schedule_id: p.schedule_id,
    user_id: p.user_id,
    payout_status: p.payout_status,
    amount_minor: p.amount.minor,
    currency: p.amount.currency,
    attempted_ms: millis(p.attempted_at),
    created_ms: millis(p.creation_timestamp),
    doc: encodePayout(p)
  })
  // The amount is read back as text: SQLite returns INTEGER columns as JS numbers.
  const selectPayout = sql`SELECT doc, CAST(amount_minor AS TEXT) AS amount_minor, currency FROM cobro_payouts`

  return Port.ScheduleRepository.of({
    insert: (schedule) =>
      sql`INSERT INTO cobro_schedules ${sql.insert(scheduleRow(schedule))}
        ON CONFLICT (schedule_id) DO NOTHING RETURNING schedule_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : Effect.fail(taken("schedule"))))
      ),
    update: (schedule) => {
      const { schedule_id: _, ...fields } = scheduleRow(schedule)
      return sql`UPDATE cobro_schedules SET ${sql.update(fields)} WHERE schedule_id = ${schedule.schedule_id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    },
    findById: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_schedules WHERE schedule_id = ${id}`.pipe(
        Effect.map(oneSchedule),
        Effect.orDie
      ),
    findByIdForUpdate: (id) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_schedules WHERE schedule_id = ${id}${forUpdate}`.pipe(
        Effect.map(oneSchedule),
        Effect.orDie
      ),
    listByUser: (user) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_schedules WHERE user_id = ${user}
        ORDER BY created_ms, schedule_id`.pipe(Effect.map(schedules), Effect.orDie),
    listByUserAndPartner: (user, partner) =>
      sql<{
        doc: unknown
      }>`SELECT doc FROM cobro_schedules WHERE user_id = ${user} AND partner_id = ${partner}
        ORDER BY created_ms, schedule_id`.pipe(Effect.map(schedules), Effect.orDie),
    findDue: (now, limit) =>
      sql<{ doc: unknown }>`SELECT doc FROM cobro_schedules
        WHERE schedule_status = 'active' AND next_run_ms <= ${millis(now)}
        ORDER BY next_run_ms, schedule_id LIMIT ${limit}`.pipe(Effect.map(schedules), Effect.orDie),

    insertPayout: (payout) =>
      sql`INSERT INTO cobro_payouts ${sql.insert(payoutRow(payout))}
        ON CONFLICT (payout_id) DO NOTHING RETURNING payout_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : Effect.fail(taken("payout"))))
      ),
    updatePayout: (payout) => {
      const { payout_id: _, ...fields } = payoutRow(payout)
      return sql`UPDATE cobro_payouts SET ${sql.update(fields)} WHERE payout_id = ${payout.payout_id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    },
    findPayoutById: (id) =>
      sql<PayoutRow>`${selectPayout} WHERE payout_id = ${id}`.pipe(Effect.map(onePayout), Effect.orDie),
    findPayoutByIdForUpdate: (id) =>
      sql<PayoutRow>`${selectPayout} WHERE payout_id = ${id}${forUpdate}`.pipe(
        Effect.map(onePayout),
        Effect.orDie
      ),
    listPayouts: (schedule) =>
      sql<PayoutRow>`${selectPayout} WHERE schedule_id = ${schedule} ORDER BY created_ms, payout_id`.pipe(
        Effect.map((rows) => rows.map(fromPayoutRow)),
        Effect.orDie
      ),
    findPendingPayouts: (attemptedBefore, limit) =>
      sql<PayoutRow>`${selectPayout} WHERE payout_status = 'PENDING' AND attempted_ms <= ${millis(attemptedBefore)}
        ORDER BY attempted_ms, payout_id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(fromPayoutRow)),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.ScheduleRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.ScheduleRepository,
  make
)
