/**
 * The delivery state of webhooks: one row per outbox event that has a webhook URL, and the log of
 * every attempt made to deliver it. Delivery itself (signing, HTTP, the retry schedule) is
 * `@cobro/webhooks`'s work; this port only offers row operations that stay correct across several
 * worker instances:
 *
 * - a delivery exists as soon as its event does: storage creates the pending row in the same unit
 *   of work as the outbox append, so a crash can lose neither;
 * - `claimDue` hands each due delivery to one worker at a time, under a lease; a worker that dies
 *   holding a lease loses nothing, the row is due again once the lease has passed;
 * - `complete` is fenced on the lease the worker claimed: a worker whose lease lapsed (and whose
 *   delivery another worker took over) still records its attempt, but cannot overwrite the state.
 */
import { Chunk, Context, DateTime, Effect, HashMap, Layer, Option, Schema } from "effect"
import { EventId, UserId } from "../Ids.js"
import { makeRef, MemoryDb } from "../internal/memoryDb.js"
import { EventType, Outbox, type OutboxEvent } from "./Outbox.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** pending (due at `next_attempt_at`) → delivered | dead; a replay moves either back to pending. */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "dead")
export type DeliveryStatus = typeof DeliveryStatus.Type

export class WebhookDelivery extends Class<WebhookDelivery>("WebhookDelivery")({
  /** The outbox event; also the `webhook-id` header, the same on every attempt. */
  event_id: EventId,
  type: EventType,
  /** The account the event belongs to (whose secret signs it; see `@cobro/webhooks`). */
  user_id: UserId,
  webhook_url: Schema.String,
  /** The exact request body, fixed when the event is written, so every attempt sends the same bytes. */
  body: Schema.String,
  status: DeliveryStatus,
  /** Attempts made, replays included. */
  attempts: Schema.NonNegativeInt,
  /** Attempts made since the delivery was created or last replayed: its place in the retry schedule. */
  round_attempts: Schema.NonNegativeInt,
  replays: Schema.NonNegativeInt,
  /** When the next attempt is due; null exactly when delivered or dead. */
  next_attempt_at: Schema.NullOr(Timestamp),
  /** The worker holding the delivery, and until when; both null when nobody does. */
  lease_owner: Schema.NullOr(Schema.String),
  lease_until: Schema.NullOr(Timestamp),
  last_attempt_at: Schema.NullOr(Timestamp),
  /** The HTTP status of the last attempt; null when it got no response (or none was made). */
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  /** When it became delivered or dead; null while pending. */
  finished_at: Schema.NullOr(Timestamp)
}) {}

export const AttemptOutcome = Schema.Literal("delivered", "failed")
export type AttemptOutcome = typeof AttemptOutcome.Type

/** One try to deliver an event, as it happened. Attempts are facts: they are never changed. */
export class DeliveryAttempt extends Class<DeliveryAttempt>("DeliveryAttempt")({
  attempt_id: Schema.String,
  event_id: EventId,
  /** 1 for the first attempt of the delivery, counting across replays. */
  number: Schema.Int.pipe(Schema.positive()),
  attempted_at: Timestamp,
  /** Wall time from the start of the request to the receiver's answer (or the failure). */
  duration_ms: Schema.NonNegativeInt,
  status_code: Schema.NullOr(Schema.Int),
  /** Why it failed (timeout, refused address, HTTP 500, redirect not followed…); null on success. */
  error: Schema.NullOr(Schema.String),
  outcome: AttemptOutcome,
  /** The worker that made it. */
  worker: Schema.String
}) {}

export interface ListQuery {
  readonly status?: DeliveryStatus
  readonly user_id?: UserId
  /** Keyset: only deliveries whose event id sorts after this one. */
  readonly after?: EventId
  readonly limit: number
}

export class WebhookDeliveryRepository extends Context.Tag("@cobro/core/WebhookDeliveryRepository")<
  WebhookDeliveryRepository,
  {
    /**
     * Leases up to `limit` pending deliveries due at `now` that nobody holds (or whose lease has
     * passed) to `owner` until `leaseUntil`, oldest due first. Two concurrent claims never get the
     * same delivery.
     */
    readonly claimDue: (
      now: DateTime.Utc,
      owner: string,
      leaseUntil: DateTime.Utc,
      limit: number
    ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
    /**
     * Records `attempt` and, if the delivery is still pending under the lease `claimed` holds
     * (same owner and lease end), replaces it with `next`; whether `next` was stored. In one unit
     * of work.
     */
    readonly complete: (
      claimed: WebhookDelivery,
      attempt: DeliveryAttempt,
      next: WebhookDelivery
    ) => Effect.Effect<boolean>
    readonly find: (eventId: EventId) => Effect.Effect<Option.Option<WebhookDelivery>>
    /** Deliveries by event id (which sorts by creation time), filtered; a page of `limit`. */
    readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
    /** Every attempt of the delivery, in the order they were recorded. */
    readonly attemptsOf: (eventId: EventId) => Effect.Effect<ReadonlyArray<DeliveryAttempt>>
    /**
     * Makes the delivery pending and due at `now` with a fresh schedule (`round_attempts` 0),
     * whatever its state, and drops any lease (an attempt in flight can no longer change it).
     * None when there is no such delivery.
     */
    readonly replay: (eventId: EventId, now: DateTime.Utc) => Effect.Effect<Option.Option<WebhookDelivery>>
  }
>() {}

/** The pending delivery of a freshly written event, due at once; none when it has no webhook URL. */
export const pendingFor = (event: OutboxEvent): Option.Option<WebhookDelivery> =>
  event.webhook_url === null
    ? Option.none()
    : Option.some(
        new WebhookDelivery({
          event_id: event.event_id,
          type: event.type,
          user_id: event.user_id,
          webhook_url: event.webhook_url,
          body: JSON.stringify(event.payload),
          status: "pending",
          attempts: 0,
          round_attempts: 0,
          replays: 0,
          next_attempt_at: event.created_at,
          lease_owner: null,
          lease_until: null,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          created_at: event.created_at,
          finished_at: null
        })
      )

/** The lease a claim gave, as a fence: same owner and the same lease end. */
export const holdsLease = (current: WebhookDelivery, claimed: WebhookDelivery): boolean =>
  current.status === "pending" &&
  claimed.lease_owner !== null &&
  claimed.lease_until !== null &&
  current.lease_owner === claimed.lease_owner &&
  current.lease_until !== null &&
  DateTime.toEpochMillis(current.lease_until) === DateTime.toEpochMillis(claimed.lease_until)

/** Whether `delivery` may be claimed at `now`. */
export const isClaimable = (delivery: WebhookDelivery, now: DateTime.Utc): boolean => {
  const at = DateTime.toEpochMillis(now)
  return (
    delivery.status === "pending" &&
    delivery.next_attempt_at !== null &&
    DateTime.toEpochMillis(delivery.next_attempt_at) <= at &&
    (delivery.lease_until === null || DateTime.toEpochMillis(delivery.lease_until) <= at)
  )
}

/** Oldest due first, then by event id (as the SQL adapter orders its claims). */
const byDue = (a: WebhookDelivery, b: WebhookDelivery): number => {
  const due = (d: WebhookDelivery) =>
    d.next_attempt_at === null ? Number.MAX_SAFE_INTEGER : DateTime.toEpochMillis(d.next_attempt_at)
  return due(a) - due(b) || byEventId(a, b)
}

const byEventId = (a: WebhookDelivery, b: WebhookDelivery): number =>
  a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0

interface Tables {
  /** The outbox position up to which events have their delivery rows. */
  readonly enqueued: number
  readonly deliveries: HashMap.HashMap<EventId, WebhookDelivery>
  readonly attempts: HashMap.HashMap<EventId, Chunk.Chunk<DeliveryAttempt>>
}

/** How many outbox events one step of the memory adapter's catch-up reads. */
const CATCH_UP_PAGE = 1000

/**
 * The memory adapter. It keeps its rows beside the memory `Outbox` and, before every operation
 * that reads them, turns the events appended since its last look into pending deliveries. In the
 * memory store that is exactly "created with the event": every operation runs under the store's
 * single lock (inside the caller's unit of work when there is one), the outbox's log only ever
 * grows in commit order, and a rolled-back append disappears from the log before anyone else can
 * read it.
 */
export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const outbox = yield* Outbox
  const tables = yield* makeRef<Tables>({
    enqueued: 0,
    deliveries: HashMap.empty(),
    attempts: HashMap.empty()
  })

  const catchUp: Effect.Effect<void> = Effect.gen(function* () {
    while (true) {
      const { enqueued } = yield* tables.get
      const page = yield* outbox.list(enqueued, CATCH_UP_PAGE)
      const last = page.at(-1)
      if (last === undefined) return
      yield* tables.update((t) => {
        let deliveries = t.deliveries
        for (const { event } of page) {
          const pending = pendingFor(event)
          if (Option.isSome(pending) && !HashMap.has(deliveries, event.event_id)) {
            deliveries = HashMap.set(deliveries, event.event_id, pending.value)
          }
        }
        return { ...t, enqueued: last.position, deliveries }
      })
    }
  })

  /** `effect` over up-to-date tables, as one unit of work. */
  const current = <A>(effect: (t: Tables) => Effect.Effect<A>): Effect.Effect<A> =>
    db.transaction(Effect.zipRight(catchUp, Effect.flatMap(tables.get, effect)))

  return WebhookDeliveryRepository.of({
    claimDue: (now, owner, leaseUntil, limit) =>
      current(() =>
        tables.modify((t) => {
          const claimed = Array.from(HashMap.values(t.deliveries))
            .filter((d) => isClaimable(d, now))
            .sort(byDue)
            .slice(0, Math.max(0, limit))
            // Valid rows with a lease added: not validated again (it costs more than the claim).
            .map((d) => new WebhookDelivery({ ...d, lease_owner: owner, lease_until: leaseUntil }, true))
          let deliveries = t.deliveries
          for (const d of claimed) deliveries = HashMap.set(deliveries, d.event_id, d)
          return [claimed, { ...t, deliveries }] as const
        })
      ),
    // Only claimed rows are completed, and they exist already: no catching up needed.
    complete: (claimed, attempt, next) =>
      db.transaction(
        tables.modify((t) => {
          const attempts = HashMap.set(
            t.attempts,
            attempt.event_id,
            Chunk.append(Option.getOrElse(HashMap.get(t.attempts, attempt.event_id), Chunk.empty), attempt)
          )
          const stored = HashMap.get(t.deliveries, claimed.event_id)
          const fenced = Option.isSome(stored) && holdsLease(stored.value, claimed)
          return [
            fenced,
            {
              ...t,
              attempts,
              deliveries: fenced ? HashMap.set(t.deliveries, next.event_id, next) : t.deliveries
            }
          ] as const
        })
      ),
    find: (eventId) => current((t) => Effect.succeed(HashMap.get(t.deliveries, eventId))),
    list: (query) =>
      current((t) =>
        Effect.succeed(
          Array.from(HashMap.values(t.deliveries))
            .filter(
              (d) =>
                (query.status === undefined || d.status === query.status) &&
                (query.user_id === undefined || d.user_id === query.user_id) &&
                (query.after === undefined || d.event_id > query.after)
            )
            .sort(byEventId)
            .slice(0, Math.max(0, query.limit))
        )
      ),
    attemptsOf: (eventId) =>
      current((t) =>
        Effect.succeed(Chunk.toReadonlyArray(Option.getOrElse(HashMap.get(t.attempts, eventId), Chunk.empty)))
      ),
    replay: (eventId, now) =>
      current(() =>
        tables.modify((t) => {
          const stored = HashMap.get(t.deliveries, eventId)
          if (Option.isNone(stored)) return [Option.none(), t] as const
          const replayed = replayOf(stored.value, now)
          return [
            Option.some(replayed),
            { ...t, deliveries: HashMap.set(t.deliveries, eventId, replayed) }
          ] as const
        })
      )
  })
})

/** What `replay` stores: pending now, a fresh schedule, no lease. */
export const replayOf = (delivery: WebhookDelivery, now: DateTime.Utc): WebhookDelivery =>
  new WebhookDelivery({
    ...delivery,
    status: "pending",
    round_attempts: 0,
    replays: delivery.replays + 1,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    finished_at: null
  })

export const layerMemory: Layer.Layer<WebhookDeliveryRepository, never, MemoryDb | Outbox> = Layer.effect(
  WebhookDeliveryRepository,
  makeMemory
)
