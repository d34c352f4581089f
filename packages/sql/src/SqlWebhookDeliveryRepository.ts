/**
 * `WebhookDeliveryRepository` over `SqlClient`, one implementation for Postgres and SQLite. The
 * pending rows are written by `SqlOutbox.append`. A claim is a single statement that leases the
 * due rows: on Postgres a `FOR UPDATE SKIP LOCKED` CTE feeding an `UPDATE … RETURNING` (two
 * workers never wait on, nor take, each other's rows); on SQLite, whose one connection serialises
 * statements, an `UPDATE … WHERE event_id IN (SELECT … LIMIT n) RETURNING`.
 */
import { SqlClient } from "@effect/sql"
import { DueScope, Ids } from "@cobro/core"
import { WebhookDeliveryRepository as Port } from "@cobro/core/ports"
import { Scope, scopeCondition } from "./internal/dueScope.js"
import { DateTime, Effect, Layer, Schema } from "effect"
import { DeliveryRow, deliveryState } from "./internal/deliveries.js"
import { execute, findAll, findOne, Millis, orDie, statementsAreRoundTrips, write } from "./internal/sql.js"

const Int = Schema.Union(Schema.Number, Schema.NumberFromString)

/** A row of `cobro_webhook_attempts` as the attempt it records. */
const AttemptRow = Schema.transform(
  Schema.Struct({
    attempt_id: Schema.String,
    event_id: Ids.EventId,
    number: Int,
    attempted_ms: Millis,
    duration_ms: Int,
    status_code: Schema.NullOr(Int),
    error: Schema.NullOr(Schema.String),
    outcome: Port.AttemptOutcome,
    worker: Schema.String
  }),
  Schema.typeSchema(Port.DeliveryAttempt),
  {
    strict: true,
    decode: ({ attempted_ms, ...r }) => new Port.DeliveryAttempt({ ...r, attempted_at: attempted_ms }),
    encode: ({ attempted_at, ...a }) => ({ ...a, attempted_ms: attempted_at })
  }
)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const claimable = (now: DateTime.Utc, leaseNow: DateTime.Utc, scope: DueScope.DueScope) => {
    const at = DateTime.toEpochMillis(now)
    const leaseAt = DateTime.toEpochMillis(leaseNow)
    return sql`status = 'pending' AND next_attempt_ms <= ${at} AND (lease_until_ms IS NULL OR lease_until_ms <= ${leaseAt})${scopeCondition(sql, scope)}`
  }

  const claim = findAll({
    Request: Schema.Struct({
      now: Schema.DateTimeUtcFromSelf,
      leaseNow: Schema.DateTimeUtcFromSelf,
      owner: Schema.String,
      until: Millis,
      limit: Schema.Number,
      scope: Scope
    }),
    Result: DeliveryRow,
    execute: ({ now, leaseNow, owner, until, limit, scope }) =>
      sql.onDialectOrElse({
        pg: () => sql`WITH due AS (
            SELECT event_id FROM cobro_webhook_deliveries WHERE ${claimable(now, leaseNow, scope)}
            ORDER BY next_attempt_ms, event_id LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE cobro_webhook_deliveries AS d
          SET lease_owner = ${owner}, lease_until_ms = ${until}
          FROM due WHERE d.event_id = due.event_id
          RETURNING d.*`,
        orElse: () => sql`UPDATE cobro_webhook_deliveries
          SET lease_owner = ${owner}, lease_until_ms = ${until}
          WHERE event_id IN (
            SELECT event_id FROM cobro_webhook_deliveries WHERE ${claimable(now, leaseNow, scope)}
            ORDER BY next_attempt_ms, event_id LIMIT ${limit}
          )
          RETURNING *`
      })
  })

  const find = findOne({
    Request: Ids.EventId,
    Result: DeliveryRow,
    execute: (eventId) => sql`SELECT * FROM cobro_webhook_deliveries WHERE event_id = ${eventId}`
  })

  const encodeAttempt = Schema.encodeSync(AttemptRow)
  const atOnce = statementsAreRoundTrips(sql)
  const insertAttempt = write({
    Request: AttemptRow,
    execute: (row) => sql`INSERT INTO cobro_webhook_attempts ${sql.insert(row)}`
  })

  const attemptsOf = findAll({
    Request: Ids.EventId,
    Result: AttemptRow,
    execute: (eventId) => sql`SELECT * FROM cobro_webhook_attempts WHERE event_id = ${eventId} ORDER BY seq`
  })

  const replay = findOne({
    Request: Schema.Struct({ eventId: Ids.EventId, now: Millis }),
    Result: DeliveryRow,
    execute: ({ eventId, now }) => sql`UPDATE cobro_webhook_deliveries SET
        status = 'pending', round_attempts = 0, replays = replays + 1,
        next_attempt_ms = ${now}, lease_owner = NULL, lease_until_ms = NULL, finished_ms = NULL
      WHERE event_id = ${eventId} RETURNING *`
  })

  return Port.WebhookDeliveryRepository.of({
    claimDue: (now, owner, until, limit, options = {}) =>
      limit <= 0
        ? Effect.succeed([])
        : Effect.map(
            claim({
              now,
              leaseNow: options.leaseNow ?? now,
              owner,
              until,
              limit,
              scope: options.scope ?? DueScope.everyone
            }),
            (rows) => [...rows].sort(Port.claimOrder)
          ),
    complete: (claimed, attempt, next) =>
      orDie(
        Effect.suspend(() => {
          // An attempt is a fact: it is recorded even when the delivery was not (or is no longer)
          // leased to its worker; the delivery's state is written only while the lease holds.
          if (claimed.lease_owner === null || claimed.lease_until === null) {
            return Effect.as(insertAttempt(attempt), false)
          }
          const update = sql`UPDATE cobro_webhook_deliveries SET ${sql.update(deliveryState(next))}
            WHERE event_id = ${claimed.event_id} AND status = 'pending'
              AND lease_owner = ${claimed.lease_owner}
              AND lease_until_ms = ${DateTime.toEpochMillis(claimed.lease_until)}
            RETURNING event_id`
          return Effect.map(
            atOnce
              ? // Postgres: both in one statement (a data-modifying CTE, atomic by itself), one
                // round trip instead of four (BEGIN, INSERT, UPDATE, COMMIT) for every attempt.
                execute(sql`WITH attempt AS (INSERT INTO cobro_webhook_attempts ${sql.insert(encodeAttempt(attempt))})
                  ${update}`)
              : sql.withTransaction(Effect.zipRight(insertAttempt(attempt), update)),
            (updated) => updated.length === 1
          )
        })
      ),
    find,
    list: (query) => {
      const conditions = [
        ...(query.status !== undefined ? [sql`status = ${query.status}`] : []),
        ...(query.user_id !== undefined ? [sql`user_id = ${query.user_id}`] : []),
        ...(query.type !== undefined ? [sql`type = ${query.type}`] : []),
        ...(query.signers !== undefined
          ? [
              query.signers.length === 0
                ? sql`1 = 0`
                : sql.or(
                    query.signers.map((s) =>
                      s.kind === "merchant"
                        ? sql`(signer_kind = 'merchant' AND signer_id = ${s.user_id})`
                        : sql`(signer_kind = 'partner' AND signer_id = ${s.partner_id})`
                    )
                  )
            ]
          : []),
        ...(query.after !== undefined ? [sql`event_id > ${query.after}`] : [])
      ]
      const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`
      return findAll({
        Request: Schema.Number,
        Result: DeliveryRow,
        execute: (limit) =>
          sql`SELECT * FROM cobro_webhook_deliveries ${where} ORDER BY event_id LIMIT ${limit}`
      })(Math.max(0, query.limit))
    },
    attemptsOf,
    replay: (eventId, now) => replay({ eventId, now })
  })
})

export const layer: Layer.Layer<Port.WebhookDeliveryRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.WebhookDeliveryRepository,
  make
)
