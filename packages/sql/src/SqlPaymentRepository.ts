/**
 * `PaymentRepository` over `SqlClient`: one implementation for Postgres and SQLite. A row is its
 * indexed columns beside the document (`doc`, in the storage shape of `internal/documents`).
 */
import { SqlClient } from "@effect/sql"
import { DueScope, Payment as P } from "@cobro/core"
import { CvuDirectory, PaymentRepository as Port } from "@cobro/core/ports"
import { Scope, scopeCondition } from "./internal/dueScope.js"
import { isCvuTaken } from "./SqlCvuDirectory.js"
import { Effect, Either, Layer, Option, Schema } from "effect"
import * as Documents from "./internal/documents/payment.js"
import { encodedRow } from "./internal/paymentRow.js"
import {
  DocOnly,
  Millis,
  findAll,
  findByKey,
  findOne,
  forUpdate,
  forUpdateSkipLocked,
  execute,
  isUniqueViolation,
  orDie,
  recoverable
} from "./internal/sql.js"

const Stored = DocOnly(Documents.Payment)
const Id = Schema.String

export const make: Effect.Effect<Port.PaymentRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const locked = forUpdate(sql)
    const claimable = forUpdateSkipLocked(sql)

    const insert = (payment: P.Payment) =>
      recoverable(sql)(execute(sql`INSERT INTO cobro_payments ${sql.insert(encodedRow(payment))}`)).pipe(
        Effect.catchAll((e) =>
          !isUniqueViolation(e)
            ? Effect.die(e)
            : isCvuTaken(e)
              ? Effect.die(new CvuDirectory.CvuTaken({ cvu: payment.cvu }))
              : Effect.fail(Port.taken("external_id"))
        )
      )
    const update = (payment: P.Payment) => {
      const { id, ...fields } = encodedRow(payment)
      return orDie(execute(sql`UPDATE cobro_payments SET ${sql.update(fields)} WHERE id = ${id}`))
    }
    /**
     * One statement for all: the rows' new values as a table (`WITH v AS (VALUES …)`) joined
     * to the payments by id (`UPDATE … FROM`, on both dialects). The integer columns are cast
     * from the values' type (Postgres types an untyped parameter of `VALUES` as text). The
     * last occurrence of a payment listed twice is the one sent.
     */
    const updateAll = (payments: ReadonlyArray<P.Payment>) => {
      if (payments.length <= 1) return payments.length === 0 ? Effect.void : update(payments[0]!)
      const last = new Map(payments.map((p) => [p.id as string, p]))
      const values = [...last.values()].map((p) => {
        const r = encodedRow(p)
        return sql`(${r.id}, ${r.user_id}, ${r.external_id}, ${r.cvu}, ${r.team_id}, ${r.created_ms}, ${r.expires_ms}, ${r.cvu_released}, ${r.doc})`
      })
      return orDie(
        execute(sql`WITH v (id, user_id, external_id, cvu, team_id, created_ms, expires_ms, cvu_released, doc)
          AS (VALUES ${sql.csv(values)})
          UPDATE cobro_payments SET user_id = v.user_id, external_id = v.external_id, cvu = v.cvu,
            team_id = v.team_id, created_ms = CAST(v.created_ms AS BIGINT),
            expires_ms = CAST(v.expires_ms AS BIGINT), cvu_released = CAST(v.cvu_released AS SMALLINT),
            doc = v.doc
          FROM v WHERE cobro_payments.id = v.id`)
      )
    }
    const heldCvus = findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ cvu: Schema.String }),
      execute: (cvus) => sql`SELECT cvu FROM cobro_cvu_directory WHERE ${sql.in("cvu", cvus)} ORDER BY cvu`
    })

    /**
     * One statement for all: a row whose id, external id or CVU is taken (by a stored payment
     * or by a row before it) is left out (`ON CONFLICT DO NOTHING`, which covers the table's
     * own keys only: the directory's trigger still fails the statement on a CVU held by another
     * owner, and then nothing is stored). The rows stored are those `RETURNING` names; a later
     * row with the id of an earlier one is answered taken without being sent.
     */
    const insertAll = (payments: ReadonlyArray<P.Payment>) =>
      Effect.gen(function* () {
        const firsts = new Map<string, P.Payment>()
        for (const p of payments) if (!firsts.has(p.id)) firsts.set(p.id, p)
        const sent = [...firsts.values()]
        const rows = sent.map(encodedRow)
        const stored = yield* recoverable(sql)(
          execute(sql`INSERT INTO cobro_payments ${sql.insert(rows)} ON CONFLICT DO NOTHING RETURNING id`)
        ).pipe(
          Effect.catchAll((e) =>
            isCvuTaken(e)
              ? Effect.flatMap(heldCvus(sent.map((p) => p.cvu)), (held) => {
                  const taken = sent.find((p) => held.some((h) => h.cvu === p.cvu)) ?? sent[0]!
                  return Effect.die(new CvuDirectory.CvuTaken({ cvu: taken.cvu }))
                })
              : Effect.die(e)
          )
        )
        const inserted = new Set(stored.map((r) => String((r as { readonly id: unknown }).id)))
        return payments.map((p) =>
          firsts.get(p.id) === p && inserted.has(p.id) ? Either.void : Either.left(Port.taken("external_id"))
        )
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
      insert,
      storesTogether: true,
      insertAll: (payments) => (payments.length === 0 ? Effect.succeed([]) : insertAll(payments)),
      update,
      updateAll,
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
