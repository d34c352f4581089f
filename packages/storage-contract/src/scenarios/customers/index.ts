/**
 * Fixed customers and their transactions: the port contract (uniqueness keys and their
 * `Conflict` keys, reads by CVU and alias after changes, keyset pages, transactions) and the
 * engine flows over it (creation under an alias prefix, concurrent credits, alias changes).
 */
import type { Scenario } from "../../Scenario.js"
import { customerFlowScenarios } from "./flows.js"
import { customerStorageScenarios } from "./storage.js"

export const customerScenarios: ReadonlyArray<Scenario> = [
  ...customerStorageScenarios,
  ...customerFlowScenarios
]
