/**
 * The route BIND posts its events to (the reference server mounts it at `path` when
 * `COBRO_BANK=bind`). In order: the source address against the allow-list (403), BIND's client
 * certificate when one is required (403), the optional shared secret (401), the body (400, naming
 * the field), then — a notification being a claim, the bank the truth — the transfer is looked up
 * in BIND's own list by its id (`BindBank.confirmIncoming`) and only BIND's record is ingested
 * (`Transfers.ingest`). A transfer BIND does not list, or lists with another amount or CVU,
 * credits nothing (422, logged). 200 only once the credit (or the bounce of a transfer to a CVU
 * that is not ours) is committed, so BIND retries anything else; a redelivery, a duplicate or a
 * late notification credits once (the transfer log's key, `data.id`). Nothing refused is dropped
 * silently: each refusal is a log line with the raw body (cut to `maxLoggedBody`) and a count of
 * `cobro_bank_notifications` by outcome. Answers never carry a schema's internals.
 *
 * The outgoing-transfer event (`TRANSFER`) is a claim too: the transfer is looked up with
 * "Consultar transferencia" by the event's id (`BindBank.outgoing`), matched to our transfer in
 * flight (by BIND's id, or by the `origin_id` BIND reports), and settled at once through the
 * in-flight job's own status query and settlement (`OutgoingTransfers.settleReported`), exactly
 * once. A transfer BIND does not know settles nothing (422, logged); one no longer in flight (a
 * duplicate, a late event, a return of a transfer in) is acknowledged and changes nothing.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type BankProvider, Metrics, OutgoingTransfers, Spans, Transfers } from "@cobro/core"
import { Cause, Effect, Either, Metric, MetricKey, Option } from "effect"
import { BindBank } from "./BindBank.js"
import type { IngressSettings } from "./BindConfig.js"
import * as AllowList from "./internal/allowList.js"
import { authenticate, parse } from "./BindWebhook.js"
import * as OriginId from "./OriginId.js"

/** Where the reference server mounts the route (the URL to register with BIND). */
export const path = "/bank/bind/notifications"

/** At most this much of a refused body goes into its log line. */
export const maxLoggedBody = 8192

export type Outcome =
  | "credited"
  | "settled"
  | "pending"
  | "duplicate"
  | "returned"
  | "unconfirmed"
  | "ignored"
  | "forbidden"
  | "unauthenticated"
  | "malformed"
  | "failed"

const notifications = MetricKey.counter("cobro_bank_notifications", {
  description: "Notifications from the bank, by what became of them",
  incremental: true
})

const of = (outcome: Outcome) => Metrics.labelled(notifications, { outcome })

/** The counter of each outcome, made once (`Metrics.labelled`); typed, so none is left out. */
const byOutcome: Record<Outcome, Metric.Metric.Counter<number>> = {
  credited: of("credited"),
  settled: of("settled"),
  pending: of("pending"),
  duplicate: of("duplicate"),
  returned: of("returned"),
  unconfirmed: of("unconfirmed"),
  ignored: of("ignored"),
  forbidden: of("forbidden"),
  unauthenticated: of("unauthenticated"),
  malformed: of("malformed"),
  failed: of("failed")
}

const counted = (outcome: Outcome) => Metric.increment(byOutcome[outcome])

const answer = (status: number, outcome: Outcome, message: string, field?: string) =>
  Effect.as(
    counted(outcome),
    HttpServerResponse.unsafeJson({ outcome, message, ...(field === undefined ? {} : { field }) }, { status })
  )

const logged = (body: string) => ({
  body: body.length > maxLoggedBody ? `${body.slice(0, maxLoggedBody)}…` : body
})

/** How the route tells where a request comes from and whether it came with BIND's certificate. */
export interface Peer {
  /** The request's source address (the reference server honours `COBRO_TRUST_PROXY`). */
  readonly address: (request: HttpServerRequest.HttpServerRequest) => string
  /** Whether TLS verified the client's certificate (cobro terminating TLS); false when unknown. */
  readonly certified?: (request: HttpServerRequest.HttpServerRequest) => boolean
}

const defaultPeer: Peer = {
  address: (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
}

/** Whether the client certificate check configured (if any) passes. */
const certificateOk = (
  settings: IngressSettings,
  peer: Peer,
  request: HttpServerRequest.HttpServerRequest
): boolean =>
  Option.match(settings.clientCertificate, {
    onNone: () => true,
    onSome: (check) =>
      check._tag === "Tls"
        ? (peer.certified?.(request) ?? false)
        : request.headers[check.header] === check.value
  })

/** The handler. */
export const handler = (
  settings: IngressSettings,
  peer: Peer = defaultPeer
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | Transfers.Transfers | OutgoingTransfers.OutgoingTransfers | BindBank
> => {
  const allowList = AllowList.make(settings.allow)
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const source = peer.address(request)
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    if (!allowList.allows(source)) {
      yield* Effect.logWarning(
        "bank notification from an address not in COBRO_BIND_WEBHOOK_ALLOW refused"
      ).pipe(Effect.annotateLogs({ source, ...logged(body) }))
      return yield* answer(403, "forbidden", "source address not allowed")
    }
    if (!certificateOk(settings, peer, request)) {
      yield* Effect.logWarning("bank notification without a verified client certificate refused").pipe(
        Effect.annotateLogs({ source, ...logged(body) })
      )
      return yield* answer(403, "forbidden", "a verified client certificate is required")
    }
    const auth = authenticate(settings, request.headers)
    if (Either.isLeft(auth)) {
      yield* Effect.logWarning(`bank notification refused: ${auth.left.message}`).pipe(
        Effect.annotateLogs({ source, ...logged(body) })
      )
      return yield* answer(401, "unauthenticated", auth.left.message)
    }
    const notice = parse(body)
    if (Either.isLeft(notice)) {
      const refused = notice.left
      yield* Effect.logError(`malformed bank notification: ${refused.message}`).pipe(
        Effect.annotateLogs({
          source,
          ...(refused.detail === undefined ? {} : { detail: refused.detail }),
          ...logged(body)
        })
      )
      return yield* answer(400, "malformed", refused.message, refused.field)
    }
    const n = notice.right
    switch (n._tag) {
      case "Ignored":
        yield* Effect.logInfo(`bank event ${n.type} is not one cobro acts on; acknowledged`)
        return yield* answer(200, "ignored", `event ${n.type} acknowledged`)
      case "Outgoing":
        return yield* outgoing(n.id, n.status, body)
      case "Incoming":
        return yield* confirmed(n.transfer, n.redeliveries, body)
    }
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.zipRight(
        Effect.logError("bank notification failed; BIND retries it", Cause.pretty(cause)),
        answer(500, "failed", "the notification could not be recorded; retry")
      )
    ),
    Spans.span("BindIngress.notification")
  )
}

/**
 * Confirms the outgoing event's claim with BIND's status query, then settles our transfer in
 * flight through the in-flight job's own query and settlement.
 */
const outgoing = (id: string, claimed: string, body: string) =>
  Effect.gen(function* () {
    const bind = yield* BindBank
    const transfers = yield* OutgoingTransfers.OutgoingTransfers
    const ids = { bank_transaction_id: id, status: claimed }
    const found = yield* Effect.either(bind.outgoing(id))
    if (Either.isLeft(found)) {
      yield* Effect.logWarning(
        `outgoing transfer event not confirmed: BIND could not be asked (${found.left.message}); BIND retries it`
      ).pipe(Effect.annotateLogs(ids))
      return yield* answer(503, "failed", "the transfer could not be confirmed with the bank; retry")
    }
    if (Option.isNone(found.right)) {
      yield* Effect.logError(
        "outgoing transfer event for a transfer BIND does not know; nothing settled"
      ).pipe(Effect.annotateLogs({ ...ids, ...logged(body) }))
      return yield* answer(422, "unconfirmed", "not confirmed by the bank: BIND has no transfer with this id")
    }
    const record = found.right.value
    const settled = yield* transfers.settleReported(
      (t) =>
        t.bank_transaction_id === record.bank_transaction_id ||
        Option.contains(record.origin_id, OriginId.forReference(t.reference))
    )
    const at = { ...ids, bank_status: record.status }
    if (Option.isNone(settled)) {
      yield* Effect.logInfo(
        "outgoing transfer event for no transfer of ours in flight (settled already, or a return); nothing changed"
      ).pipe(Effect.annotateLogs(at))
      return yield* answer(200, "duplicate", "no transfer in flight: nothing to settle")
    }
    const { reference, step } = settled.value
    yield* Effect.logInfo(`outgoing transfer event checked with BIND: ${step}`).pipe(
      Effect.annotateLogs({ ...at, reference })
    )
    switch (step) {
      case "completed":
      case "failed":
        return yield* answer(200, "settled", `settled ${step}`)
      case "stale":
        return yield* answer(200, "duplicate", "settled already")
      case "pending":
        return yield* answer(200, "pending", "not final at the bank; settled when it is")
      case "unknown":
        return yield* answer(503, "failed", "the transfer's status could not be read from the bank; retry")
    }
  })

/** Confirms the claim with BIND's list, then ingests BIND's record. */
const confirmed = (claim: BankProvider.IncomingTransfer, redeliveries: number, body: string) =>
  Effect.gen(function* () {
    const bind = yield* BindBank
    const ids = { bank_transaction_id: claim.bank_transaction_id, cvu: claim.cvu, redeliveries }
    const confirmation = yield* Effect.either(bind.confirmIncoming(claim))
    if (Either.isLeft(confirmation)) {
      yield* Effect.logWarning(
        `bank notification not confirmed: BIND could not be asked (${confirmation.left.message}); BIND retries it`
      ).pipe(Effect.annotateLogs(ids))
      return yield* answer(503, "failed", "the transfer could not be confirmed with the bank; retry")
    }
    const c = confirmation.right
    if (c._tag !== "Confirmed") {
      const reason = c._tag === "Unknown" ? "BIND lists no transfer in with this id" : c.reason
      yield* Effect.logError(`bank notification not confirmed by BIND, nothing credited: ${reason}`).pipe(
        Effect.annotateLogs({ ...ids, ...logged(body) })
      )
      return yield* answer(422, "unconfirmed", `not confirmed by the bank: ${reason}`)
    }
    return yield* ingest(c.transfer, body)
  })

/** Ingests BIND's record; 200 once committed, 400 when it cannot be booked, 503 (BIND retries) else. */
const ingest = (transfer: BankProvider.IncomingTransfer, body: string) =>
  Effect.flatMap(Transfers.Transfers, (transfers) => transfers.ingest(transfer)).pipe(
    Effect.flatMap((outcome) => {
      const ids = { bank_transaction_id: transfer.bank_transaction_id, cvu: transfer.cvu }
      switch (outcome._tag) {
        case "Credited":
          return Effect.zipRight(
            Effect.logInfo("bank notification credited").pipe(
              Effect.annotateLogs({ ...ids, target: outcome.target, target_id: outcome.target_id })
            ),
            answer(200, "credited", "credited")
          )
        case "Duplicate":
          return answer(200, "duplicate", "already received")
        case "Bounced":
          return Effect.zipRight(
            Effect.logWarning(`bank notification returned to its sender: ${outcome.reason}`).pipe(
              Effect.annotateLogs({ ...ids, ...logged(body) })
            ),
            answer(200, "returned", `returned to the sender: ${outcome.reason}`)
          )
      }
    }),
    Effect.catchAll((error) =>
      Effect.zipRight(
        Effect.logError(`bank notification not recorded: ${error.message}`).pipe(
          Effect.annotateLogs({ bank_transaction_id: transfer.bank_transaction_id, ...logged(body) })
        ),
        error._tag === "ProviderFailure"
          ? answer(503, "failed", "the notification could not be recorded; retry")
          : answer(400, "malformed", `the transfer cannot be booked: ${error.message}`)
      )
    )
  )
