/**
 * `ClockOffsetRepository` over `SqlClient`: one row (`cobro_sandbox_clock`, id 1). `advance` is a
 * single upsert that adds to the stored value and returns the sum, so concurrent advances from
 * several instances all count and none is lost.
 */
import { SqlClient } from "@effect/sql"
import { ClockOffsetRepository as Port } from "@cobro/core"
import { Duration, Effect, Layer } from "effect"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = sql<{
    readonly offset_ms: unknown
  }>`SELECT offset_ms FROM cobro_sandbox_clock WHERE id = 1`.pipe(
    Effect.map((rows) => Duration.millis(rows.length === 0 ? 0 : Number(rows[0]!.offset_ms))),
    Effect.orDie,
    Effect.withSpan("ClockOffsetRepository.get")
  )

  const advance = (by: Duration.Duration) =>
    Effect.flatMap(Port.advanceMillis(by), (ms) =>
      sql<{ readonly offset_ms: unknown }>`INSERT INTO cobro_sandbox_clock (id, offset_ms) VALUES (1, ${ms})
        ON CONFLICT (id) DO UPDATE SET offset_ms = cobro_sandbox_clock.offset_ms + excluded.offset_ms
        RETURNING offset_ms`.pipe(
        Effect.map((rows) => Duration.millis(Number(rows[0]!.offset_ms))),
        Effect.orDie
      )
    ).pipe(Effect.withSpan("ClockOffsetRepository.advance"))

  return { get, advance } satisfies Port.ClockOffsetRepository["Type"]
})

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.ClockOffsetRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.ClockOffsetRepository,
  make
)
