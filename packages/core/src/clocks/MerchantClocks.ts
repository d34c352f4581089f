/**
 * The clock each merchant's payment domain runs on. Without a host's say (production, tests on
 * `TestClock`) every merchant runs on the fiber's own `Clock`; the reference server's sandbox
 * provides one where a merchant whose test clock was moved runs ahead of real time by its own
 * offset. The engine asks it in two places: a request of merchant M runs on M's clock (the HTTP
 * handlers, an incoming transfer for M), and `Jobs.runDue` / `Webhooks.deliverDue` pass over
 * the moved merchants' work each on its own clock, and over everyone else's on real time.
 */
import { type Clock, Context, Effect } from "effect"
import type { UserId } from "../Ids.js"
import { only, allBut, type DueScope } from "./DueScope.js"

export interface MerchantClocksShape {
  /** The clock of merchant `user`, if it is not the host's own (a moved sandbox test clock). */
  readonly clockOf: (user: UserId) => Clock.Clock | undefined
  /** The merchants whose clock is not the host's own, at this moment. */
  readonly moved: Effect.Effect<ReadonlyArray<UserId>>
}

/** No merchant has a clock of its own. */
export const none: MerchantClocksShape = { clockOf: () => undefined, moved: Effect.succeed([]) }

export class MerchantClocks extends Context.Reference<MerchantClocks>()("@cobro/core/MerchantClocks", {
  defaultValue: (): MerchantClocksShape => none
}) {}

/** Runs `effect` on the clock of merchant `user` (unchanged when it has none of its own). */
export const onClockOf =
  (clocks: MerchantClocksShape, user: UserId) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const clock = clocks.clockOf(user)
    return clock === undefined ? effect : Effect.withClock(effect, clock)
  }

/** Like `onClockOf`, reading the `MerchantClocks` of the fiber's context. */
export const run =
  (user: UserId) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(MerchantClocks, (clocks) => onClockOf(clocks, user)(effect))

/**
 * A pass over due work split by clock: `pass(allBut(moved))` on the host's clock, then
 * `pass(only(M))` on M's clock for each moved merchant M, one after the other; their count
 * reports added up field by field.
 */
export const passes = <A extends object, E, R>(
  clocks: MerchantClocksShape,
  pass: (scope: DueScope) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(clocks.moved, (moved) =>
    Effect.map(
      Effect.forEach(
        [pass(allBut(moved)), ...moved.map((user) => onClockOf(clocks, user)(pass(only(user))))],
        (e) => e
      ),
      (reports) => reports.reduce((sum, report) => addCounts(sum, report))
    )
  )

/** The field-by-field sum of two count reports of one shape (nested reports too). */
export const addCounts = <A extends object>(a: A, b: A): A => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(a)) {
    const other = (b as Record<string, unknown>)[key]
    out[key] =
      typeof value === "number" && typeof other === "number"
        ? value + other
        : typeof value === "object" && value !== null && typeof other === "object" && other !== null
          ? addCounts(value, other)
          : value
  }
  return out as A
}
