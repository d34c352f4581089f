/**
 * The one error type of the HTTP API and its two wire forms. Every failure, whatever its source
 * (a domain error, a body that does not decode, an unknown route, a rate limit, a defect), leaves
 * the server as an `ApiError` encoded in the route's envelope:
 *
 * - `{message, error: true, code, data}` on most routes (`message` is the dotted key);
 * - `{status: "error", error: true, message, data}` on partner and account routes.
 *
 * `data` is `{detail, field?, retry_after?, shortfall?}`: a human sentence, the offending field
 * for validation errors, the seconds to wait for a 429, and what a balance lacks when it cannot
 * pay (`refund.balance.insufficient`). `request_id`, beside `data`, is the request's id (its
 * `Request-Id` header, `RequestId.ts`). The catalogue of keys is `docs/errors.md`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Errors, Money } from "@cobro/core"
import { Match, Schema, SchemaAST as AST } from "effect"

/** The statuses a route may answer with (each route's documented errors). */
export const statuses = [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503] as const
/**
 * Those, and the statuses answered at the edge, never by a route: 405 (a path's wrong method),
 * 408 and 431 (a request node's HTTP parser gave up on: too slow, headers too large).
 */
export const Status = Schema.Literal(...statuses, 405, 408, 431)
export type Status = typeof Status.Type

/** What a balance lacks to pay for an operation, in decimal text of `currency`. */
export const ShortfallData = Schema.Struct({
  /** What the operation needs. */
  needed: Schema.String,
  /** What the balance has (money in transit does not count). */
  available: Schema.String,
  /** `needed` less `available`. */
  missing: Schema.String,
  currency: Schema.String
}).annotations({ identifier: "Shortfall", description: "What the available balance lacks to pay for it" })

const shortfallData = (s: Errors.Shortfall): typeof ShortfallData.Type => ({
  needed: Money.format(s.needed),
  available: Money.format(s.available),
  missing: Money.format(s.missing),
  currency: s.needed.currency
})

export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  status: Status,
  /** The dotted key sent as `message`, e.g. `payment.not.found`. */
  key: Schema.String,
  detail: Schema.String,
  field: Schema.optional(Schema.String),
  /** Seconds a client should wait before retrying (429). */
  retry_after: Schema.optional(Schema.Number),
  /** The methods the path has (405), sent as the `Allow` header. */
  allow: Schema.optional(Schema.Array(Schema.String)),
  shortfall: Schema.optional(ShortfallData),
  /** The request's id, set by the edge as it answers (`RequestId.ts`). */
  request_id: Schema.optional(Schema.String)
}) {
  static of(status: Status, key: string, detail: string, field?: string): ApiError {
    return new ApiError(field === undefined ? { status, key, detail } : { status, key, detail, field })
  }
}

/** The status each domain error answers with. */
export const fromDomain: (error: Errors.DomainError) => ApiError = Match.type<Errors.DomainError>().pipe(
  Match.tagsExhaustive({
    InvalidInput: (e) => ApiError.of(400, e.key, e.message, e.field),
    Unauthenticated: (e) => ApiError.of(401, e.key, e.message),
    NotPermitted: (e) => ApiError.of(403, e.key, e.message),
    NotFound: (e) => ApiError.of(404, e.key, e.message),
    Conflict: (e) =>
      e.shortfall === undefined
        ? ApiError.of(409, e.key, e.message)
        : new ApiError({ status: 409, key: e.key, detail: e.message, shortfall: shortfallData(e.shortfall) }),
    RequestMismatch: (e) => ApiError.of(422, e.key, e.message),
    ProviderFailure: (e) => ApiError.of(502, e.key, e.message),
    Discontinued: (e) => ApiError.of(503, e.key, e.message)
  })
)

export const ErrorData = Schema.Struct({
  detail: Schema.String,
  field: Schema.optional(Schema.String),
  retry_after: Schema.optional(Schema.Number),
  shortfall: Schema.optional(ShortfallData)
})

const toData = (e: ApiError): typeof ErrorData.Type => ({
  detail: e.detail,
  ...(e.field === undefined ? {} : { field: e.field }),
  ...(e.retry_after === undefined ? {} : { retry_after: e.retry_after }),
  ...(e.shortfall === undefined ? {} : { shortfall: e.shortfall })
})

const fromData = (
  status: Status,
  key: string,
  data: typeof ErrorData.Type,
  requestId: string | undefined
): ApiError =>
  new ApiError({ status, key, ...data, ...(requestId === undefined ? {} : { request_id: requestId }) })

const requestIdOf = (e: ApiError) => (e.request_id === undefined ? {} : { request_id: e.request_id })

/** `error` as the answer to the request `requestId`. */
export const withRequestId = (error: ApiError, requestId: string): ApiError =>
  new ApiError({
    status: error.status,
    key: error.key,
    detail: error.detail,
    ...(error.field === undefined ? {} : { field: error.field }),
    ...(error.retry_after === undefined ? {} : { retry_after: error.retry_after }),
    ...(error.allow === undefined ? {} : { allow: error.allow }),
    ...(error.shortfall === undefined ? {} : { shortfall: error.shortfall }),
    request_id: requestId
  })

/**
 * What each status means, for the OpenAPI document. Each status gets its own named schema
 * (`Error401`, `StatusError401`): sharing the class's identifier would collapse them all into one.
 */
const meanings: Record<Status, string> = {
  400: "The request is invalid: a body, path, query or header that does not decode (`data.field` names it), or a rule of the operation",
  401: "Missing, malformed, unknown, revoked or expired token, or invalid credentials or code",
  403: "The caller is known but may not do this (wrong kind of token, inactive account, another partner's schedule)",
  404: "No such resource for this caller (another account's resources are not found), or no such route",
  405: "The path exists, not with this method: the Allow header lists its methods",
  408: "The request did not arrive in time",
  409: "The request conflicts with the resource's state or with another resource",
  413: "The body is larger than the server accepts",
  415: "The body is not JSON",
  422: "An Idempotency-Key reused with another request",
  429: "Too many requests: wait `data.retry_after` seconds (also in the Retry-After header)",
  431: "The request line and headers are larger than the server accepts",
  500: "Unexpected server error (logged; no details are sent)",
  502: "The bank or another provider failed",
  503: "The capability is deprecated or unavailable"
}

/** The request's id, as its `Request-Id` header. */
const RequestIdField = Schema.optional(
  Schema.String.annotations({ description: "The request's id, as in its `Request-Id` header" })
)

/** What both wire styles carry: the key as `message`, the details as `data`, the request's id. */
interface WireError {
  readonly message: string
  readonly data: typeof ErrorData.Type
  readonly request_id?: string | undefined
}

/** The transformation of either wire style with status `status` to and from `ApiError`. */
const wireTransformation = <W extends WireError>(status: Status, constants: Omit<W, keyof WireError>) => ({
  strict: true as const,
  decode: (wire: W) => fromData(status, wire.message, wire.data, wire.request_id),
  // `constants` are the style's literal fields, so this is a whole `W`.
  encode: (e: ApiError) => ({ ...constants, message: e.key, data: toData(e), ...requestIdOf(e) }) as W
})

/** The OpenAPI annotations of the error schema of status `status`, named `identifier`. */
const wireAnnotations = (status: Status, identifier: string): Schema.Annotations.Schema<ApiError> => ({
  ...HttpApiSchema.annotations({ status }),
  identifier,
  description: meanings[status]
})

/** `{message, error: true, code, data, request_id}` with status `status`. */
const makeEnvelopeError = (status: Status) => {
  const wire = Schema.Struct({
    message: Schema.String,
    error: Schema.Literal(true),
    code: Schema.Literal(status),
    data: ErrorData,
    request_id: RequestIdField
  })
  return Schema.transform(
    wire,
    Schema.typeSchema(ApiError),
    wireTransformation<typeof wire.Type>(status, { error: true, code: status })
  ).annotations(wireAnnotations(status, `Error${status}`))
}

/** `{status: "error", error: true, message, data, request_id}` with status `status` (partner and account routes). */
const makeStatusError = (status: Status) => {
  const wire = Schema.Struct({
    status: Schema.Literal("error"),
    error: Schema.Literal(true),
    message: Schema.String,
    data: ErrorData,
    request_id: RequestIdField
  })
  return Schema.transform(
    wire,
    Schema.typeSchema(ApiError),
    wireTransformation<typeof wire.Type>(status, { status: "error", error: true })
  ).annotations(wireAnnotations(status, `StatusError${status}`))
}

export type Style = "envelope" | "status"

const envelopeSchemas = new Map(Status.literals.map((status) => [status, makeEnvelopeError(status)]))
const statusSchemas = new Map(Status.literals.map((status) => [status, makeStatusError(status)]))

/**
 * `{message, error: true, code, data}` with status `status`. One schema per status, built once:
 * the errors a route declares are these very values.
 */
export const envelopeError = (status: Status): ReturnType<typeof makeEnvelopeError> =>
  envelopeSchemas.get(status)!

/** `{status: "error", error: true, message, data}` with status `status` (partner and account routes). */
export const statusError = (status: Status): ReturnType<typeof makeStatusError> => statusSchemas.get(status)!

const statusStyled: ReadonlySet<AST.AST> = new Set([...statusSchemas.values()].map((s) => s.ast))

/**
 * The style of a route's declared errors (their ASTs, as `HttpApi.reflect` gives them; a union
 * when several schemas share a status): `status` when they are this module's status errors.
 */
export const styleOfDeclared = (declared: Iterable<AST.AST>): Style => {
  for (const ast of declared) {
    const members = AST.isUnion(ast) ? ast.types : [ast]
    if (members.some((member) => statusStyled.has(member))) return "status"
  }
  return "envelope"
}

/** The JSON body of `error` in `style`, as its schema encodes it. */
export const toWire = (error: ApiError, style: Style): unknown =>
  style === "status"
    ? Schema.encodeSync(statusError(error.status))(error)
    : Schema.encodeSync(envelopeError(error.status))(error)
