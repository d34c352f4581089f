import type { Scenario } from "../Scenario.js"
import { authScenarios } from "./auth/index.js"
import { clockScenarios } from "./clocks.js"
import { customerScenarios } from "./customers/index.js"
import { cvuDirectoryScenarios } from "./cvuDirectory.js"
import { idempotencyScenarios } from "./idempotency.js"
import { moneyScenarios } from "./money.js"
import { outgoingScenarios } from "./outgoing.js"
import { moneyReadScenarios } from "./moneyReads.js"
import { paymentScenarios } from "./payments.js"
import { paymentsTogetherScenarios } from "./paymentsTogether.js"
import { refundScenarios } from "./refunds/index.js"
import { scheduleScenarios } from "./schedules/index.js"
import { secondFactorScenarios } from "./secondFactors.js"
import { senderScenarios } from "./senders.js"
import { splitScenarios } from "./splits/index.js"
import { transferScenarios } from "./transfers.js"
import { webhookScenarios } from "./webhooks.js"
import { webSessionScenarios } from "./webSessions.js"

/** Every scenario of the contract; each storage area adds its own list here. */
export const scenarios: ReadonlyArray<Scenario> = [
  ...paymentScenarios,
  ...paymentsTogetherScenarios,
  ...transferScenarios,
  ...authScenarios,
  ...customerScenarios,
  ...cvuDirectoryScenarios,
  ...scheduleScenarios,
  ...splitScenarios,
  ...outgoingScenarios,
  ...idempotencyScenarios,
  ...webhookScenarios,
  ...moneyScenarios,
  ...moneyReadScenarios,
  ...refundScenarios,
  ...senderScenarios,
  ...clockScenarios,
  ...secondFactorScenarios,
  ...webSessionScenarios
]
