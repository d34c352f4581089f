/**
 * `ClockOffsetRepository` over `SqlClient`: one row (`cobro_sandbox_clock`, id 1). `advance` is a
 * single upsert that adds to the stored value and returns the sum, so concurrent advances from
 * several instances all count and none is lost.
 */
import { SqlClient } from "@effect/sql"
import { ClockOffsetRepository as Port } from "@cobro/core"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { findOne, single } from "./internal/sql.js"

/** The stored offset (`offset_ms`, BIGINT: text on Postgres) as a `Duration`. */
const Offset = Schema.Struct({
  offset_ms: Schema.transform(Schema.Union(Schema.Number, Schema.NumberFromString), Schema.DurationFromSelf, {
    strict: true,
    decode: Duration.millis,
    encode: Duration.toMillis
  })
}).pipe(Schema.pluck("offset_ms"))

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = findOne({
    Request: Schema.Void,
    Result: Offset,
    execute: () => sql`SELECT offset_ms FROM cobro_sandbox_clock WHERE id = 1`
  })(undefined).pipe(
    Effect.map(Option.getOrElse(() => Duration.zero)),
    Effect.withSpan("ClockOffsetRepository.get")
  )

  const add = single({
    Request: Schema.Number,
    Result: Offset,
    execute: (ms) => sql`INSERT INTO cobro_sandbox_clock (id, offset_ms) VALUES (1, ${ms})
      ON CONFLICT (id) DO UPDATE SET offset_ms = cobro_sandbox_clock.offset_ms + excluded.offset_ms
      RETURNING offset_ms`
  })
  const advance = (by: Duration.Duration) =>
    Effect.flatMap(Port.advanceMillis(by), add).pipe(Effect.withSpan("ClockOffsetRepository.advance"))

  return { get, advance } satisfies Port.ClockOffsetRepository["Type"]
})

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.ClockOffsetRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.ClockOffsetRepository,
  make
)
