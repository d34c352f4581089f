/**
 * The delivery worker over the outbox. Each event with a webhook URL has a delivery row (written
 * with the event); `deliverDue` claims the due ones under a lease, POSTs each (signed, 3-second
 * timeout, redirects not followed), records the attempt and schedules the next one with jitter,
 * or marks the delivery delivered (2xx) or dead (schedule exhausted, or at once when the
 * transport refuses the URL itself: `WebhookTransport.isPermanent`). Delivery is at least once:
 * a worker that dies mid-attempt leaves a lease that passes, and another worker (or itself,
 * restarted) sends the event again with the same `webhook-id`.
 *
 * Hosts run `deliverDue` on an interval (`layerWorker` does); tests call it after moving the
 * `TestClock`. The HTTP request is real I/O timed by the transport's own clock; the schedule is
 * `Clock` time.
 */
import {
  type Crypto,
  DueScope,
  Errors,
  type Ids,
  MerchantClocks,
  Metrics,
  RealTime,
  Spans
} from "@cobro/core"
import {
  type CredentialRepository,
  type PartnerRepository,
  WebhookDeliveryRepository as W
} from "@cobro/core/ports"
import {
  Cause,
  type ConfigError,
  DateTime,
  Effect,
  Either,
  Layer,
  Metric,
  MetricKey,
  Option,
  Schedule
} from "effect"
import { newId } from "./internal/ids.js"
import * as SigningSecret from "./internal/signingSecret.js"
import * as Signature from "./Signature.js"
import { nextDelay, WebhooksConfig, type WebhooksSettings, layer as configLayer } from "./WebhooksConfig.js"
import { isPermanent, WebhookTransport } from "./WebhookTransport.js"

/** What the service needs from the host: storage, crypto and a transport. */
export type Requirements =
  | W.WebhookDeliveryRepository
  | CredentialRepository.CredentialRepository
  | PartnerRepository.PartnerRepository
  | Crypto.Crypto
  | WebhookTransport

/** What one `deliverDue` run did. */
export interface DeliveryReport {
  /** Deliveries claimed (one attempt each). */
  readonly attempted: number
  readonly delivered: number
  /** Failed attempts with a retry scheduled. */
  readonly retrying: number
  /** Failed attempts that ended the schedule. */
  readonly dead: number
  /** Attempts whose result was not stored because the lease had passed to another worker or a replay. */
  readonly superseded: number
  /** Attempts that died on an infrastructure fault (logged); retried once their lease passes. */
  readonly errors: number
}

type Outcome = "delivered" | "retrying" | "dead" | "superseded" | "errors"

const attempts = MetricKey.counter("cobro_webhook_deliveries", {
  description:
    "Webhook delivery attempts by outcome: delivered, retrying (failed, retried later), dead (failed, no retry left), " +
    "superseded (replayed meanwhile), errors (infrastructure fault)",
  incremental: true
})

/** `attempts` by outcome, made once (`Metrics.labelled`). */
const deliveries: Record<Outcome, Metric.Metric.Counter<number>> = {
  delivered: Metrics.labelled(attempts, { outcome: "delivered" }),
  retrying: Metrics.labelled(attempts, { outcome: "retrying" }),
  dead: Metrics.labelled(attempts, { outcome: "dead" }),
  superseded: Metrics.labelled(attempts, { outcome: "superseded" }),
  errors: Metrics.labelled(attempts, { outcome: "errors" })
}

/** The most deliveries `list` returns at once. */
export const maxListLimit = 500

export interface ListOptions {
  readonly status?: W.DeliveryStatus
  readonly user_id?: Ids.UserId
  /** Keyset: the last event id of the previous page. */
  readonly after?: Ids.EventId
  /** 1–500, default 100. */
  readonly limit?: number
}

const notFound = (eventId: string) =>
  new Errors.NotFound({
    key: "webhook_delivery.not.found",
    message: `no webhook delivery for event ${eventId} (unknown event, or an event without a webhook URL)`
  })

const errorOf = (status: number, location: string | null): string | null =>
  status >= 200 && status < 300
    ? null
    : status >= 300 && status < 400
      ? `HTTP ${status}: redirect${location === null ? "" : ` to ${location}`} not followed`
      : `HTTP ${status}`

export class Webhooks extends Effect.Service<Webhooks>()("@cobro/webhooks/Webhooks", {
  effect: Effect.gen(function* () {
    const repo = yield* W.WebhookDeliveryRepository
    const transport = yield* WebhookTransport
    const config = yield* WebhooksConfig
    const secrets = yield* SigningSecret.make
    const worker = config.workerId ?? (yield* newId("wkr"))
    // `webhook-timestamp` is real time, also when the engine's clock is shifted (the sandbox clock
    // moved ahead): receivers check it against their own clock to refuse replays.
    const realTime = yield* RealTime.RealTime
    const clocks = yield* MerchantClocks.MerchantClocks

    /** One attempt of a claimed delivery, recorded; what became of it. */
    const attempt = (
      claimed: W.WebhookDelivery,
      secretOf: (d: W.WebhookDelivery) => Effect.Effect<SigningSecret.SigningSecret>
    ) =>
      Effect.gen(function* () {
        const startedAt = yield* DateTime.now
        const signedAt = yield* realTime.now
        const secret = yield* secretOf(claimed)
        const result: {
          readonly status_code: number | null
          readonly error: string | null
          readonly duration_ms: number
          /** The URL itself is refused: no retry can succeed. */
          readonly permanent?: boolean
        } = Either.isLeft(secret)
          ? { status_code: null, error: secret.left, duration_ms: 0 }
          : yield* transport
              .send({
                url: claimed.webhook_url,
                timeout: config.timeout,
                body: claimed.body,
                headers: {
                  "content-type": "application/json",
                  "user-agent": config.userAgent,
                  ...Signature.headers({
                    secret: secret.right,
                    eventId: claimed.event_id,
                    timestamp: Math.floor(DateTime.toEpochMillis(signedAt) / 1000),
                    body: claimed.body
                  })
                }
              })
              .pipe(
                Effect.match({
                  onFailure: (e) => ({
                    status_code: null,
                    error: e.message,
                    duration_ms: e.durationMs,
                    permanent: isPermanent(e.reason)
                  }),
                  onSuccess: (r) => ({
                    status_code: r.status,
                    error: errorOf(r.status, r.location),
                    duration_ms: r.durationMs
                  })
                })
              )
        const finishedAt = yield* DateTime.now
        const ok = result.status_code !== null && result.error === null
        const roundAttempts = claimed.round_attempts + 1
        const delay =
          ok || result.permanent === true ? Option.none() : yield* nextDelay(config, roundAttempts)
        const status: W.DeliveryStatus = ok ? "delivered" : Option.isSome(delay) ? "pending" : "dead"
        // `record` and `next` are built from a stored delivery and values computed to fit their
        // schemas (typed, rounded, non-negative); validating them again would cost more than the
        // rest of the attempt's own work.
        const record = new W.DeliveryAttempt(
          {
            attempt_id: yield* newId("att"),
            event_id: claimed.event_id,
            number: claimed.attempts + 1,
            attempted_at: startedAt,
            duration_ms: Math.max(0, Math.round(result.duration_ms)),
            status_code: result.status_code,
            error: result.error,
            outcome: ok ? "delivered" : "failed",
            worker
          },
          true
        )
        const next = new W.WebhookDelivery(
          {
            ...claimed,
            status,
            attempts: claimed.attempts + 1,
            round_attempts: roundAttempts,
            next_attempt_at: Option.match(delay, {
              onNone: () => null,
              onSome: (d) => DateTime.addDuration(finishedAt, d)
            }),
            lease_owner: null,
            lease_until: null,
            last_attempt_at: startedAt,
            last_status_code: result.status_code,
            last_error: result.error,
            finished_at: status === "pending" ? null : finishedAt
          },
          true
        )
        const stored = yield* repo.complete(claimed, record, next)
        if (!stored) return "superseded" as const
        if (status === "dead") {
          yield* Effect.logWarning(
            result.permanent === true
              ? "webhook delivery is dead: its URL is refused, no retry can reach it"
              : "webhook delivery is dead after its last retry; replay it when fixed"
          ).pipe(
            Effect.annotateLogs({ event_id: claimed.event_id, url: claimed.webhook_url, error: result.error })
          )
        }
        return status === "pending" ? ("retrying" as const) : status
      }).pipe(
        Spans.span("Webhooks.attempt", { attributes: { event_id: claimed.event_id } }),
        // A fault of storage or crypto ends this attempt only; the lease brings it back later.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.as(
                Effect.logError("webhook attempt failed on an infrastructure fault", cause).pipe(
                  Effect.annotateLogs({ event_id: claimed.event_id })
                ),
                "errors" as const
              )
        )
      )

    /** Claims and attempts every delivery of `scope` due now, batch after batch, until none is left. */
    const deliverScope = Spans.fn("Webhooks.deliverScope")(function* (scope: DueScope.DueScope) {
      const counts: Record<Outcome, number> = { delivered: 0, retrying: 0, dead: 0, superseded: 0, errors: 0 }
      let attempted = 0
      const secretOf = secrets()
      while (true) {
        // Due by the merchants' clock; leased on real time, so that a test clock moved ahead
        // while an attempt is in flight does not end its lease (and send it twice).
        const now = yield* DateTime.now
        const leaseNow = yield* realTime.now
        const batch = yield* repo.claimDue(
          now,
          worker,
          DateTime.addDuration(leaseNow, config.lease),
          config.batchSize,
          { scope, leaseNow }
        )
        if (batch.length === 0) break
        attempted += batch.length
        const outcomes = yield* Effect.forEach(batch, (d) => attempt(d, secretOf), {
          concurrency: config.concurrency
        })
        for (const o of outcomes) {
          counts[o]++
          yield* Metric.increment(deliveries[o])
        }
        if (batch.length < config.batchSize) break
      }
      return { attempted, ...counts } satisfies DeliveryReport
    })

    /**
     * Claims and attempts every delivery due now, batch after batch, until none is left; returns
     * the counts. Safe to run concurrently, in this process or in others sharing the storage.
     * Deliveries of a merchant on a clock of its own (a moved sandbox test clock) are due by
     * that clock: they are claimed in a pass of their own, on it.
     */
    const deliverDue = Spans.fn("Webhooks.deliverDue")(function* () {
      return yield* MerchantClocks.passes(clocks, deliverScope)
    })

    /** The deliveries of merchant `user` due by its own clock (a moved sandbox test clock). */
    const deliverDueOf = (user: Ids.UserId) =>
      MerchantClocks.onClockOf(clocks, user)(deliverScope(DueScope.only(user)))

    /**
     * Sends the event again from the start of the schedule, whatever its state (delivered, dead
     * or pending), with the same event id; the next `deliverDue` makes the attempt.
     */
    const replay = Spans.fn("Webhooks.replay")(function* (eventId: Ids.EventId) {
      const replayed = yield* repo.replay(eventId, yield* DateTime.now)
      if (Option.isNone(replayed)) return yield* notFound(eventId)
      yield* Effect.logInfo("webhook delivery replayed").pipe(Effect.annotateLogs({ event_id: eventId }))
      return replayed.value
    })

    const get = Spans.fn("Webhooks.get")(function* (eventId: Ids.EventId) {
      const found = yield* repo.find(eventId)
      if (Option.isNone(found)) return yield* notFound(eventId)
      return found.value
    })

    /** Every attempt made for the event, oldest first (time, status code, duration, error, worker). */
    const attempts = Spans.fn("Webhooks.attempts")(function* (eventId: Ids.EventId) {
      yield* get(eventId)
      return yield* repo.attemptsOf(eventId)
    })

    /** Deliveries by event id (creation order), filtered, a page at a time. */
    const list = Spans.fn("Webhooks.list")(function* (options: ListOptions = {}) {
      const limit = options.limit ?? 100
      if (!Number.isInteger(limit) || limit < 1 || limit > maxListLimit) {
        return yield* Errors.InvalidInput.of("limit", `must be an integer from 1 to ${maxListLimit}`)
      }
      return yield* repo.list({
        limit,
        ...(options.status !== undefined ? { status: options.status } : {}),
        ...(options.user_id !== undefined ? { user_id: options.user_id } : {}),
        ...(options.after !== undefined ? { after: options.after } : {})
      })
    })

    return { deliverDue, deliverDueOf, replay, get, attempts, list, workerId: worker } as const
  })
}) {}

/**
 * The service with its settings (over the defaults). Needs the storage ports
 * (`WebhookDeliveryRepository`, and the credential and partner repositories for the signing
 * secrets), `Crypto` and a `WebhookTransport`.
 */
export const layer = (
  settings: Partial<WebhooksSettings> = {}
): Layer.Layer<Webhooks | WebhooksConfig, ConfigError.ConfigError, Requirements> =>
  Webhooks.Default.pipe(Layer.provideMerge(configLayer(settings)))

/** Runs `deliverDue` every `pollInterval` in the background for as long as the layer lives. */
export const layerWorker: Layer.Layer<never, never, Webhooks | WebhooksConfig> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const config = yield* WebhooksConfig
    yield* webhooks.deliverDue().pipe(
      Effect.catchAllCause((cause) => Effect.logError("webhook worker run failed", cause)),
      Effect.repeat(Schedule.spaced(config.pollInterval)),
      Effect.forkScoped
    )
  })
)
