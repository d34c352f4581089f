import type { Layer } from "effect"
import type { Engine } from "@cobro/core"
import type { Effect } from "effect"

/** Everything a scenario may use: every engine service and port over the backend's storage. */
export type EngineContext = Layer.Layer.Success<ReturnType<typeof Engine.layerSandbox>>

export interface Scenario {
  readonly name: string
  readonly run: Effect.Effect<void, unknown, EngineContext>
}
