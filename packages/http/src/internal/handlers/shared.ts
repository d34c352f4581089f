/**
 * What the route groups' handlers share: `group`, which builds a group's handlers and runs every
 * route that declares the `Idempotency-Key` header under it; mapping domain errors to `ApiError`
 * (`domain`, `asPrincipal`); the owner check of the list routes (their body: `streamedList.ts`).
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { type Errors, type Ids, MerchantClocks, type Principal } from "@cobro/core"
import { Chunk, Effect, FiberRef, type Layer, Option, Schema, SchemaAST as AST } from "effect"
import * as Api from "../../Api.js"
import { ApiError, fromDomain } from "../../ApiError.js"
import { CurrentPrincipal } from "../../Security.js"
import { replied } from "../boundary.js"
import { idempotent } from "../idempotent.js"

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

/**
 * `HttpApiBuilder.group` of `CobroApi`, each handler `build` registers then run by `run` with its
 * endpoint (the handlers' types stay `HttpApiBuilder`'s).
 */
export const group = <const Name extends HttpApiGroup.HttpApiGroup.Name<Groups>, Return>(
  name: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<
      ApiErrors,
      ApiContext,
      HttpApiGroup.HttpApiGroup.WithName<Groups, Name>
    >
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
) =>
  HttpApiBuilder.group(Api.CobroApi, name, (handlers) => {
    const built = build(handlers)
    return (Effect.isEffect(built)
      ? Effect.map(built, throughRun)
      : throughRun(built)) as unknown as typeof built
  })

type AnyHandlers = HttpApiBuilder.Handlers<unknown, unknown, unknown>

/** `built` (a group's `Handlers`) with each handler passed through `run`. */
const throughRun = (built: unknown): AnyHandlers => {
  const handlers = built as AnyHandlers
  return Object.assign(Object.create(Object.getPrototypeOf(handlers) as object) as AnyHandlers, handlers, {
    handlers: Chunk.map(handlers.handlers, (item) => ({
      ...item,
      handler: run(item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, item.handler as Handler)
    }))
  })
}

/** What `HttpApiBuilder` hands a handler. */
interface Input {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly headers?: { readonly "idempotency-key"?: string | undefined }
  readonly payload?: unknown
}

type Handler = (input: Input) => Effect.Effect<unknown, unknown, unknown>

/** Whether `endpoint` declares the `Idempotency-Key` header. */
const isIdempotent = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) =>
  Option.exists(endpoint.headersSchema, (schema) =>
    AST.getPropertySignatures(schema.ast).some((ps) => ps.name === "idempotency-key")
  )

/**
 * `answer` on the clock of the merchant the request is for (`MerchantClocks`: its sandbox test
 * clock, once moved): the one it authenticated for or, on a public route, the one its body
 * names (`user_id`, as its `Idempotency-Key` scope); unchanged otherwise.
 */
const onMerchantClock =
  (input: Input) =>
  <A, E, R>(answer: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.serviceOption(CurrentPrincipal), (principal) => {
      const named = (input.payload as { readonly user_id?: unknown } | undefined)?.user_id
      return Option.isSome(principal)
        ? MerchantClocks.run(principal.value.user_id)(answer)
        : typeof named === "string"
          ? MerchantClocks.run(named as Ids.UserId)(answer)
          : answer
    })

/**
 * `handler` of `endpoint`, as it runs (on the caller's merchant clock: `onMerchantClock`). A route that declares `Idempotency-Key` runs under it:
 * the keys are the principal's (scope: its user id) or, on a public route, those of the merchant
 * its body names (`public:<user_id>`); the fingerprint is the payload encoded back with the
 * route's payload schema (`null` without a body) and the reply is stored as the route's success
 * schema encodes it. Once the handler succeeded the fiber is marked (`replied`): a failure after
 * it is then its reply's encoding, answered 500, not 400.
 */
const run = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, handler: Handler): Handler => {
  const replying = (input: Input, answer: Effect.Effect<unknown, unknown, unknown>) =>
    onMerchantClock(input)(Effect.tap(answer, () => FiberRef.set(replied, true)))
  if (!isIdempotent(endpoint)) return (input) => replying(input, handler(input))
  return (input) =>
    replying(
      input,
      Effect.flatMap(Effect.serviceOption(CurrentPrincipal), (principal) =>
        idempotent({
          scope: Option.match(principal, {
            onNone: () => `public:${(input.payload as { readonly user_id: string }).user_id}`,
            onSome: (p) => p.user_id
          }),
          key: input.headers?.["idempotency-key"],
          method: input.request.method,
          path: pathOf(input.request),
          body: () =>
            Option.match(endpoint.payloadSchema, {
              onNone: () => null,
              onSome: (schema) => Schema.encodeSync(schema as Schema.Schema<unknown>)(input.payload)
            }),
          schema: endpoint.successSchema as Schema.Schema<unknown>,
          run: handler(input) as Effect.Effect<unknown, ApiError>
        })
      )
    )
}

export const domain = <A, R>(
  effect: Effect.Effect<A, Errors.DomainError, R>
): Effect.Effect<A, ApiError, R> => Effect.mapError(effect, fromDomain)

/** `f` of the authenticated principal, its domain errors mapped to `ApiError`. */
export const asPrincipal = <A, R>(
  f: (principal: Principal.Principal) => Effect.Effect<A, Errors.DomainError, R>
): Effect.Effect<A, ApiError, R | CurrentPrincipal> => Effect.flatMap(CurrentPrincipal, (p) => domain(f(p)))

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0] ?? request.url

export const ownList = (principal: { readonly user_id: string }, user_id: string) =>
  user_id === principal.user_id
    ? Effect.void
    : Effect.fail(ApiError.of(404, "user.not.found", `user ${user_id} not found`))
