/**
 * `TestClockRepository` over `SqlClient`: one row per merchant whose clock was ever moved
 * (`cobro_test_clocks`). Each change is a single upsert that computes the new offset from the
 * stored one and returns it, so concurrent advances from several instances all count (`advance`)
 * or end at the furthest instant asked (`raiseTo`), and none is lost.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Spans } from "@cobro/core"
import { TestClockRepository as Port } from "@cobro/core/ports"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { findAll, findOne, single } from "./internal/sql.js"

/** A stored offset (`offset_ms`, BIGINT: text on Postgres) as a `Duration`. */
const OffsetMs = Schema.transform(
  Schema.Union(Schema.Number, Schema.NumberFromString),
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: Duration.millis,
    encode: Duration.toMillis
  }
)

const Offset = Schema.Struct({ offset_ms: OffsetMs }).pipe(Schema.pluck("offset_ms"))

const Stored = Schema.Struct({
  offset_ms: OffsetMs,
  updated_ms: Schema.Union(Schema.Number, Schema.NumberFromString)
})

const Change = Schema.Struct({ user: Schema.String, ms: Schema.Number, at: Schema.Number })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = findOne({
    Request: Schema.String,
    Result: Stored,
    execute: (user) => sql`SELECT offset_ms, updated_ms FROM cobro_test_clocks WHERE user_id = ${user}`
  })

  const add = single({
    Request: Change,
    Result: Offset,
    execute: ({ user, ms, at }) => sql`INSERT INTO cobro_test_clocks (user_id, offset_ms, updated_ms)
      VALUES (${user}, ${ms}, ${at})
      ON CONFLICT (user_id) DO UPDATE SET offset_ms = cobro_test_clocks.offset_ms + excluded.offset_ms,
        updated_ms = excluded.updated_ms
      RETURNING offset_ms`
  })

  const raise = findOne({
    Request: Change,
    Result: Offset,
    execute: ({ user, ms, at }) => sql`INSERT INTO cobro_test_clocks (user_id, offset_ms, updated_ms)
      VALUES (${user}, ${ms}, ${at})
      ON CONFLICT (user_id) DO UPDATE SET offset_ms = excluded.offset_ms, updated_ms = excluded.updated_ms
        WHERE excluded.offset_ms > cobro_test_clocks.offset_ms
      RETURNING offset_ms`
  })

  const moved = findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ user_id: Ids.UserId, offset_ms: OffsetMs }),
    execute: () => sql`SELECT user_id, offset_ms FROM cobro_test_clocks WHERE offset_ms > 0 ORDER BY user_id`
  })

  return Port.TestClockRepository.of({
    get: (user) =>
      get(user).pipe(
        Effect.map(
          Option.match({
            onNone: () => ({ offset: Duration.zero, movedAt: undefined }),
            onSome: (row) => ({ offset: row.offset_ms, movedAt: Number(row.updated_ms) })
          })
        ),
        Spans.span("TestClockRepository.get")
      ),
    advance: (user, by, at) =>
      Effect.flatMap(Port.positiveMillis(by), (ms) => add({ user, ms, at })).pipe(
        Spans.span("TestClockRepository.advance")
      ),
    raiseTo: (user, offset, at) =>
      Effect.flatMap(Port.positiveMillis(offset), (ms) =>
        // Not raised (a clock already further): the row is left alone and the stored offset read.
        Effect.flatMap(raise({ user, ms, at }), (raised) =>
          Option.isSome(raised)
            ? Effect.succeed(raised.value)
            : Effect.map(get(user), (row) =>
                Option.match(row, { onNone: () => Duration.zero, onSome: (r) => r.offset_ms })
              )
        )
      ).pipe(Spans.span("TestClockRepository.raiseTo")),
    moved: moved(undefined).pipe(
      Effect.map((rows) => rows.map((row) => ({ user_id: row.user_id, offset: row.offset_ms }))),
      Spans.span("TestClockRepository.moved")
    )
  })
})

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.TestClockRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.TestClockRepository,
  make
)
