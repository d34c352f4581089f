/**
 * What the route groups' handlers share: mapping domain errors to `ApiError`, the owner check
 * and streamed body of the list routes, the reply schemas of the idempotent routes and
 * `idempotentPost` (with `principalPost`, its authenticated form), the one way a handler runs an
 * `Idempotency-Key` route.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Customer, type Errors, type Idempotency, type Principal, Schedule, Split } from "@cobro/core"
import { Cause, Chunk, Effect, FiberRef, type Layer, Schema, Stream } from "effect"
import * as Api from "../../Api.js"
import { ApiError, fromDomain } from "../../ApiError.js"
import { Envelope, StatusEnvelope } from "../../Envelope.js"
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
 * `HttpApiBuilder.group` of `CobroApi`, with every handler marking its fiber once it succeeds
 * (`replied`): a failure after it is then its reply's encoding, answered 500, not 400.
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
) => HttpApiBuilder.group(Api.CobroApi, name, (handlers) => build(replying(handlers)))

/** `handlers` whose `handle` wraps each handler so that, once it succeeds, it sets `replied`. */
const replying = <H extends object>(handlers: H): H =>
  new Proxy(handlers, {
    get: (target, property, receiver) => {
      if (property !== "handle") return Reflect.get(target, property, receiver)
      const handle = (target as unknown as Handle).handle.bind(target)
      return (
        name: string,
        handler: (request: unknown) => Effect.Effect<unknown, unknown, unknown>,
        options?: unknown
      ) =>
        replying(
          handle(name, (request) => Effect.tap(handler(request), () => FiberRef.set(replied, true)), options)
        )
    }
  })

interface Handle {
  readonly handle: (
    name: string,
    handler: (request: unknown) => Effect.Effect<unknown, unknown, unknown>,
    options?: unknown
  ) => object
}

export const domain = <A, R>(
  effect: Effect.Effect<A, Errors.DomainError, R>
): Effect.Effect<A, ApiError, R> => Effect.mapError(effect, fromDomain)

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0] ?? request.url

/**
 * An envelope whose `data.<field>` is an array written as the stream yields it, so a list of any
 * length is sent in constant memory. Callers check access before, so the stream only fails on a
 * storage defect. The 200 and part of the body are then already sent: the defect is logged and
 * the connection cut (on node, its socket destroyed; on a fetch-style host, the body stream
 * errors), so that no client takes the part for the whole list. Ending the body instead, as the
 * platform does on a failed stream, made a truncated list a complete HTTP response.
 *
 * Each chunk of `items` (a storage page) is encoded and written as one piece of the body, not one
 * piece per item. With a write per item, the items' buffers queued behind the socket lived long
 * enough to leave V8's young generation, and their memory came back only at a full collection:
 * the peak grew with the length of the list (figures in bench/results.md). With a write per page
 * it does not.
 */
export const streamedList = <A, I, E>(
  message: string,
  field: string,
  item: Schema.Schema<A, I>,
  items: Stream.Stream<A, E>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const encode = Schema.encodeSync(item)
    const open = `{"message":${JSON.stringify(message)},"error":false,"code":200,"data":{${JSON.stringify(field)}:[`
    const body = Stream.make(open).pipe(
      Stream.concat(
        items.pipe(
          Stream.orDie,
          Stream.chunks,
          Stream.filter(Chunk.isNonEmpty),
          Stream.mapAccum(true, (first, chunk) => {
            let json = ""
            for (const value of chunk) json += `,${JSON.stringify(encode(value))}`
            return [false, first ? json.slice(1) : json] as const
          })
        )
      ),
      Stream.concat(Stream.make("]}}")),
      Stream.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Effect.zipRight(
              Effect.logError(
                `${request.method} ${pathOf(request)} failed while its list was being sent`,
                cause
              ),
              cut(request)
            )
      ),
      Stream.encodeText
    )
    return HttpServerResponse.stream(body, { contentType: "application/json" })
  })

/** Cuts the connection a request came on, where the host has one (node's socket). */
const cut = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => {
    const source = request.source as { readonly socket?: { readonly destroy?: () => void } } | undefined
    source?.socket?.destroy?.()
  })

export const ownList = (principal: { readonly user_id: string }, user_id: string) =>
  user_id === principal.user_id
    ? Effect.void
    : Effect.fail(ApiError.of(404, "user.not.found", `user ${user_id} not found`))

/** The reply schemas of the idempotent routes, built once (not per request). */
export const replies = {
  paymentCreated: Envelope(Api.PaymentCreated),
  faucetResult: Envelope(Api.FaucetResult),
  customerCreated: Envelope(Customer.CustomerCreated),
  payoutScheduleWireStatus: StatusEnvelope(Schedule.PayoutScheduleWire),
  splitPaymentView: Envelope(Split.SplitPaymentView),
  verificationRequestView: Envelope(Split.VerificationRequestView),
  payoutAccount: Envelope(Split.PayoutAccount)
}

/**
 * Runs an `Idempotency-Key` route (all are POST): the key, method and path come from `incoming`
 * (the handler's `headers` and `request`), the rest from the route. The fingerprint is `payload`
 * encoded back with its request schema (`null` for a route without a body), computed only when
 * the request carries a key.
 */
export const idempotentPost = <A, I, R, P = never, PI = never>(
  incoming: {
    readonly headers: typeof Api.IdempotencyHeaders.Type
    readonly request: HttpServerRequest.HttpServerRequest
  },
  route: {
    /** Whose keys these are: a user id, or `public:<user_id>` on the public route. */
    readonly scope: string
    readonly payload?: { readonly schema: Schema.Schema<P, PI>; readonly value: P }
    /** The reply's schema: one of `replies`. */
    readonly reply: Schema.Schema<A, I>
    readonly run: Effect.Effect<A, ApiError, R>
  }
): Effect.Effect<A | HttpServerResponse.HttpServerResponse, ApiError, R | Idempotency.Idempotency> => {
  const payload = route.payload
  return idempotent({
    scope: route.scope,
    key: incoming.headers["idempotency-key"],
    method: incoming.request.method,
    path: pathOf(incoming.request),
    body: payload === undefined ? () => null : () => Schema.encodeSync(payload.schema)(payload.value),
    schema: route.reply,
    run: route.run
  })
}

/**
 * `idempotentPost` of an authenticated route: the keys are the principal's (scope: its user id),
 * and `route` builds the rest from the principal.
 */
export const principalPost = <A, I, R, P = never, PI = never>(
  incoming: Parameters<typeof idempotentPost>[0],
  route: (
    principal: Principal.Principal
  ) => Omit<Parameters<typeof idempotentPost<A, I, R, P, PI>>[1], "scope">
) =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    idempotentPost(incoming, { scope: principal.user_id, ...route(principal) })
  )
