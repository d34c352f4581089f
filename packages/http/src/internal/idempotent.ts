/**
 * `Idempotency-Key` on POST routes, as an explicit wrapper: each route that declares the header
 * (`IdempotencyHeaders`) wraps its handler in `idempotent(group, endpoint, handler)`. With a key,
 * the handler runs under core's `Idempotency`, which records its result encoded by the route's
 * reply schema; the HTTP answer of that outcome, the first time and on a replay alike, is 200,
 * JSON, the recorded text byte for byte, and `Idempotent-Replayed: true` on a replay. Without a
 * key, the handler just runs. Failures are not recorded: a retry after an error runs again. A
 * handler that answers through `Idempotency.answering` has its answer recorded in the unit of
 * work that commits its operation (core's `Idempotency.committing`), so it survives a crash
 * right after that commit.
 *
 * The keys are the principal's (scope: its user id) or, on a public route, those of the merchant
 * its body names (`public:<user_id>`); the fingerprint is the payload encoded back with the
 * route's payload schema (`null` without a body).
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Idempotency, type Ids, MerchantClocks } from "@cobro/core"
import { Effect, Option, Schema, SchemaAST as AST } from "effect"
import { CobroApi } from "../Api.js"
import { ApiError, fromDomain } from "../ApiError.js"
import { CurrentPrincipal } from "../Security.js"

/** What `HttpApiBuilder` hands the handler of a route with the `Idempotency-Key` header. */
export interface Input {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly headers: { readonly "idempotency-key"?: string | undefined }
  readonly payload?: unknown
}

/** Whether `endpoint` declares the `Idempotency-Key` header. */
const declaresKey = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) =>
  Option.exists(endpoint.headersSchema, (schema) =>
    AST.getPropertySignatures(schema.ast).some((ps) => ps.name === "idempotency-key")
  )

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0] ?? request.url

/**
 * `handler` of endpoint `name` of group `group` of `CobroApi`, run under its `Idempotency-Key`.
 * Throws when the endpoint does not exist or does not declare the header (a mistake of ours,
 * found when the module loads).
 */
export const idempotent = <I extends Input, A, R>(
  group: string,
  name: string,
  handler: (input: I) => Effect.Effect<A, ApiError, R>
): ((input: I) => Effect.Effect<A, ApiError, R | Idempotency.Idempotency>) => {
  const endpoint = CobroApi.groups[group]?.endpoints[
    name
  ] as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  if (endpoint === undefined || !declaresKey(endpoint)) {
    throw new Error(`${group}.${name} does not declare the Idempotency-Key header`)
  }
  const reply = endpoint.successSchema as Schema.Schema<A>
  const encodePayload = Option.map(endpoint.payloadSchema, (schema) =>
    Schema.encodeSync(schema as Schema.Schema<unknown>)
  )
  return (input) => {
    const key = input.headers["idempotency-key"]
    if (key === undefined) return handler(input)
    return Effect.flatMap(Effect.serviceOption(CurrentPrincipal), (principal) => {
      const owner = Option.match(principal, {
        onNone: () => (input.payload as { readonly user_id: Ids.UserId }).user_id,
        onSome: (p) => p.user_id
      })
      const scope = Option.isSome(principal) ? owner : `public:${owner}`
      const body = Option.match(encodePayload, {
        onNone: () => null,
        onSome: (encode) => encode(input.payload)
      })
      // On the merchant's clock (its sandbox test clock, once moved): the record's times too.
      return MerchantClocks.run(owner)(
        Effect.gen(function* () {
          const idempotency = yield* Idempotency.Idempotency
          const fingerprint = yield* idempotency.fingerprint(
            input.request.method,
            pathOf(input.request),
            body
          )
          const outcome = yield* idempotency
            .run(scope, key, fingerprint, reply, handler(input))
            .pipe(Effect.mapError((e) => (e instanceof ApiError ? e : fromDomain(e))))
          // An `HttpServerResponse` is sent as it is by `HttpApiBuilder` (not encoded again); the
          // handler's type names the reply it stands for.
          return HttpServerResponse.text(outcome.result, {
            status: 200,
            contentType: "application/json",
            headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
          }) as unknown as A
        })
      )
    })
  }
}
