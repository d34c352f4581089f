/**
 * `StorageHealth` over `SqlClient`: one query reads the newest migration applied
 * (`cobro_migrations`, the Migrator's table), which is the ping too. Any failure (the database
 * unreachable, refusing connections, the table missing) is `StorageUnavailable` with the driver's
 * reason, for the host's logs.
 */
import { SqlClient } from "@effect/sql"
import { Spans } from "@cobro/core"
import { StorageHealth as Port } from "@cobro/core/ports"
import { Effect, Layer } from "effect"
import * as Migrations from "./Migrations.js"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const required = yield* Migrations.latest

  const check = sql<{
    readonly applied: unknown
  }>`SELECT max(migration_id) AS applied FROM cobro_migrations`.pipe(
    Effect.map((rows) => ({ applied: Number(rows[0]?.applied ?? 0), required })),
    Effect.mapError(
      (cause) =>
        new Port.StorageUnavailable({ message: `the database did not answer: ${cause.message}`, cause })
    ),
    Spans.span("StorageHealth.check")
  )

  return { check } satisfies Port.StorageHealth["Type"]
})

export const layer: Layer.Layer<Port.StorageHealth, never, SqlClient.SqlClient> = Layer.effect(
  Port.StorageHealth,
  make
)
