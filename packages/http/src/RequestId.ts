/**
 * Request ids. Every answer carries `Request-Id`: the caller's own `X-Request-Id` when it is a
 * valid id (1 to 128 printable ASCII characters, no space), otherwise a new random one
 * (`req_` and 32 hex digits from WebCrypto's CSPRNG). While the request runs, the id is in
 * `current` and on every log line of its fiber (`request_id`); the error envelope carries it as
 * `request_id`.
 *
 * `middleware` wraps an `HttpApp`. The API's edge (`internal/boundary.ts`) applies it, so a host
 * of `CobroHttp.layer` gets ids with nothing to do; a server that logs around the API (the
 * request log of `@cobro/server`) applies it outside its own middleware too, and the inner one
 * then keeps the id the outer one chose.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, FiberRef, Option } from "effect"
import { globalValue } from "effect/GlobalValue"

/** The answer's header. */
export const header = "request-id"

/** The request's header a caller sets to choose the id. */
export const callerHeader = "x-request-id"

const VALID = /^[\x21-\x7e]{1,128}$/

/** A caller's id is kept when it has 1 to 128 printable ASCII characters and no space. */
export const isValid = (id: string): boolean => VALID.test(id)

/** A new id: `req_` and 16 random bytes in hex. */
export const generate = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  return `req_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`
}

/** The id of the request the fiber serves; none outside a request. */
export const current: FiberRef.FiberRef<Option.Option<string>> = globalValue(
  Symbol.for("@cobro/http/RequestId/current"),
  () => FiberRef.unsafeMake(Option.none<string>())
)

/** The id of `request`: its `X-Request-Id` when valid, else a new one. */
export const of = (request: HttpServerRequest.HttpServerRequest): string => {
  const given = request.headers[callerHeader]
  return given !== undefined && isValid(given) ? given : generate()
}

/**
 * Gives the request an id (unless an outer `middleware` did): in `current`, on every log line as
 * `request_id`, and as the answer's `Request-Id` header, errors included.
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    if (Option.isSome(fiber.getFiberRef(current))) return app
    const id = of(Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest))
    return HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, header, id))
    ).pipe(
      Effect.zipRight(app),
      Effect.locally(current, Option.some(id)),
      Effect.annotateLogs({ request_id: id })
    )
  })
