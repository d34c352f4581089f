/**
 * Success bodies. Most routes answer `{message, error: false, code: 200, data}`; partner and
 * account routes answer `{status: "success", error: false, data}` (SPEC's two envelopes).
 */
import { Schema } from "effect"

/** `{message, error: false, code: 200, data}`. */
export const Envelope = <S extends Schema.Schema.Any>(data: S) =>
  Schema.Struct({
    message: Schema.String,
    error: Schema.Literal(false),
    code: Schema.Literal(200),
    data
  })

export interface Envelope<A> {
  readonly message: string
  readonly error: false
  readonly code: 200
  readonly data: A
}

export const ok = <A>(message: string, data: A): Envelope<A> => ({ message, error: false, code: 200, data })

/** `{status: "success", error: false, data}`. */
export const StatusEnvelope = <S extends Schema.Schema.Any>(data: S) =>
  Schema.Struct({
    status: Schema.Literal("success"),
    error: Schema.Literal(false),
    data
  })

export interface StatusEnvelope<A> {
  readonly status: "success"
  readonly error: false
  readonly data: A
}

export const success = <A>(data: A): StatusEnvelope<A> => ({ status: "success", error: false, data })
