/**
 * The sandbox's test clocks, as merchants use them: each merchant reads its own clock and moves
 * it forward; moving it runs the merchant's work that became due before answering. Only a
 * sandbox host provides it (the reference server in sandbox mode); elsewhere the routes are
 * unknown.
 *
 * A `{seconds}` advance adds to the clock: two at once both count (two testers each asking
 * for an hour get two hours). A `{to}` advance sets the clock to an instant, so repeating it, or
 * two at once, end at that instant.
 */
import { Context, DateTime, Duration, type Effect, Either, Schema } from "effect"
import { Errors, type Ids, type Jobs, Wire } from "@cobro/core"

/** How far one advance may move a clock. */
export const maxAdvance = Duration.days(400)

/** `maxAdvance` in seconds. */
export const maxAdvanceSeconds = Math.floor(Duration.toSeconds(maxAdvance))

/** `POST /sandbox/clock/advance`: exactly one of `seconds` and `to`. */
export class AdvanceRequest extends Wire.Class<AdvanceRequest>("AdvanceRequest")({
  /** How far to move the clock, 1 s to 400 days. */
  seconds: Schema.optional(
    Schema.Int.pipe(
      Schema.between(1, maxAdvanceSeconds, {
        message: () => `must be a whole number of seconds from 1 to ${maxAdvanceSeconds} (400 days)`
      })
    )
  ),
  /** The instant to move the clock to (ISO 8601): not before the clock's time, at most 400 days ahead. */
  to: Schema.optional(Wire.Timestamp)
}) {}

/** A merchant's clock. */
export interface ClockReading {
  /** The merchant's time. */
  readonly now: DateTime.Utc
  /** How far it runs ahead of real time. */
  readonly offset: Duration.Duration
}

/** What the webhook deliveries made after an advance did. */
export interface DeliveryCounts {
  readonly attempted: number
  readonly delivered: number
  readonly retrying: number
  readonly dead: number
  readonly errors: number
}

/** A clock after an advance, with the work of its merchant that ran because of it. */
export interface AdvanceReport extends ClockReading {
  readonly jobs: Jobs.RunReport
  readonly webhooks: DeliveryCounts
}

export class TestClocks extends Context.Tag("@cobro/bank-sandbox/TestClocks")<
  TestClocks,
  {
    /** The clock of merchant `user` (at real time if it was never moved). */
    readonly read: (user: Ids.UserId) => Effect.Effect<ClockReading>
    /**
     * Moves `user`'s clock as `request` says, then runs that merchant's work that became due
     * (expiries, payout schedules, split holds, then webhook deliveries); fails with
     * `InvalidInput` naming the field when the move goes backwards or past `maxAdvance`.
     */
    readonly advance: (
      user: Ids.UserId,
      request: AdvanceRequest
    ) => Effect.Effect<AdvanceReport, Errors.InvalidInput>
  }
>() {}

/** How an advance changes a stored offset. */
export type Move =
  /** Add `millis` to the offset (`seconds`: concurrent ones add up). */
  | { readonly _tag: "Add"; readonly millis: number }
  /** Raise the offset to `millis` if it is behind (`to`: idempotent). */
  | { readonly _tag: "RaiseTo"; readonly millis: number }
  /** Nothing to move (`to` is the clock's time). */
  | { readonly _tag: "Stay" }

/**
 * What `request` does to a clock `offsetMillis` ahead of real time when real time is
 * `realMillis`; `setMillis` is the instant the clock showed right after its last move (real time
 * when it never moved). A `to` before that instant goes backwards: `InvalidInput` naming `to`. A
 * `to` from that instant to the clock's time is reached already (`Stay`), so that repeating a
 * `to` answers the same clock rather than an error while the clock ticks on. Further than
 * `maxAdvance` past the clock's time, or both fields, or neither: `InvalidInput` too.
 */
export const plan = (
  request: AdvanceRequest,
  clock: { readonly realMillis: number; readonly offsetMillis: number; readonly setMillis: number }
): Either.Either<Move, Errors.InvalidInput> => {
  if (request.seconds !== undefined && request.to !== undefined) {
    return Either.left(Errors.InvalidInput.of("to", "give either seconds or to, not both"))
  }
  if (request.seconds !== undefined) return Either.right({ _tag: "Add", millis: request.seconds * 1000 })
  if (request.to === undefined) {
    return Either.left(
      Errors.InvalidInput.of("seconds", "give seconds (how far to move the clock) or to (an instant)")
    )
  }
  const clockMillis = clock.realMillis + clock.offsetMillis
  const to = DateTime.toEpochMillis(request.to)
  if (to < Math.min(clock.setMillis, clockMillis)) {
    return Either.left(
      Errors.InvalidInput.of(
        "to",
        `must not be before the clock's time (${DateTime.formatIso(DateTime.unsafeMake(clockMillis))}): a test clock only moves forward`
      )
    )
  }
  if (to - clockMillis > Duration.toMillis(maxAdvance)) {
    return Either.left(Errors.InvalidInput.of("to", "must be at most 400 days after the clock's time"))
  }
  return to <= clockMillis
    ? Either.right({ _tag: "Stay" })
    : Either.right({ _tag: "RaiseTo", millis: to - clock.realMillis })
}
