/**
 * The token routes, both guarded against guessing (`internal/rateLimit.ts`: their wrong secrets are
 * counted): `userTokens` (a user's API token) and `partnerTokens` (a partner client exchanges an
 * authorization code for a token).
 */
import { Auth } from "@cobro/core"
import { Effect } from "effect"
import { ok, success } from "../../Envelope.js"
import { countingWrongSecrets, type PartnerTokenRateLimit, type TokenRateLimit } from "../rateLimit.js"
import { domain, type GroupLive, group } from "./shared.js"

export const UserTokensLive: GroupLive<"userTokens", Auth.Auth | TokenRateLimit> = group(
  "userTokens",
  (handlers) =>
    Effect.gen(function* () {
      const auth = yield* Auth.Auth
      return handlers.handle("issue", ({ path, payload }) =>
        Effect.map(countingWrongSecrets(domain(auth.issueUserToken(path.id, payload))), (token) =>
          ok("token.issued", token)
        )
      )
    })
)

export const PartnerTokensLive: GroupLive<"partnerTokens", Auth.Auth | PartnerTokenRateLimit> = group(
  "partnerTokens",
  (handlers) =>
    Effect.gen(function* () {
      const auth = yield* Auth.Auth
      return handlers.handle("exchange", ({ payload }) =>
        Effect.map(countingWrongSecrets(domain(auth.exchangeCode(payload))), success)
      )
    })
)
