/**
 * Runs every scenario on one backend, each over fresh storage.
 */
import { describe, it } from "@effect/vitest"
import { Engine } from "@cobro/core"
import { Effect } from "effect"
import type { Backend } from "./backends.js"
import { scenarios } from "./scenarios/index.js"

export const runContract = (backend: Backend, options: { readonly skip?: boolean } = {}) =>
  describe.skipIf(options.skip === true)(`storage contract on ${backend.name}`, () => {
    for (const scenario of scenarios) {
      it.effect(
        scenario.name,
        () => Effect.provide(scenario.run, Engine.layerSandbox(backend.storage())),
        60_000
      )
    }
  })
