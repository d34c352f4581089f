/**
 * A merchant's own webhook deliveries: list them with each attempt, read one, replay one. What a
 * principal sees is decided here, once, for every route and storage:
 *
 * - a merchant's token sees the deliveries of its account's events that are signed with its own
 *   secret (sent to its own webhook URLs);
 * - a partner token, which acts for one merchant, sees those too, plus the deliveries addressed
 *   to that partner about that merchant (`account.activated`); never another partner's.
 *
 * Anything else is not found, exactly like a delivery that does not exist, so a caller cannot
 * learn which event ids other merchants have.
 */
import { DateTime, Effect, Option } from "effect"
import type { Principal } from "../Principal.js"
import { InvalidInput, NotFound } from "../Errors.js"
import type { EventId } from "../Ids.js"
import type { EventType } from "./OutboxEvent.js"
import {
  type DeliveryAttempt,
  type DeliveryStatus,
  sameSigner,
  type Signer,
  type WebhookDelivery
} from "./WebhookDelivery.js"
import { WebhookDeliveryRepository } from "./WebhookDeliveryRepository.js"
import * as Spans from "../Spans.js"

/** Deliveries in one page at most, and by default (each comes with its attempts). */
export const maxPageSize = 100
export const defaultPageSize = 20

export interface ListOptions {
  readonly status?: DeliveryStatus | undefined
  readonly type?: EventType | undefined
  /** Keyset: the last event id of the previous page (its `next_after`). */
  readonly after?: EventId | undefined
  /** 1–100, default 20. */
  readonly limit?: number | undefined
}

/** A delivery with every attempt made for it, oldest first. */
export interface DeliveryWithAttempts {
  readonly delivery: WebhookDelivery
  readonly attempts: ReadonlyArray<DeliveryAttempt>
}

export interface DeliveryPage {
  readonly deliveries: ReadonlyArray<DeliveryWithAttempts>
  /** The event id to pass as `after` for the next page; none on the last page. */
  readonly next_after: Option.Option<EventId>
}

/** The signers whose deliveries `principal` sees (for its own account only). */
export const signersOf = (principal: Principal): ReadonlyArray<Signer> =>
  principal._tag === "User"
    ? [{ kind: "merchant", user_id: principal.user_id }]
    : [
        { kind: "merchant", user_id: principal.user_id },
        { kind: "partner", partner_id: principal.partner_id }
      ]

export const isVisibleTo = (principal: Principal, delivery: WebhookDelivery): boolean =>
  delivery.user_id === principal.user_id && signersOf(principal).some((s) => sameSigner(s, delivery.signer))

const notFound = (eventId: string) =>
  new NotFound({
    key: "webhook_delivery.not.found",
    message: `no webhook delivery of yours for event ${eventId}`
  })

export class WebhookDeliveries extends Effect.Service<WebhookDeliveries>()("@cobro/core/WebhookDeliveries", {
  effect: Effect.gen(function* () {
    const repo = yield* WebhookDeliveryRepository

    const withAttempts = (delivery: WebhookDelivery) =>
      Effect.map(repo.attemptsOf(delivery.event_id), (attempts) => ({ delivery, attempts }))

    const list = Spans.fn("WebhookDeliveries.list")(function* (principal: Principal, options: ListOptions) {
      const limit = options.limit ?? defaultPageSize
      if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
        return yield* InvalidInput.of("limit", `must be an integer from 1 to ${maxPageSize}`)
      }
      // One more than asked: whether there is a next page, without a second query.
      const rows = yield* repo.list({
        user_id: principal.user_id,
        signers: signersOf(principal),
        limit: limit + 1,
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.type === undefined ? {} : { type: options.type }),
        ...(options.after === undefined ? {} : { after: options.after })
      })
      const page = rows.slice(0, limit)
      const deliveries = yield* Effect.forEach(page, withAttempts, { concurrency: 4 })
      return {
        deliveries,
        next_after: rows.length > limit ? Option.some(page[page.length - 1]!.event_id) : Option.none()
      } satisfies DeliveryPage
    })

    const visible = (principal: Principal, eventId: EventId) =>
      Effect.flatMap(repo.find(eventId), (found) =>
        Option.isSome(found) && isVisibleTo(principal, found.value)
          ? Effect.succeed(found.value)
          : Effect.fail(notFound(eventId))
      )

    const get = Spans.fn("WebhookDeliveries.get")(function* (principal: Principal, eventId: EventId) {
      return yield* withAttempts(yield* visible(principal, eventId))
    })

    /**
     * Sends the event again from the start of the retry schedule, whatever its state, with the
     * same event id (receivers deduplicate on it); the delivery worker makes the attempt.
     */
    const replay = Spans.fn("WebhookDeliveries.replay")(function* (principal: Principal, eventId: EventId) {
      yield* visible(principal, eventId)
      const replayed = yield* repo.replay(eventId, yield* DateTime.now)
      if (Option.isNone(replayed)) return yield* notFound(eventId)
      yield* Effect.logInfo("webhook delivery replayed by its merchant").pipe(
        Effect.annotateLogs({ event_id: eventId, user_id: principal.user_id })
      )
      return yield* withAttempts(replayed.value)
    })

    return { list, get, replay } as const
  })
}) {}
