/**
 * Credentials, access tokens, partners, consents and authorization codes: the port contract of
 * `CredentialRepository` and `PartnerRepository`, and the engine flows over them (user tokens,
 * partner onboarding, single-use codes).
 */
import type { Scenario } from "../../Scenario.js"
import { authFlowScenarios } from "./flows.js"
import { authStorageScenarios } from "./storage.js"

export const authScenarios: ReadonlyArray<Scenario> = [...authStorageScenarios, ...authFlowScenarios]
