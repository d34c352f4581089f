/**
 * `PaymentRepository` over `SqlClient`: one implementation for Postgres and SQLite. A row is its
 * indexed columns beside the document (`doc`, in the storage shape of `internal/documents`).
 */
import { SqlClient } from "@effect/sql"
import { DueScope, CvuDirectory, Payment as P, PaymentRepository as Port } from "@cobro/core"
import { Scope, scopeCondition } from "./internal/dueScope.js"
import { isCvuTaken } from "./SqlCvuDirectory.js"
import { Effect, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/payment.js"
import {
  Doc,
  DocOnly,
  Flag,
  Millis,
  findAll,
  findByKey,
  findOne,
  forUpdate,
  forUpdateSkipLocked,
  write,
  insertUnique
} from "./internal/sql.js"

/** A row of `cobro_payments` as written. */
const PaymentRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  external_id: Schema.String,
  cvu: Schema.String,
  team_id: Schema.NullOr(Schema.String),
  created_ms: Millis,
  expires_ms: Millis,
  cvu_released: Flag,
  doc: Doc(Documents.Payment)
})

const row = (p: P.Payment): typeof PaymentRow.Type => ({
  id: p.id,
  user_id: p.user_id,
  external_id: p.external_id,
  cvu: p.cvu,
  team_id: p.team_id,
  created_ms: p.creation_timestamp,
  expires_ms: p.expiration_timestamp,
  cvu_released: p.cvu_released,
  doc: p
})

const Stored = DocOnly(Documents.Payment)
const Id = Schema.String

export const make: Effect.Effect<Port.PaymentRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const locked = forUpdate(sql)
    const claimable = forUpdateSkipLocked(sql)

    const insert = insertUnique(sql, "cobro_payments", PaymentRow)
    const update = write({
      Request: PaymentRow,
      execute: ({ id, ...fields }) => sql`UPDATE cobro_payments SET ${sql.update(fields)} WHERE id = ${id}`
    })
    const byId = findByKey(sql, "cobro_payments", "id", Stored)
    const byCvu = findByKey(sql, "cobro_payments", "cvu", Stored)
    const byCvus = findAll({
      Request: Schema.Array(Schema.String),
      Result: Stored,
      execute: (cvus) => sql`SELECT doc FROM cobro_payments WHERE ${sql.in("cvu", cvus)} ORDER BY id${locked}`
    })
    const byExternalId = findOne({
      Request: Schema.Struct({ user: Schema.String, ext: Schema.String }),
      Result: Stored,
      execute: ({ ext, user }) =>
        sql`SELECT doc FROM cobro_payments WHERE user_id = ${user} AND external_id = ${ext}`
    })
    const claimDue = findOne({
      Request: Schema.Struct({ id: Id, now: Millis }),
      Result: Stored,
      execute: ({ id, now }) => sql`SELECT doc FROM cobro_payments
      WHERE id = ${id} AND cvu_released = 0 AND expires_ms <= ${now}${claimable}`
    })
    const findDue = findAll({
      Request: Schema.Struct({ now: Millis, limit: Schema.Number, scope: Scope }),
      Result: Stored,
      execute: ({ limit, now, scope }) => sql`SELECT doc FROM cobro_payments
      WHERE cvu_released = 0 AND expires_ms <= ${now}${scopeCondition(sql, scope)}
      ORDER BY expires_ms, id LIMIT ${limit}`
    })
    const page = findAll({
      Request: Schema.Struct({
        user: Schema.String,
        team: Schema.UndefinedOr(Schema.String),
        from: Schema.UndefinedOr(Millis),
        to: Schema.UndefinedOr(Millis),
        after: Schema.UndefinedOr(Schema.Struct({ created: Millis, id: Id })),
        limit: Schema.Number
      }),
      Result: Stored,
      execute: (q) => {
        const conditions = [
          sql`user_id = ${q.user}`,
          ...(q.team !== undefined ? [sql`team_id = ${q.team}`] : []),
          ...(q.from !== undefined ? [sql`created_ms >= ${q.from}`] : []),
          ...(q.to !== undefined ? [sql`created_ms <= ${q.to}`] : []),
          ...(q.after !== undefined ? [sql`(created_ms, id) > (${q.after.created}, ${q.after.id})`] : [])
        ]
        return sql`SELECT doc FROM cobro_payments WHERE ${sql.and(conditions)}
        ORDER BY created_ms, id LIMIT ${q.limit}`
      }
    })

    return Port.PaymentRepository.of({
      insert: (payment) =>
        insert(row(payment), (e) =>
          isCvuTaken(e)
            ? Effect.die(new CvuDirectory.CvuTaken({ cvu: payment.cvu }))
            : Effect.fail(Port.taken("external_id"))
        ),
      update: (payment) => update(row(payment)),
      findById: byId(false),
      findByIdForUpdate: byId(true),
      claimDue: (id, now) => claimDue({ id, now }),
      findByExternalId: (user, ext) => byExternalId({ user, ext }),
      findByCvu: byCvu(false),
      findByCvuForUpdate: byCvu(true),
      findByCvusForUpdate: (cvus) => (cvus.length === 0 ? Effect.succeed([]) : byCvus([...new Set(cvus)])),
      page: (query, cursor, limit) =>
        page({
          user: query.user_id,
          team: query.team_id,
          from: query.start_date,
          to: query.end_date,
          after: Option.getOrUndefined(
            Option.map(cursor, (c) => ({ created: c.creation_timestamp, id: c.id }))
          ),
          limit
        }),
      findDue: (now, limit, scope = DueScope.everyone) => findDue({ now, limit, scope })
    })
  }
)

export const layer: Layer.Layer<Port.PaymentRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.PaymentRepository,
  make
)
