/**
 * The edge of the API: every request passes here before routing and every failure leaves here as
 * an envelope. Body limits and content types are checked first; afterwards whatever failed (a
 * typed error, a body that does not decode, malformed JSON, an unknown route, a defect) becomes
 * an `ApiError` in the route's envelope. A defect is logged with its cause and answered with a
 * bare 500: no stack trace or internal text reaches the wire.
 */
import {
  HttpApiError,
  HttpIncomingMessage,
  type HttpApp,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option, Predicate } from "effect"
import { ApiError, type Style, toWire } from "../ApiError.js"
import { HttpConfig } from "../HttpConfig.js"

/** Partner and account routes answer with `{status, error, data}`. */
const STATUS_STYLE = [
  /^\/auth\/tokens\/?$/,
  /^\/users\/[^/]+\/account\/?$/,
  /^\/users\/[^/]+\/?$/,
  /^\/transactions\/schedules(\/|$)/
]

export const styleOf = (url: string): Style => {
  const path = url.split("?")[0] ?? url
  return STATUS_STYLE.some((re) => re.test(path)) ? "status" : "envelope"
}

export const errorResponse = (error: ApiError, style: Style): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(toWire(error, style), {
    status: error.status,
    headers: error.retry_after === undefined ? {} : { "retry-after": String(error.retry_after) }
  })

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i

const decodeError = (error: HttpApiError.HttpApiDecodeError): ApiError => {
  const issue = error.issues[0]
  const field = issue === undefined || issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
  return ApiError.of(400, "request.invalid", issue?.message ?? "the request is invalid", field)
}

/** What a failure of the routed app means for the client. */
export const toApiError = (cause: Cause.Cause<unknown>, maxBodyBytes: number): Option.Option<ApiError> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof ApiError) return Option.some(error)
    if (error instanceof HttpApiError.HttpApiDecodeError) return Option.some(decodeError(error))
    if (error instanceof HttpServerError.RouteNotFound) {
      return Option.some(ApiError.of(404, "route.not.found", "no route matches this method and path"))
    }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect) && defect.value instanceof HttpServerError.RequestError) {
    const error = defect.value
    if (error.reason === "Decode") {
      return Option.some(
        Predicate.hasProperty(error.cause, "_tag") && error.cause._tag === "MaxBytesExceeded"
          ? tooLarge(maxBodyBytes)
          : ApiError.of(400, "request.body.malformed", "the body is not valid JSON", "body")
      )
    }
  }
  if (Cause.isInterruptedOnly(cause)) return Option.none()
  return Option.some(
    ApiError.of(500, "internal.error", "something went wrong on our side; it has been logged")
  )
}

const tooLarge = (max: number) =>
  ApiError.of(413, "request.body.too_large", `the body is larger than ${max} bytes`, "body")

/** Wraps the routed API: limits first, then every failure to its envelope. */
export const boundary = (app: HttpApp.Default): HttpApp.Default<never, HttpConfig> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const config = yield* HttpConfig
    const style = styleOf(request.url)
    if (BODY_METHODS.has(request.method)) {
      const length = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(length) && length > config.maxBodyBytes) {
        return errorResponse(tooLarge(config.maxBodyBytes), style)
      }
      const type = request.headers["content-type"]
      const hasBody = length > 0 || request.headers["transfer-encoding"] !== undefined
      if (type !== undefined && hasBody && !JSON_TYPE.test(type)) {
        return errorResponse(
          ApiError.of(
            415,
            "request.content_type.unsupported",
            "send the body as application/json",
            "content-type"
          ),
          style
        )
      }
    }
    return yield* app.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(config.maxBodyBytes)),
      Effect.catchAllCause((cause) =>
        Option.match(toApiError(cause, config.maxBodyBytes), {
          onNone: () => Effect.failCause(cause),
          onSome: (error) =>
            Effect.as(
              error.status >= 500 ? Effect.logError("request failed", cause) : Effect.void,
              errorResponse(error, style)
            )
        })
      )
    )
  })
