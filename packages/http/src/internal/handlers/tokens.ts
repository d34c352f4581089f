/**
 * The token routes, both rate limited: `userTokens` (a user's API token) and `partnerTokens` (a
 * partner client exchanges an authorization code for a token).
 */
import type * as RateLimiter from "@effect/experimental/RateLimiter"
import { Auth } from "@cobro/core"
import { Effect } from "effect"
import { ok, success } from "../../Envelope.js"
import type { HttpConfig } from "../../HttpConfig.js"
import * as RateLimit from "../rateLimit.js"
import { domain, type GroupLive, group } from "./shared.js"

export const UserTokensLive: GroupLive<"userTokens", Auth.Auth | HttpConfig | RateLimiter.RateLimiter> =
  group("userTokens", (handlers) =>
    Effect.gen(function* () {
      const auth = yield* Auth.Auth
      return handlers.handle("issue", ({ path, payload, request }) =>
        Effect.gen(function* () {
          yield* RateLimit.check(request, "tokens", `user:${path.id}`)
          return ok("token.issued", yield* domain(auth.issueUserToken(path.id, payload)))
        })
      )
    })
  )

export const PartnerTokensLive: GroupLive<"partnerTokens", Auth.Auth | HttpConfig | RateLimiter.RateLimiter> =
  group("partnerTokens", (handlers) =>
    Effect.gen(function* () {
      const auth = yield* Auth.Auth
      return handlers.handle("exchange", ({ payload, request }) =>
        Effect.gen(function* () {
          yield* RateLimit.check(request, "tokens", `client:${payload.client_id}`)
          return success(yield* domain(auth.exchangeCode(payload)))
        })
      )
    })
  )
