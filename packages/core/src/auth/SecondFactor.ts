/**
 * The two-factor port that guards payout accounts. The port owns the code from end to end: it
 * generates it, delivers it to the merchant (SMS, e-mail, authenticator…) and checks it, so no
 * code or hash of one ever reaches our storage and core needs no cryptography. Counting attempts
 * and the request's expiry are the `Splits` service's, stored on the verification request.
 *
 * The sandbox implementation derives a deterministic 6-digit code from the request id and lets
 * the sandbox show it (`SandboxSecondFactor.codeFor`), so tests and demos can complete the flow.
 * Production's is the merchant's enrolled factor (`SecondFactors.port`: TOTP or e-mail codes).
 */
import { Context, Effect, HashMap, Layer, Option, Ref, Schema } from "effect"
import type { UserId, VerificationRequestId } from "../Ids.js"

/** The provider could not deliver or check a code. */
export class SecondFactorError extends Schema.TaggedError<SecondFactorError>()("SecondFactorError", {
  message: Schema.String
}) {}

/**
 * The merchant's second factor refuses to deliver or check a code now, `key` saying why: none is
 * enrolled (`second_factor.not_enrolled`), or it is locked after too many wrong codes
 * (`second_factor.locked`). A conflict with the merchant's state, not a provider failure.
 */
export class SecondFactorRefused extends Schema.TaggedError<SecondFactorRefused>()("SecondFactorRefused", {
  key: Schema.String,
  message: Schema.String
}) {}

export class SecondFactor extends Context.Tag("@cobro/core/SecondFactor")<
  SecondFactor,
  {
    /** Generates the code of `request_id` and delivers it to the user. */
    readonly deliver: (input: {
      readonly request_id: VerificationRequestId
      readonly user_id: UserId
    }) => Effect.Effect<void, SecondFactorError | SecondFactorRefused>
    /**
     * Whether `code` is the code of `request_id` (a request of `user_id`). The request's expiry
     * and attempts are the caller's; a provider may count its own (a merchant's TOTP factor).
     */
    readonly check: (input: {
      readonly request_id: VerificationRequestId
      readonly user_id: UserId
      readonly code: string
    }) => Effect.Effect<boolean, SecondFactorError | SecondFactorRefused>
  }
>() {}

export interface DeliveredCode {
  readonly request_id: VerificationRequestId
  readonly user_id: UserId
  readonly code: string
}

/** What the sandbox shows of the codes it "delivered" (e.g. `cobro sandbox codes`). */
export class SandboxSecondFactor extends Context.Tag("@cobro/core/SandboxSecondFactor")<
  SandboxSecondFactor,
  {
    /** The code delivered for a request; none when no code was delivered for it. */
    readonly codeFor: (request_id: VerificationRequestId) => Effect.Effect<Option.Option<string>>
    /** Every delivered code, oldest first. */
    readonly delivered: Effect.Effect<ReadonlyArray<DeliveredCode>>
  }
>() {}

/**
 * The sandbox's code of a request: FNV-1a (32 bits) of the id, reduced to 6 digits. Anyone can
 * compute it, which is the point in a sandbox and why it is never used in production.
 */
export const sandboxCode = (request_id: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < request_id.length; i++) {
    hash ^= request_id.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return (hash % 1_000_000).toString().padStart(6, "0")
}

interface SandboxState {
  readonly byRequest: HashMap.HashMap<VerificationRequestId, DeliveredCode>
  readonly log: ReadonlyArray<DeliveredCode>
}

/** Both faces of the sandbox provider over one state. */
export const makeSandbox = Effect.gen(function* () {
  const ref = yield* Ref.make<SandboxState>({ byRequest: HashMap.empty(), log: [] })
  const port = SecondFactor.of({
    deliver: ({ request_id, user_id }) =>
      Ref.update(ref, (s) => {
        const delivered: DeliveredCode = { request_id, user_id, code: sandboxCode(request_id) }
        return { byRequest: HashMap.set(s.byRequest, request_id, delivered), log: [...s.log, delivered] }
      }),
    check: ({ code, request_id }) =>
      Effect.map(Ref.get(ref), (s) =>
        Option.exists(HashMap.get(s.byRequest, request_id), (d) => d.code === code)
      )
  })
  const controls = SandboxSecondFactor.of({
    codeFor: (request_id) =>
      Effect.map(Ref.get(ref), (s) => Option.map(HashMap.get(s.byRequest, request_id), (d) => d.code)),
    delivered: Effect.map(Ref.get(ref), (s) => s.log)
  })
  return { port, controls } as const
})

/** The sandbox second factor: `SecondFactor` plus the `SandboxSecondFactor` view of its codes. */
export const layerSandbox: Layer.Layer<SecondFactor | SandboxSecondFactor> = Layer.effectContext(
  Effect.map(makeSandbox, ({ controls, port }) =>
    Context.make(SecondFactor, port).pipe(Context.add(SandboxSecondFactor, controls))
  )
)
