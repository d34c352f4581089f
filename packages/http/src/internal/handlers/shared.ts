/**
 * What the route groups' handlers share: `group` (`HttpApiBuilder.group` of `CobroApi`); running
 * as the authenticated principal, on its merchant's clock, with domain errors mapped to
 * `ApiError` (`asPrincipal`, `domain`); the explicit `Idempotency-Key` wrapper of the routes that
 * declare it (`idempotent`); the owner check of the list routes (their body: `streamedList.ts`).
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { type Errors, MerchantClocks, type Principal } from "@cobro/core"
import { Effect, FiberRef, type Layer } from "effect"
import * as Api from "../../Api.js"
import { ApiError, fromDomain } from "../../ApiError.js"
import { CurrentPrincipal } from "../../Security.js"
import { replied } from "../boundary.js"

export { idempotent } from "../idempotent.js"

/**
 * The handlers of group `Name` of `CobroApi`, as `HttpApiBuilder.group` builds them, needing `R`
 * (the engine services they call and the group's auth middleware). Each group module writes its
 * layer's type out: what a group needs reads in one line, and the declaration can name
 * `Idempotency`, which an inferred type could not in a module that never imports it (TS2742).
 */
export type GroupLive<Name extends string, R> = Layer.Layer<HttpApiGroup.ApiGroup<"cobro", Name>, never, R>

type Groups = typeof Api.CobroApi extends HttpApi.HttpApi<string, infer G, infer _E, infer _R> ? G : never
type ApiErrors = typeof Api.CobroApi extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never
type ApiContext = typeof Api.CobroApi extends HttpApi.HttpApi<string, infer _G, infer _E, infer R> ? R : never

/** `HttpApiBuilder.group` of `CobroApi`. */
export const group = <const Name extends HttpApiGroup.HttpApiGroup.Name<Groups>, Return>(
  name: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<
      ApiErrors,
      ApiContext,
      HttpApiGroup.HttpApiGroup.WithName<Groups, Name>
    >
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
) => HttpApiBuilder.group(Api.CobroApi, name, build)

/**
 * The handler's work begins: the request decoded (see `replied`, in `boundary.ts`: a decode
 * error after this point is the reply's, a 500).
 */
const handling = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.zipRight(FiberRef.set(replied, true), effect)

/** `effect` with its domain errors mapped to `ApiError`. */
export const domain = <A, R>(
  effect: Effect.Effect<A, Errors.DomainError | ApiError, R>
): Effect.Effect<A, ApiError, R> =>
  handling(Effect.mapError(effect, (e) => (e instanceof ApiError ? e : fromDomain(e))))

/**
 * `f` of the authenticated principal, on its merchant's clock (`MerchantClocks`: its sandbox
 * test clock, once moved), its domain errors mapped to `ApiError`.
 */
export const asPrincipal = <A, R>(
  f: (principal: Principal.Principal) => Effect.Effect<A, Errors.DomainError | ApiError, R>
): Effect.Effect<A, ApiError, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (p) => MerchantClocks.run(p.user_id)(domain(f(p))))

export const ownList = (principal: { readonly user_id: string }, user_id: string) =>
  user_id === principal.user_id
    ? Effect.void
    : Effect.fail(ApiError.of(404, "user.not.found", `user ${user_id} not found`))
