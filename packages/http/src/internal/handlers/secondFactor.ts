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
    /** `use` on the merchant of the path, when the caller is that merchant's user token. */
    const own =
      <A>(
        key: string,
        use: (factors: SecondFactors.SecondFactors, user: Ids.UserId) => Effect.Effect<A, Errors.DomainError>
      ) =>
      ({ path }: { readonly path: { readonly user_id: Ids.UserId } }) =>
        Option.match(service, {
          onNone: () =>
            Effect.fail(ApiError.of(404, "route.not.found", "this server has no second-factor enrolment")),
          onSome: (factors) =>
            asPrincipal((principal) =>
              principal.user_id !== path.user_id
                ? Effect.fail(Errors.NotFound.of("user", path.user_id))
                : principal._tag !== "User"
                  ? Effect.fail(
                      new Errors.NotPermitted({
                        key: "second_factor.user_token.required",
                        message:
                          "a merchant's second factor is managed with its own user token, not a partner's"
                      })
                    )
                  : Effect.map(use(factors, principal.user_id), (v) => ok(key, v))
            )
        })
    return handlers
      .handle(
        "state",
        own("second_factor.found", (f, u) => f.state(u))
      )
      .handle("enrolTotp", (input) =>
        own("second_factor.enrolment.started", (f, u) => f.enrolTotp(u, input.payload))(input)
      )
      .handle("enrolEmail", (input) =>
        own("second_factor.enrolment.started", (f, u) => f.enrolEmail(u, input.payload))(input)
      )
      .handle("confirm", (input) =>
        own("second_factor.enrolled", (f, u) => f.confirm(u, input.payload))(input)
      )
      .handle(
        "sendCode",
        own("second_factor.code.sent", (f, u) => f.sendFactorCode(u))
      )
      .handle("remove", (input) => own("second_factor.removed", (f, u) => f.remove(u, input.payload))(input))
  })
)
