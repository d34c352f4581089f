/**
 * Runs every scenario on one backend, each over fresh storage.
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Backend } from "./backends.js"
import { scenarios } from "./scenarios/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"

export const runContract = (backend: Backend, options: { readonly skip?: boolean } = {}) =>
  describe.skipIf(options.skip === true)(`storage contract on ${backend.name}`, () => {
    for (const scenario of scenarios) {
      it.effect(
        scenario.name,
        () => Effect.provide(scenario.run, SandboxEngine.layerSandbox(backend.storage())),
        60_000
      )
    }
  })
