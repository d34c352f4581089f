/**
 * Storage of merchants' second factors (`SecondFactors`): at most one enrolled (ACTIVE) factor and
 * one enrolment in progress (PENDING) per merchant, and the one-time codes sent by e-mail. A TOTP
 * secret is stored only sealed (`Crypto.encrypt`), a code only as a keyed hash.
 */
import { Context, Effect, HashMap, Layer, Option, Schema } from "effect"
import { UserId } from "../Ids.js"
import { Class } from "../internal/schemaClass.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { Timestamp } from "../Wire.js"

export const FactorKind = Schema.Literal("totp", "email")
export type FactorKind = typeof FactorKind.Type

export const FactorStatus = Schema.Literal("PENDING", "ACTIVE")
export type FactorStatus = typeof FactorStatus.Type

/** A merchant's factor: enrolled (ACTIVE) or being enrolled (PENDING, until `exp_timestamp`). */
export class StoredFactor extends Class<StoredFactor>("StoredFactor")({
  user_id: UserId,
  status: FactorStatus,
  kind: FactorKind,
  /** The TOTP secret, sealed under the server key with the user id as context; null for e-mail. */
  secret_sealed: Schema.NullOr(Schema.String),
  /** The last TOTP time step accepted: a code of it or of an earlier one is never accepted again. */
  last_step: Schema.NullOr(Schema.Int),
  /** Wrong codes in a row. */
  failures: Schema.Int,
  /** Refuses every code until then (real time), after too many wrong ones in a row. */
  locked_until: Schema.NullOr(Timestamp),
  creation_timestamp: Timestamp,
  /** A pending enrolment's end; null once enrolled. */
  exp_timestamp: Schema.NullOr(Timestamp),
  /** When the enrolment was confirmed; null while pending. */
  confirmed_timestamp: Schema.NullOr(Timestamp)
}) {}

/**
 * A code sent by e-mail for `subject` (a verification request's id, or a merchant's enrolment or
 * factor), single use: spent once right (`used_timestamp`) or after too many wrong attempts.
 */
export class OneTimeCode extends Class<OneTimeCode>("OneTimeCode")({
  subject: Schema.String,
  user_id: UserId,
  /** `SecondFactors`' keyed hash of the code; never the code. */
  code_hash: Schema.String,
  attempts: Schema.Int,
  creation_timestamp: Timestamp,
  exp_timestamp: Timestamp,
  used_timestamp: Schema.NullOr(Timestamp)
}) {}

export class SecondFactorRepository extends Context.Tag("@cobro/core/SecondFactorRepository")<
  SecondFactorRepository,
  {
    /** The merchant's factor in `status`, if any, locked for the unit of work when `lock`. */
    readonly findFactor: (
      user: UserId,
      status: FactorStatus,
      lock: boolean
    ) => Effect.Effect<Option.Option<StoredFactor>>
    /** Stores `factor` as the merchant's factor in its status, replacing the one there. */
    readonly putFactor: (factor: StoredFactor) => Effect.Effect<void>
    /** Forgets the merchant's factor in `status` (none: nothing happens). */
    readonly removeFactor: (user: UserId, status: FactorStatus) => Effect.Effect<void>
    /** The code of `subject`, if any, locked for the unit of work when `lock`. */
    readonly findCode: (subject: string, lock: boolean) => Effect.Effect<Option.Option<OneTimeCode>>
    /** Stores `code` as the code of its subject, replacing the one there. */
    readonly putCode: (code: OneTimeCode) => Effect.Effect<void>
  }
>() {}

interface Tables {
  /** By `user_id` and status. */
  readonly factors: HashMap.HashMap<string, StoredFactor>
  readonly codes: HashMap.HashMap<string, OneTimeCode>
}

const factorKey = (user: UserId, status: FactorStatus) => `${status}:${user}`

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({ factors: HashMap.empty(), codes: HashMap.empty() })
  return SecondFactorRepository.of({
    findFactor: (user, status) =>
      Effect.map(tables.get, (t) => HashMap.get(t.factors, factorKey(user, status))),
    putFactor: (factor) =>
      tables.update((t) => ({
        ...t,
        factors: HashMap.set(t.factors, factorKey(factor.user_id, factor.status), factor)
      })),
    removeFactor: (user, status) =>
      tables.update((t) => ({ ...t, factors: HashMap.remove(t.factors, factorKey(user, status)) })),
    findCode: (subject) => Effect.map(tables.get, (t) => HashMap.get(t.codes, subject)),
    putCode: (code) => tables.update((t) => ({ ...t, codes: HashMap.set(t.codes, code.subject, code) }))
  })
})

/** The factors and codes in memory (one process), in the memory store's units of work. */
export const layerMemory: Layer.Layer<SecondFactorRepository, never, MemoryDb> = Layer.effect(
  SecondFactorRepository,
  makeMemory
)
