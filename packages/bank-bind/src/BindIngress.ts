/**
 * The route BIND posts "Aviso de transferencia entrante" to (the reference server mounts it at
 * `path` when `COBRO_BANK=bind`). In order: the source address against the allow-list (403), the
 * shared secret (401), the body (400), then `Transfers.ingest`; 200 only once the credit (or the
 * bounce of a transfer to a CVU that is not ours) is committed, so BIND retries anything else, and
 * a retry, a duplicate or a notification older than one already taken credits once (the transfer
 * log's key, `data.id`). Nothing refused is dropped silently: each refusal is a log line with the
 * raw body (cut to `maxLoggedBody`) and a count of `cobro_bank_notifications` by outcome.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type BankProvider, Metrics, Spans, Transfers } from "@cobro/core"
import { Cause, Effect, Either, Metric, MetricKey, Option } from "effect"
import type { IngressSettings } from "./BindConfig.js"
import * as AllowList from "./internal/allowList.js"
import { authenticate, parse } from "./BindWebhook.js"

/** Where the reference server mounts the route (the URL to register with BIND). */
export const path = "/bank/bind/notifications"

/** At most this much of a refused body goes into its log line. */
export const maxLoggedBody = 8192

export type Outcome =
  "credited" | "duplicate" | "returned" | "forbidden" | "unauthenticated" | "malformed" | "failed"

const notifications = MetricKey.counter("cobro_bank_notifications", {
  description: "Incoming-transfer notifications from the bank, by what became of them",
  incremental: true
})

const of = (outcome: Outcome) => Metrics.labelled(notifications, { outcome })

/** The counter of each outcome, made once (`Metrics.labelled`); typed, so none is left out. */
const byOutcome: Record<Outcome, Metric.Metric.Counter<number>> = {
  credited: of("credited"),
  duplicate: of("duplicate"),
  returned: of("returned"),
  forbidden: of("forbidden"),
  unauthenticated: of("unauthenticated"),
  malformed: of("malformed"),
  failed: of("failed")
}

const counted = (outcome: Outcome) => Metric.increment(byOutcome[outcome])

const answer = (status: number, outcome: Outcome, message: string) =>
  Effect.as(counted(outcome), HttpServerResponse.unsafeJson({ outcome, message }, { status }))

const logged = (body: string) => ({
  body: body.length > maxLoggedBody ? `${body.slice(0, maxLoggedBody)}…` : body
})

/**
 * The handler. `clientAddress` names the request's source (the reference server passes its own,
 * which honours `COBRO_TRUST_PROXY`).
 */
export const handler = (
  settings: IngressSettings,
  clientAddress: (request: HttpServerRequest.HttpServerRequest) => string = (request) =>
    Option.getOrElse(request.remoteAddress, () => "unknown")
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | Transfers.Transfers
> => {
  const allowList = AllowList.make(settings.allow)
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const source = clientAddress(request)
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    if (!allowList.allows(source)) {
      yield* Effect.logWarning(
        "bank notification from an address not in COBRO_BIND_WEBHOOK_ALLOW refused"
      ).pipe(Effect.annotateLogs({ source, ...logged(body) }))
      return yield* answer(403, "forbidden", "source address not allowed")
    }
    const auth = authenticate(settings, request.headers)
    if (Either.isLeft(auth)) {
      yield* Effect.logWarning(`bank notification refused: ${auth.left.message}`).pipe(
        Effect.annotateLogs({ source, ...logged(body) })
      )
      return yield* answer(401, "unauthenticated", auth.left.message)
    }
    const transfer = parse(body)
    if (Either.isLeft(transfer)) {
      yield* Effect.logError(`malformed bank notification: ${transfer.left.message}`).pipe(
        Effect.annotateLogs({ source, ...logged(body) })
      )
      return yield* answer(400, "malformed", transfer.left.message)
    }
    return yield* ingest(transfer.right, body)
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

/** Ingests a notification; 200 once committed, 503 (BIND retries) when it could not be. */
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
        Effect.logError(`bank notification not recorded: ${error.message}; BIND retries it`).pipe(
          Effect.annotateLogs({ bank_transaction_id: transfer.bank_transaction_id, ...logged(body) })
        ),
        error._tag === "InvalidInput"
          ? answer(400, "malformed", error.message)
          : answer(503, "failed", "the notification could not be recorded; retry")
      )
    )
  )
