import type { Layer } from "effect"
import type { Effect } from "effect"
import { SandboxEngine } from "@cobro/bank-sandbox"

/** Everything a scenario may use: every engine service and port over the backend's storage. */
export type EngineContext = Layer.Layer.Success<ReturnType<typeof SandboxEngine.layerSandbox>>

export interface Scenario {
  readonly name: string
  readonly run: Effect.Effect<void, unknown, EngineContext>
}
