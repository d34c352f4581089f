/**
 * Split payments: the `SplitRepository` contract (uniqueness and its Conflict keys, due splits,
 * payouts in instruction order, payout accounts oldest first, verification requests) and the
 * engine flows over it (create → fund → verified payout accounts → instruct → execution after
 * the 12-hour hold by concurrent job runs).
 */
import type { Scenario } from "../../Scenario.js"
import { splitFlowScenarios } from "./flows.js"
import { splitStorageScenarios } from "./storage.js"

export { HOLD, read, instructedSplit } from "./helpers.js"

export const splitScenarios: ReadonlyArray<Scenario> = [...splitStorageScenarios, ...splitFlowScenarios]
