/**
 * Refunds: the repository's contract, and the engine's rules and money over it —
 * each rule refused with its own key and nothing written, the ledger entry with the refund, the
 * transfer out to the sender's account (completed, pending, failed late, timed out) settled
 * once, the payment's status left as it was, and the refund in the merchant's payouts list.
 * A refund returns what the payer sent: the commission stays earned and the
 * merchant's available balance pays, or the refusal names the shortfall.
 */
import type { Scenario } from "../../Scenario.js"
import { refundOutcomeScenarios } from "./outcomes.js"
import { refundStorageScenarios } from "./storage.js"

export { refundReq, senderCbu, senderCuit } from "./helpers.js"

export const refundScenarios: ReadonlyArray<Scenario> = [...refundStorageScenarios, ...refundOutcomeScenarios]
