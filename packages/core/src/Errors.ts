/**
 * The domain's error vocabulary. Each error carries a dotted `key` (the `message` field of the
 * wire envelope, e.g. `payment.not.found`) and a human `message`; `@cobro/http` maps the tag to
 * an HTTP status. A handful of generic tags keeps that mapping small while the keys stay precise.
 */
import { Schema } from "effect"

/** A resource that does not exist, or belongs to another account (never leaked). → 404 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  key: Schema.String,
  message: Schema.String
}) {
  static of(resource: string, id: string): NotFound {
    return new NotFound({ key: `${resource}.not.found`, message: `${resource} ${id} not found` })
  }
}

/** Input that breaks a documented rule; `field` names the offending field. → 400 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  key: Schema.String,
  field: Schema.String,
  message: Schema.String
}) {
  static of(field: string, message: string, key = "request.invalid"): InvalidInput {
    return new InvalidInput({ key, field, message })
  }
}

/** The request conflicts with the resource's current state or with another resource. → 409 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  key: Schema.String,
  message: Schema.String
}) {}

/** A well-formed request that cannot be processed (an `Idempotency-Key` reused with another request). → 422 */
export class Unprocessable extends Schema.TaggedError<Unprocessable>()("Unprocessable", {
  key: Schema.String,
  message: Schema.String
}) {}

/** The caller is known but may not do this. → 403 */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  key: Schema.String,
  message: Schema.String
}) {}

/** Missing, unknown, expired or revoked credentials. → 401 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  key: Schema.String,
  message: Schema.String
}) {}

/** A deprecated or disabled capability (crypto and PIX payment methods). → 503 */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  key: Schema.String,
  message: Schema.String
}) {}

/** An external system (bank provider, exchange rates) failed. → 502 */
export class ProviderFailure extends Schema.TaggedError<ProviderFailure>()("ProviderFailure", {
  key: Schema.String,
  message: Schema.String
}) {}

export type DomainError =
  | NotFound
  | InvalidInput
  | Conflict
  | Unprocessable
  | Forbidden
  | Unauthorized
  | Unavailable
  | ProviderFailure
