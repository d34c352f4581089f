/**
 * BIND's webhook "Aviso de transferencia entrante": its authentication and its mapping to core's
 * `IncomingTransfer`. BIND documents no signature, so the request must carry the shared secret
 * configured with BIND (`BindSettings.webhookSecret`) in `webhookSecretHeader`, compared in
 * constant time; the ingress route adds the allow-list of BIND's source addresses. BIND retries a
 * notification until it gets a 200, and `bank_transaction_id` is the transfer's Coelsa id
 * (`data.id`), the same on every retry, so `Transfers.ingest` credits it once.
 */
import { BankAccount, BankProvider, Ids, Money } from "@cobro/core"
import { Either, Option, Redacted, Schema } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { BindSettings } from "./BindConfig.js"
import { IncomingTransferData, IncomingTransferNotice } from "./internal/api.js"

export class WebhookRejected extends Schema.TaggedError<WebhookRejected>()("BindWebhookRejected", {
  /** `unauthenticated`: answer 401 and keep nothing; `malformed`: answer 400 and log the raw body. */
  reason: Schema.Literal("unauthenticated", "malformed"),
  message: Schema.String
}) {}

export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest()

/** Whether the request carries the configured secret. With no secret configured, nothing passes. */
export const authenticate = (
  settings: Pick<BindSettings, "webhookSecret" | "webhookSecretHeader">,
  headers: Headers
): Either.Either<void, WebhookRejected> => {
  const raw = headers[settings.webhookSecretHeader]
  const given = typeof raw === "string" ? raw : undefined
  const matches = Option.match(settings.webhookSecret, {
    onNone: () => false,
    onSome: (secret) => given !== undefined && timingSafeEqual(digest(given), digest(Redacted.value(secret)))
  })
  return matches
    ? Either.void
    : Either.left(
        new WebhookRejected({
          reason: "unauthenticated",
          message: Option.isNone(settings.webhookSecret)
            ? "no webhook secret is configured (COBRO_BIND_WEBHOOK_SECRET): every notification is refused"
            : `missing or wrong ${settings.webhookSecretHeader}`
        })
      )
}

const malformed = (message: string) => new WebhookRejected({ reason: "malformed", message })

const field = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(value), () =>
    malformed(`${what} is not valid: ${String(value)}`)
  )

/** Maps a transfer in as BIND describes it (the webhook's `data`, a statement's movement). */
export const fromData = (value: unknown): Either.Either<BankProvider.IncomingTransfer, WebhookRejected> =>
  Either.gen(function* () {
    const data = yield* Either.mapLeft(Schema.decodeUnknownEither(IncomingTransferData)(value), (e) =>
      malformed(`not an incoming transfer: ${e.message}`)
    )
    const amount = yield* Either.mapLeft(Money.fromNumber(data.value.amount, "ARS"), (e) =>
      malformed(e.message)
    )
    if (!Money.isPositive(amount)) return yield* Either.left(malformed("amount must be positive"))
    return new BankProvider.IncomingTransfer({
      bank_transaction_id: yield* field(Ids.BankTransactionId, data.id, "data.id"),
      cvu: yield* field(BankAccount.Cvu, data.to.cvu, "data.to.cvu"),
      amount,
      sender_cuit: yield* field(BankAccount.Cuit, data.counterparty.id, "data.counterparty.id"),
      sender_name: data.counterparty.name,
      sender_account:
        data.counterparty.account_routing.scheme === "UNAVAILABLE"
          ? ""
          : data.counterparty.account_routing.address
    })
  })

/** Maps a notification's raw body to an `IncomingTransfer`; anything else is `malformed`. */
export const parse = (body: string): Either.Either<BankProvider.IncomingTransfer, WebhookRejected> =>
  Either.gen(function* () {
    const json = yield* Either.try({
      try: () => JSON.parse(body) as unknown,
      catch: () => malformed("body is not JSON")
    })
    const notice = yield* Either.mapLeft(Schema.decodeUnknownEither(IncomingTransferNotice)(json), (e) =>
      malformed(`not an incoming-transfer notification: ${e.message}`)
    )
    return yield* fromData(notice.data)
  })

/** `authenticate`, then `parse`. */
export const verify = (
  settings: Pick<BindSettings, "webhookSecret" | "webhookSecretHeader">,
  headers: Headers,
  body: string
): Either.Either<BankProvider.IncomingTransfer, WebhookRejected> =>
  Either.flatMap(authenticate(settings, headers), () => parse(body))
