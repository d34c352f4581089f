/**
 * Payout schedules and payouts: the port contract (ids, listings, due schedules, pending payouts,
 * exact amounts) and the engine flows over it (create/patch by a partner, runs through
 * `Jobs.runDue` exactly once under concurrent calls, refused and unknown bank outcomes).
 */
import type { Scenario } from "../../Scenario.js"
import { scheduleFlowScenarios } from "./flows.js"
import { scheduleStorageScenarios } from "./storage.js"

export { p1, asPartner, setup, createReq, fund, balances, toNextRun } from "./helpers.js"

export const scheduleScenarios: ReadonlyArray<Scenario> = [
  ...scheduleStorageScenarios,
  ...scheduleFlowScenarios
]
