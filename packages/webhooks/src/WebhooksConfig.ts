/**
 * Settings of the delivery worker. The defaults are DESIGN's: a 3-second timeout, retries at
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each counted from the end of the previous failed
 * attempt) with ±10 % jitter, then dead.
 */
import { ConfigError, Context, Duration, Effect, Layer, Option, Random } from "effect"

/** DESIGN's retry schedule: the wait before each retry, after the previous attempt failed. */
export const retrySchedule: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(10)
]

export interface WebhooksSettings {
  /** The wait before each retry; after the last one fails the delivery is dead. */
  readonly retrySchedule: ReadonlyArray<Duration.Duration>
  /**
   * Each wait is multiplied by a uniform random factor in [1 − jitter, 1 + jitter], so receivers
   * that come back are not hit by every retry at once. 0 ≤ jitter < 1.
   */
  readonly jitter: number
  /** Total time an attempt may take up to the response headers (SPEC: 3 seconds). */
  readonly timeout: Duration.Duration
  /** How many due deliveries a worker claims at once. */
  readonly batchSize: number
  /** How many attempts a worker has in flight at once. */
  readonly concurrency: number
  /**
   * How long a claim holds its deliveries. Longer than a batch can take (batchSize / concurrency
   * × timeout, plus storage time); a delivery whose worker died is due again after it.
   */
  readonly lease: Duration.Duration
  /** How often the background worker (`Webhooks.layerWorker`) looks for due deliveries. */
  readonly pollInterval: Duration.Duration
  /** This worker's name in leases and attempts; random when absent. */
  readonly workerId?: string
  readonly userAgent: string
}

export const defaults: WebhooksSettings = {
  retrySchedule,
  jitter: 0.1,
  timeout: Duration.seconds(3),
  batchSize: 50,
  concurrency: 50,
  lease: Duration.minutes(1),
  pollInterval: Duration.seconds(1),
  userAgent: "cobro-webhooks/0.1"
}

export class WebhooksConfig extends Context.Tag("@cobro/webhooks/WebhooksConfig")<
  WebhooksConfig,
  WebhooksSettings
>() {}

const problems = (s: WebhooksSettings): ReadonlyArray<string> => [
  ...(s.jitter >= 0 && s.jitter < 1 ? [] : ["jitter must be in [0, 1)"]),
  ...(Number.isInteger(s.batchSize) && s.batchSize >= 1 ? [] : ["batchSize must be a positive integer"]),
  ...(Number.isInteger(s.concurrency) && s.concurrency >= 1
    ? []
    : ["concurrency must be a positive integer"]),
  ...(s.retrySchedule.every((d) => Duration.isFinite(d)) ? [] : ["retrySchedule must be finite durations"]),
  ...(Duration.greaterThan(s.timeout, Duration.zero) && Duration.isFinite(s.timeout)
    ? []
    : ["timeout must be a positive finite duration"]),
  ...(Duration.greaterThan(s.lease, s.timeout) ? [] : ["lease must be longer than timeout"]),
  ...(Duration.greaterThan(s.pollInterval, Duration.zero) ? [] : ["pollInterval must be positive"]),
  ...(s.workerId === undefined || s.workerId.length > 0 ? [] : ["workerId must not be empty"])
]

/** The settings over the defaults; contradictory settings fail the layer with a `ConfigError`. */
export const layer = (
  settings: Partial<WebhooksSettings> = {}
): Layer.Layer<WebhooksConfig, ConfigError.ConfigError> =>
  Layer.effect(
    WebhooksConfig,
    Effect.suspend(() => {
      const merged: WebhooksSettings = { ...defaults, ...settings }
      const found = problems(merged)
      return found.length === 0
        ? Effect.succeed(merged)
        : Effect.fail(ConfigError.InvalidData(["webhooks"], found.join("; ")))
    })
  )

/**
 * The wait before the next attempt, after `roundAttempts` attempts of the current round failed;
 * none when the schedule is exhausted (the delivery is dead).
 */
export const nextDelay = (
  settings: Pick<WebhooksSettings, "retrySchedule" | "jitter">,
  roundAttempts: number
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function* () {
    const base = settings.retrySchedule[roundAttempts - 1]
    if (base === undefined || roundAttempts < 1) return Option.none()
    const factor =
      settings.jitter === 0 ? 1 : yield* Random.nextRange(1 - settings.jitter, 1 + settings.jitter)
    return Option.some(Duration.millis(Math.round(Duration.toMillis(base) * factor)))
  })
