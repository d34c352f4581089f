/**
 * The domain's error vocabulary: what went wrong, in the engine's terms. Each error carries a
 * dotted `key` naming the precise case (e.g. `payment.not.found`) and a human `message`. A
 * handful of tags says what kind of refusal it is; how a transport answers each kind (an HTTP
 * status, a CLI exit code) is the transport's business (`@cobro/http`'s error schemas).
 */
import { Schema } from "effect"
import * as Money from "./Money.js"

/** A resource that does not exist, or belongs to another account (whose existence is never leaked). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  key: Schema.String,
  message: Schema.String
}) {
  static of(resource: string, id: string): NotFound {
    return new NotFound({ key: `${resource}.not.found`, message: `${resource} ${id} not found` })
  }
}

/** Input that breaks a documented rule; `field` names the offending field. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  key: Schema.String,
  field: Schema.String,
  message: Schema.String
}) {
  static of(field: string, message: string, key = "request.invalid"): InvalidInput {
    return new InvalidInput({ key, field, message })
  }
}

/** What a balance lacks to pay for an operation: what it needs, what is available, what is missing. */
export class Shortfall extends Schema.Class<Shortfall>("Shortfall")({
  needed: Money.Money,
  available: Money.Money,
  missing: Money.Money
}) {
  static of(needed: Money.Money, available: Money.Money): Shortfall {
    return new Shortfall({ needed, available, missing: Money.orThrow(Money.subtract(needed, available)) })
  }
}

/**
 * The operation conflicts with the resource's current state or with another resource.
 * `shortfall`: the balance that cannot pay for it, when that is the conflict.
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  key: Schema.String,
  message: Schema.String,
  shortfall: Schema.optional(Shortfall)
}) {}

/**
 * The request does not match the one it claims to repeat: an `Idempotency-Key` reused with
 * another operation.
 */
export class RequestMismatch extends Schema.TaggedError<RequestMismatch>()("RequestMismatch", {
  key: Schema.String,
  message: Schema.String
}) {}

/** The caller is known but is not permitted to do this. */
export class NotPermitted extends Schema.TaggedError<NotPermitted>()("NotPermitted", {
  key: Schema.String,
  message: Schema.String
}) {}

/** The caller could not be authenticated: missing, unknown, expired or revoked credentials. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  key: Schema.String,
  message: Schema.String
}) {}

/** A capability that was withdrawn (the crypto and PIX payment methods). */
export class Discontinued extends Schema.TaggedError<Discontinued>()("Discontinued", {
  key: Schema.String,
  message: Schema.String
}) {}

/** An external system (bank provider, exchange rates) failed. */
export class ProviderFailure extends Schema.TaggedError<ProviderFailure>()("ProviderFailure", {
  key: Schema.String,
  message: Schema.String
}) {}

export type DomainError =
  | NotFound
  | InvalidInput
  | Conflict
  | RequestMismatch
  | NotPermitted
  | Unauthenticated
  | Discontinued
  | ProviderFailure
