/**
 * The API's boundary: a request the edge (`edge.ts`) sends to the API passes here before routing
 * and every failure leaves here as an envelope. Content types, body limits and JSON nesting are
 * checked first; afterwards whatever failed (a typed error, a body that does not decode,
 * malformed JSON, an unknown route, a defect) becomes an `ApiError` in the route's envelope: this
 * is the one place that answers a path nobody serves (404) or a method a path does not take
 * (405). A defect is logged with its cause and answered with a bare 500: no stack trace or
 * internal text reaches the wire.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, Either, FiberRef, Option, Predicate } from "effect"
import { globalValue } from "effect/GlobalValue"
import { ApiError, type Style, toWire, withRequestId } from "../ApiError.js"
import type { HttpConfig } from "../HttpConfig.js"
import { hasUndeclaredBody, MAX_JSON_DEPTH, nestsDeeperThan, readBounded, withBody } from "./body.js"
import * as Input from "./input.js"
import { methodsAt } from "./routes.js"

/** `error` in `style`, with the request's id (`RequestId.ts`) in its envelope when it has one. */
export const errorResponse = (
  error: ApiError,
  style: Style,
  requestId: Option.Option<string> = Option.none()
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    toWire(Option.isSome(requestId) ? withRequestId(error, requestId.value) : error, style),
    {
      status: error.status,
      headers: {
        ...(error.retry_after === undefined ? {} : { "retry-after": String(error.retry_after) }),
        ...(error.allow === undefined ? {} : { allow: error.allow.join(", ") })
      }
    }
  )

export const refused = (refusal: Input.Refusal) =>
  ApiError.of(400, "request.invalid", refusal.detail, refusal.field)

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i

/** Longest `detail` of a decode error: its message quotes the offending value, whatever its size. */
const MAX_DETAIL = 300

const decodeError = (error: HttpApiError.HttpApiDecodeError): ApiError => {
  const issue = error.issues[0]
  const field = issue === undefined || issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
  const message = issue?.message ?? "the request is invalid"
  const detail = message.length > MAX_DETAIL ? `${message.slice(0, MAX_DETAIL)}…` : message
  return ApiError.of(400, "request.invalid", detail, field)
}

/**
 * Set in a request's fiber once its route's handler has begun its work (`domain` and
 * `asPrincipal` in `handlers/shared.ts`, through which every handler calls the engine): the
 * request has decoded by then. `HttpApiBuilder` reports a reply that does not encode as the same
 * `HttpApiDecodeError` as a request that does not decode; after the handler began, it is the
 * reply's, a fault of ours (500, logged), not a 400 that blames the client.
 */
export const replied: FiberRef.FiberRef<boolean> = globalValue(Symbol.for("@cobro/http/replied"), () =>
  FiberRef.unsafeMake(false)
)

const internalError = () =>
  ApiError.of(500, "internal.error", "something went wrong on our side; it has been logged")

/**
 * The statuses the engine answers on purpose although they are 5xx: SPEC's 503 for a deprecated
 * capability (the crypto and PIX payment methods). The client asked for something the service
 * declines; nothing on our side is broken.
 */
const EXPECTED_5XX: ReadonlySet<number> = new Set([503])

/**
 * How a refused request is logged: a 4xx not at all (the client's mistake, in its answer); a 5xx
 * the engine chose (`EXPECTED_5XX`, failed with that `ApiError`) at WARN with its status and key,
 * without the cause and its stack; any other 5xx, a fault, at ERROR with its cause.
 */
const logFailure = (error: ApiError, cause: Cause.Cause<unknown>): Effect.Effect<void> => {
  if (error.status < 500) return Effect.void
  const chosen = Option.exists(Cause.failureOption(cause), (failure) => failure === error)
  return chosen && EXPECTED_5XX.has(error.status)
    ? Effect.logWarning(`request declined: ${error.detail}`).pipe(
        Effect.annotateLogs({ status: error.status, key: error.key })
      )
    : Effect.logError("request failed", cause)
}

/** What a failure of the routed app means for the client; `afterHandler`: see `replied`. */
export const toApiError = (
  cause: Cause.Cause<unknown>,
  maxBodyBytes: number,
  afterHandler = false
): Option.Option<ApiError> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof ApiError) return Option.some(error)
    if (error instanceof HttpApiError.HttpApiDecodeError)
      return Option.some(afterHandler ? internalError() : decodeError(error))
    if (error instanceof HttpServerError.RouteNotFound) {
      const allow = methodsAt(error.request.url)
      // A path the router did not match although the API takes this method there: not a 405
      // that names the very method refused (the router also refuses parameters it finds too long).
      return Option.some(
        allow.length === 0 || allow.includes(error.request.method)
          ? ApiError.of(404, "route.not.found", "no route has this path")
          : new ApiError({
              status: 405,
              key: "method.not.allowed",
              detail: `${error.request.method} is not a method of this path; it takes ${allow.join(", ")}`,
              allow
            })
      )
    }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect) && defect.value instanceof HttpServerError.RequestError) {
    const error = defect.value
    if (error.reason === "Decode") {
      return Option.some(
        isMaxBytesExceeded(error.cause)
          ? tooLarge(maxBodyBytes)
          : ApiError.of(400, "request.body.malformed", "the body is not valid JSON", "body")
      )
    }
  }
  if (Cause.isInterruptedOnly(cause)) return Option.none()
  return Option.some(internalError())
}

/** The body outgrew `withMaxBodySize` (platform-node reports it as a plain `Error`). */
const isMaxBytesExceeded = (cause: unknown) =>
  (Predicate.hasProperty(cause, "_tag") && cause._tag === "MaxBytesExceeded") ||
  (cause instanceof Error && cause.message === "maxBytes exceeded")

/** The body ended in an error before its end (the client went away, or sent a broken chunk). */
const unreadable = () =>
  ApiError.of(400, "request.body.malformed", "the body could not be read to its end", "body")

export const tooLarge = (max: number) =>
  ApiError.of(413, "request.body.too_large", `the body is larger than ${max} bytes`, "body")

/** How a request's failures are answered: in its route's envelope, with its request id. */
export type Answer = (error: ApiError) => HttpServerResponse.HttpServerResponse

/**
 * `app` with every failure answered (`toApiError`): logged when it is ours, as an envelope; a
 * request the client gave up on (interrupted) is left as it is.
 */
export const answeringFailures =
  (maxBodyBytes: number, answer: Answer) =>
  <R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.flatMap(FiberRef.get(replied), (afterHandler) =>
        Option.match(toApiError(cause, maxBodyBytes, afterHandler), {
          // Only an interruption is left unanswered (`toApiError`).
          onNone: () => Effect.failCause(cause as Cause.Cause<never>),
          onSome: (error) => Effect.as(logFailure(error, cause), answer(error))
        })
      )
    )

/**
 * The API's boundary, for a request the edge (`edge.ts`) sends to the API: its body's checks
 * (JSON only, within the limit, not nested too deep, nothing the store cannot keep), then the
 * routed API, whatever failed as an envelope.
 */
export const apiBoundary =
  (config: HttpConfig["Type"], app: HttpApp.Default) =>
  (
    request: HttpServerRequest.HttpServerRequest,
    answer: Answer
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
    Effect.suspend(() => {
      const answered = answeringFailures(config.maxBodyBytes, answer)
      if (!BODY_METHODS.has(request.method)) return answered(app)
      const length = Number(request.headers["content-length"] ?? "0")
      const type = request.headers["content-type"]
      const hasBody = length > 0 || hasUndeclaredBody(request)
      if (!hasBody) return answered(app)
      if (type !== undefined && !JSON_TYPE.test(type)) {
        return Effect.succeed(
          answer(
            ApiError.of(
              415,
              "request.content_type.unsupported",
              "send the body as application/json",
              "content-type"
            )
          )
        )
      }
      // The edge reads every body itself, within the limit (`readBounded` says why), and the
      // route reads the same text again from `withBody`'s request.
      return Effect.flatMap(Effect.either(readBounded(request, config.maxBodyBytes)), (body) => {
        if (Either.isLeft(body)) return Effect.succeed(answer(unreadable()))
        if (Option.isNone(body.right)) return Effect.succeed(answer(tooLarge(config.maxBodyBytes)))
        const read = withBody(request, body.right.value)
        if (nestsDeeperThan(read.text, MAX_JSON_DEPTH)) {
          return Effect.succeed(
            answer(
              ApiError.of(
                400,
                "request.body.malformed",
                `the body nests deeper than ${MAX_JSON_DEPTH} levels`,
                "body"
              )
            )
          )
        }
        const unstorable = Input.refuseJson(read.text)
        if (Option.isSome(unstorable)) return Effect.succeed(answer(refused(unstorable.value)))
        return answered(Effect.provideService(app, HttpServerRequest.HttpServerRequest, read.request))
      })
    })
