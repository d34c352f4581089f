/**
 * The `secondFactor` routes: a merchant's own factor, with its own user token (another user's id
 * is 404, a partner token 403). `SecondFactors` is read with `Effect.serviceOption`: a host that
 * does not provide it (an embedding without an authenticator and a mailer) answers 404.
 */
import { Errors, type Ids, SecondFactors } from "@cobro/core"
import { Effect, Option } from "effect"
import { ApiError } from "../../ApiError.js"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { asPrincipal, type GroupLive, group } from "./shared.js"

export const SecondFactorLive: GroupLive<"secondFactor", Authentication> = group("secondFactor", (handlers) =>
  Effect.gen(function* () {
    const service = yield* Effect.serviceOption(SecondFactors.SecondFactors)
    /** `use` on the merchant of `user_id`, when the caller is that merchant's user token. */
    const own = <A>(
      user_id: Ids.UserId,
      use: (factors: SecondFactors.SecondFactors, user: Ids.UserId) => Effect.Effect<A, Errors.DomainError>
    ) =>
      Option.match(service, {
        onNone: () =>
          Effect.fail(ApiError.of(404, "route.not.found", "this server has no second-factor enrolment")),
        onSome: (factors) =>
          asPrincipal((principal) =>
            principal.user_id !== user_id
              ? Effect.fail(Errors.NotFound.of("user", user_id))
              : principal._tag !== "User"
                ? Effect.fail(
                    new Errors.NotPermitted({
                      key: "second_factor.user_token.required",
                      message:
                        "a merchant's second factor is managed with its own user token, not a partner's"
                    })
                  )
                : use(factors, user_id)
          )
      })
    return handlers
      .handle("state", ({ path }) =>
        own(path.user_id, (f, u) => Effect.map(f.state(u), (v) => ok("second_factor.found", v)))
      )
      .handle("enrolTotp", ({ path, payload }) =>
        own(path.user_id, (f, u) =>
          Effect.map(f.enrolTotp(u, payload), (v) => ok("second_factor.enrolment.started", v))
        )
      )
      .handle("enrolEmail", ({ path, payload }) =>
        own(path.user_id, (f, u) =>
          Effect.map(f.enrolEmail(u, payload), (v) => ok("second_factor.enrolment.started", v))
        )
      )
      .handle("confirm", ({ path, payload }) =>
        own(path.user_id, (f, u) => Effect.map(f.confirm(u, payload), (v) => ok("second_factor.enrolled", v)))
      )
      .handle("sendCode", ({ path }) =>
        own(path.user_id, (f, u) => Effect.map(f.sendFactorCode(u), (v) => ok("second_factor.code.sent", v)))
      )
      .handle("remove", ({ path, payload }) =>
        own(path.user_id, (f, u) => Effect.map(f.remove(u, payload), (v) => ok("second_factor.removed", v)))
      )
  })
)
