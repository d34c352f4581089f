/**
 * The delivery state of webhooks: one row per outbox event that has a webhook URL, and the log of
 * every attempt made to deliver it. Delivery itself (signing, HTTP, the retry schedule) is
 * `@cobro/webhooks`'s work; this port only offers row operations that stay correct across several
 * worker instances:
 *
 * - a delivery exists as soon as its event does: the outbox append stores the rows
 *   `deliveriesOf` decides in the same unit of work, so a crash can lose neither;
 * - `claimDue` hands each due delivery to one worker at a time, under a lease; a worker that dies
 *   holding a lease loses nothing, the row is due again once the lease has passed;
 * - `complete` is fenced on the lease the worker claimed: a worker whose lease lapsed (and whose
 *   delivery another worker took over) still records its attempt, but cannot overwrite the state.
 */
import { Chunk, Context, type DateTime, Effect, HashMap, Layer, Option } from "effect"
import type { EventId, UserId } from "../Ids.js"
import type { EventType } from "./OutboxEvent.js"
import { MemoryDb } from "../internal/memoryDb.js"
import { webhookTables } from "./memoryTables.js"
import {
  byEventId,
  claimOrder,
  type DeliveryAttempt,
  type DeliveryStatus,
  holdsLease,
  type Signer,
  isClaimable,
  replayOf,
  sameSigner,
  WebhookDelivery
} from "./WebhookDelivery.js"

export {
  AttemptOutcome,
  byEventId,
  claimOrder,
  deliveriesOf,
  DeliveryAttempt,
  DeliveryStatus,
  holdsLease,
  isClaimable,
  pendingFor,
  replayOf,
  sameSigner,
  Signer,
  signerOf,
  WebhookDelivery
} from "./WebhookDelivery.js"
import { type DueScope, everyone, includes } from "../clocks/DueScope.js"

export interface ListQuery {
  readonly status?: DeliveryStatus
  readonly user_id?: UserId
  readonly type?: EventType
  /** Only deliveries signed by one of these (a merchant sees its own, a partner also its own). */
  readonly signers?: ReadonlyArray<Signer>
  /** Keyset: only deliveries whose event id sorts after this one. */
  readonly after?: EventId
  readonly limit: number
}

/** What a claim of due deliveries takes besides its time. */
export interface ClaimOptions {
  /** Only the deliveries of merchants in it (everyone by default). */
  readonly scope?: DueScope
  /**
   * The time leases are compared with (`now` by default). Leases are real time, while due times
   * are the merchant's: a lease must not lapse because a merchant's test clock jumped ahead.
   */
  readonly leaseNow?: DateTime.Utc
}

export class WebhookDeliveryRepository extends Context.Tag("@cobro/core/WebhookDeliveryRepository")<
  WebhookDeliveryRepository,
  {
    /**
     * Leases up to `limit` pending deliveries due at `now` that nobody holds (or whose lease has
     * passed) to `owner` until `leaseUntil`, oldest due first (see `ClaimOptions`). Two concurrent
     * claims never get the same delivery.
     */
    readonly claimDue: (
      now: DateTime.Utc,
      owner: string,
      leaseUntil: DateTime.Utc,
      limit: number,
      options?: ClaimOptions
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

/**
 * The memory adapter, over the store's webhook tables: the memory `Outbox` writes the pending
 * rows there with its events (in the same unit of work), this adapter claims, completes, lists
 * and replays them. Every operation runs under the store's single lock, inside the caller's unit
 * of work when there is one.
 */
export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const tables = yield* webhookTables
  const read = <A>(f: (t: Effect.Effect.Success<typeof tables.get>) => A): Effect.Effect<A> =>
    Effect.map(tables.get, f)

  return WebhookDeliveryRepository.of({
    claimDue: (now, owner, leaseUntil, limit, options = {}) =>
      tables.modify((t) => {
        const scope = options.scope ?? everyone
        const claimed = Array.from(HashMap.values(t.deliveries))
          .filter((d) => isClaimable(d, now, options.leaseNow) && includes(scope, d.user_id))
          .sort(claimOrder)
          .slice(0, Math.max(0, limit))
          // Valid rows with a lease added: not validated again (it costs more than the claim).
          .map((d) => new WebhookDelivery({ ...d, lease_owner: owner, lease_until: leaseUntil }, true))
        let deliveries = t.deliveries
        for (const d of claimed) deliveries = HashMap.set(deliveries, d.event_id, d)
        return [claimed, { ...t, deliveries }] as const
      }),
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
    find: (eventId) => read((t) => HashMap.get(t.deliveries, eventId)),
    list: (query) =>
      read((t) =>
        Array.from(HashMap.values(t.deliveries))
          .filter(
            (d) =>
              (query.status === undefined || d.status === query.status) &&
              (query.user_id === undefined || d.user_id === query.user_id) &&
              (query.type === undefined || d.type === query.type) &&
              (query.signers === undefined || query.signers.some((s) => sameSigner(s, d.signer))) &&
              (query.after === undefined || d.event_id > query.after)
          )
          .sort(byEventId)
          .slice(0, Math.max(0, query.limit))
      ),
    attemptsOf: (eventId) =>
      read((t) => Chunk.toReadonlyArray(Option.getOrElse(HashMap.get(t.attempts, eventId), Chunk.empty))),
    replay: (eventId, now) =>
      tables.modify((t) => {
        const stored = HashMap.get(t.deliveries, eventId)
        if (Option.isNone(stored)) return [Option.none(), t] as const
        const replayed = replayOf(stored.value, now)
        return [
          Option.some(replayed),
          { ...t, deliveries: HashMap.set(t.deliveries, eventId, replayed) }
        ] as const
      })
  })
})

export const layerMemory: Layer.Layer<WebhookDeliveryRepository, never, MemoryDb> = Layer.effect(
  WebhookDeliveryRepository,
  makeMemory
)
