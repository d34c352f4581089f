/**
 * Whether the storage answers and holds the schema this code needs: what a readiness probe asks.
 * `check` costs one round trip to the database (it reads the schema version, which is the ping),
 * so it can run on every probe. It is not part of `Engine.Storage`: the engine never asks it, a
 * host that serves a readiness route provides it beside its storage.
 */
import { Context, Effect, Layer, Schema } from "effect"

/** What the storage holds against what this code needs. */
export interface SchemaVersion {
  /** The newest schema version (migration id) applied to the storage; 0 when none is. */
  readonly applied: number
  /** The newest schema version this code knows and needs. */
  readonly required: number
}

/**
 * Current when every migration this code knows is applied. A newer schema (a later version of
 * cobro migrated the database during a rolling upgrade) is current too: migrations only add.
 */
export const isCurrent = (version: SchemaVersion): boolean => version.applied >= version.required

/** The storage did not answer (or answered an error) when asked for its schema version. */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()("StorageUnavailable", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export class StorageHealth extends Context.Tag("@cobro/core/StorageHealth")<
  StorageHealth,
  {
    /** One round trip: the schema version, or `StorageUnavailable` when the storage does not answer. */
    readonly check: Effect.Effect<SchemaVersion, StorageUnavailable>
  }
>() {}

/** The in-memory storage: always there, and its "schema" is the code's own. */
export const layerMemory: Layer.Layer<StorageHealth> = Layer.succeed(
  StorageHealth,
  StorageHealth.of({ check: Effect.succeed({ applied: 0, required: 0 }) })
)
