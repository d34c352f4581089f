/**
 * BIND's events as BIND documents them: "Aviso de transferencia entrante" in a CVU
 * (`transfer.cvu.received`), in the collecting account's CBU (`transfer.cbu.received`) and the
 * outgoing transfer's final status (`TRANSFER`), and a transfer in as BIND describes it anywhere
 * (the event's `data`, a statement entry) mapped to core's `IncomingTransfer`.
 *
 * Liberal where money does not depend on a field (unknown fields, a null or missing bank scheme,
 * CUITs as numbers, a free-text concept, `redeliveries` above 0), strict where it does: the
 * transfer's id, its status, currency, amount (positive, cents, at most core's maximum) and our
 * CVU. A refusal names the field (`Refused.field`) in words a caller can act on; the schema's own
 * report is kept apart (`Refused.detail`) for the log. A notification is only a claim: the
 * ingress confirms it with BIND's API before anything is credited (`BindIngress`).
 *
 * BIND authenticates itself with mTLS (docs/operations.md "Going live with BIND"); a shared
 * secret in a header (`authenticate`) is an optional extra layer.
 */
import { BankAccount, BankProvider, Ids, Money } from "@cobro/core"
import { Either, Option, Redacted, Schema } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { BindSettings } from "./BindConfig.js"
import * as Api from "./internal/api.js"

export class WebhookRejected extends Schema.TaggedError<WebhookRejected>()("BindWebhookRejected", {
  /** `unauthenticated`: answer 401 and keep nothing; `malformed`: answer 400 and log the raw body. */
  reason: Schema.Literal("unauthenticated", "malformed"),
  message: Schema.String,
  /** The field refused (`data.charge.value.amount`), when one is. */
  field: Schema.optional(Schema.String),
  /** What the schema reported, for the log only. */
  detail: Schema.optional(Schema.String)
}) {}

export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest()

/**
 * Whether the request carries the configured shared secret; with none configured every request
 * passes (the secret is an optional layer over mTLS and the confirmation with BIND's API).
 */
export const authenticate = (
  settings: Pick<BindSettings, "webhookSecret" | "webhookSecretHeader">,
  headers: Headers
): Either.Either<void, WebhookRejected> => {
  if (Option.isNone(settings.webhookSecret)) return Either.void
  const raw = headers[settings.webhookSecretHeader]
  const given = typeof raw === "string" ? raw : undefined
  return given !== undefined &&
    timingSafeEqual(digest(given), digest(Redacted.value(settings.webhookSecret.value)))
    ? Either.void
    : Either.left(
        new WebhookRejected({
          reason: "unauthenticated",
          message: `missing or wrong ${settings.webhookSecretHeader}`
        })
      )
}

const refuse = (field: string, message: string, detail?: string) =>
  new WebhookRejected({
    reason: "malformed",
    message: `${field} ${message}`,
    field,
    ...(detail === undefined ? {} : { detail })
  })

/** Where a transfer in is described: an event's `data` or an entry of the statement. */
export type Source = "event" | "statement"

const nonEmpty = (s: string | null | undefined): s is string => s !== undefined && s !== null && s !== ""

/** The charge's value, strictly: ARS, a positive amount in cents, at most core's maximum. */
const amountOf = (charge: unknown, prefix: string): Either.Either<Money.Money, WebhookRejected> =>
  Either.gen(function* () {
    const decoded = yield* Either.mapLeft(Schema.decodeUnknownEither(Api.Charge)(charge), (e) =>
      refuse(`${prefix}.charge.value`, "must hold a currency and a numeric amount", e.message)
    )
    const { currency, amount } = decoded.value
    if (currency !== "ARS")
      return yield* Either.left(refuse(`${prefix}.charge.value.currency`, `must be ARS, got ${currency}`))
    const money = yield* Either.mapLeft(Money.fromInput(amount, "ARS"), (e) =>
      refuse(`${prefix}.charge.value.amount`, `is not a bookable amount (${amount}): ${e.message}`)
    )
    if (!Money.isPositive(money))
      return yield* Either.left(refuse(`${prefix}.charge.value.amount`, `must be positive, got ${amount}`))
    return money
  })

/** The sender's account: the routing's CBU/CVU address, else the debited CVU, else "" (unknown). */
const senderAccount = (data: Api.TransferData): string => {
  const routing = data.counterparty?.account_routing
  const scheme = routing?.scheme?.toUpperCase()
  if ((scheme === "CBU" || scheme === "CVU") && nonEmpty(routing?.address)) return routing.address
  const debited = data.details?.origin_debit?.cvu
  return nonEmpty(debited) ? debited : ""
}

/**
 * Maps a transfer in as BIND describes it (`source`: the event's `data`, or a statement entry)
 * to core's `IncomingTransfer`, or names the field that keeps it from being booked.
 */
export const mapIncoming = (
  value: unknown,
  source: Source = "event"
): Either.Either<BankProvider.IncomingTransfer, WebhookRejected> =>
  Either.gen(function* () {
    const prefix = source === "event" ? "data" : "entry"
    const data = yield* Either.mapLeft(Schema.decodeUnknownEither(Api.TransferData)(value), (e) =>
      refuse(`${prefix}.id`, "is missing: not a transfer as BIND describes it", e.message)
    )
    const id = yield* Either.mapLeft(Schema.decodeUnknownEither(Ids.BankTransactionId)(data.id), (e) =>
      refuse(`${prefix}.id`, `is not a transfer id: ${JSON.stringify(data.id)}`, e.message)
    )
    const completed = data.status === "COMPLETED" || (source === "statement" && data.status === Api.RECEIVED)
    if (!completed)
      return yield* Either.left(
        refuse(`${prefix}.status`, `must be COMPLETED, got ${JSON.stringify(data.status ?? null)}`)
      )
    const amount = yield* amountOf(data.charge, prefix)
    const credited = data.details?.origin_credit?.cvu
    const cvu = yield* Either.mapLeft(Schema.decodeUnknownEither(BankAccount.Cvu)(credited ?? ""), () =>
      refuse(`${prefix}.details.origin_credit.cvu`, `is not a CVU: ${JSON.stringify(credited ?? null)}`)
    )
    // The sender's CUIT as BIND sent it: the money arrived whatever it says, so a bad one is
    // credited and flagged by the engine (`sender_problems`), not refused here.
    const sender_cuit = data.counterparty?.id ?? data.details?.origin_debit?.cuit ?? ""
    return new BankProvider.IncomingTransfer({
      bank_transaction_id: id,
      cvu,
      amount,
      sender_cuit,
      sender_name: data.counterparty?.name ?? "",
      sender_account: senderAccount(data)
    })
  })

/** What an event says, once its envelope is read. */
export type Notice =
  /** Money reached one of our CVUs (a claim: confirm it with BIND before crediting). */
  | {
      readonly _tag: "Incoming"
      readonly transfer: BankProvider.IncomingTransfer
      readonly redeliveries: number
    }
  /** An outgoing transfer reached a final status; `id` is BIND's, `status` as BIND reports it. */
  | { readonly _tag: "Outgoing"; readonly id: string; readonly status: string }
  /** An event cobro has nothing to do with (a transfer into the collecting account's CBU). */
  | { readonly _tag: "Ignored"; readonly type: string }

/** Reads a notification's raw body; what cannot be read is `malformed`, naming the field. */
export const parse = (body: string): Either.Either<Notice, WebhookRejected> =>
  Either.gen(function* () {
    const json = yield* Either.try({
      try: () => JSON.parse(body) as unknown,
      catch: () => refuse("body", "is not JSON")
    })
    const event = yield* Either.mapLeft(Schema.decodeUnknownEither(Api.Event)(json), (e) =>
      refuse("type", "is missing: not an event as BIND sends them (type, data)", e.message)
    )
    switch (event.type) {
      case Api.CVU_RECEIVED: {
        const transfer = yield* mapIncoming(event.data, "event")
        return { _tag: "Incoming", transfer, redeliveries: event.redeliveries ?? 0 } satisfies Notice
      }
      case Api.OUTGOING: {
        const data = yield* Either.mapLeft(Schema.decodeUnknownEither(Api.TransferData)(event.data), (e) =>
          refuse("data.id", "is missing: not a transfer as BIND describes it", e.message)
        )
        return { _tag: "Outgoing", id: data.id, status: data.status ?? "" } satisfies Notice
      }
      default:
        return { _tag: "Ignored", type: event.type } satisfies Notice
    }
  })
