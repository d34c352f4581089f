/**
 * Transfers out at BIND: Realizar Transferencia (deduplicated by BIND on `origin_id`, so retried
 * while BIND is `unavailable`) and Consultar transferencia, with BIND's statuses read as ours.
 */
import { BankAccount, BankProvider, Ids, Money } from "@cobro/core"
import { Effect, Either, Option, Schema } from "effect"
import { ok } from "./answers.js"
import * as Api from "./api.js"
import { bankError, type Client, decode, statusError } from "./client.js"

type BankError = BankProvider.BankError

/** Where an outgoing transfer stands at BIND, found by the `origin_id` of our reference. */
export type TransferStatus =
  | {
      readonly _tag: "Sent" | "Pending" | "Failed"
      readonly bank_transaction_id: Ids.BankTransactionId
      /** BIND's code, one of `Api.transferStatuses` (or one it added since). */
      readonly status: string
    }
  /** BIND has no transfer with that `origin_id`: it never arrived, sending it again is safe. */
  | { readonly _tag: "Unknown" }

/** An outgoing transfer as BIND reports it (`BindBank.outgoing`). */
export type OutgoingRecord = Exclude<TransferStatus, { _tag: "Unknown" }> & {
  /** The `origin_id` it was sent with (`OriginId.forReference` of our reference). */
  readonly origin_id: Option.Option<string>
}

/** BIND's code of an outgoing transfer as our status. */
export const statusOf = (data: Api.TransferData): Exclude<TransferStatus, { _tag: "Unknown" }> => {
  const bank_transaction_id = Ids.BankTransactionId.make(data.id)
  const status = data.status ?? ""
  const _tag = status === "COMPLETED" ? "Sent" : status === "FAILED" ? "Failed" : "Pending"
  return { _tag, bank_transaction_id, status }
}

/** The amount BIND reports for a transfer, if it reads as ARS cents. */
const amountOf = (data: Api.TransferData): Option.Option<Money.Money> =>
  Either.getRight(
    Either.flatMap(
      Schema.decodeUnknownEither(Api.Charge)(data.charge),
      (c): Either.Either<Money.Money, unknown> =>
        c.value.currency === "ARS" ? Money.fromNumber(c.value.amount, "ARS") : Either.left(c)
    )
  )

/** The outgoing-transfer operations on `client`. */
export const outgoing = ({ request }: Client) => {
  /** Realizar Transferencia with `origin_id`; BIND answers the original for a repeated one. */
  const transfer = (to: string, amount: Money.Money, originId: string, description: string) =>
    Effect.gen(function* () {
      if (amount.currency !== "ARS")
        return yield* Effect.fail(bankError("rejected", `BIND sends ARS only, not ${amount.currency}`))
      if (!Money.isPositive(amount))
        return yield* Effect.fail(bankError("rejected", "transfer amount must be positive"))
      const body: Api.TransferRequest = {
        origin_id: originId,
        to: BankAccount.isValidCbu(to) ? { cbu: to } : { alias: to },
        value: { currency: "ARS", amount: Money.toNumber(amount) },
        description: description.slice(0, Api.DESCRIPTION_MAX),
        concepto: "VAR",
        concept: "VAR"
      }
      const answer = yield* request({
        method: "POST",
        path: Api.paths.transfers,
        body,
        idempotent: true,
        what: "transfer"
      })
      if (!ok(answer)) return yield* Effect.fail(statusError("transfer", answer))
      const data = yield* decode(Api.TransferData, "transfer")(answer)
      const sameOrigin = (data.details?.origin_id ?? originId) === originId
      const sameAmount = Option.exists(amountOf(data), (m) => m.minor === amount.minor)
      if (!sameOrigin || !sameAmount)
        return yield* Effect.fail(
          bankError("rejected", `BIND holds another transfer under origin_id ${originId}; nothing was sent`)
        )
      const status = statusOf(data)
      if (status._tag === "Failed")
        return yield* Effect.fail(bankError("rejected", `BIND failed the transfer ${data.id} (FAILED)`))
      return {
        status: status._tag === "Sent" ? "completed" : "pending",
        bank_transaction_id: status.bank_transaction_id
      } satisfies BankProvider.TransferAcceptance
    })

  /**
   * Consultar transferencia by BIND's id or our `origin_id` (the page: "ID Coelsa u origin_id");
   * none on 404 (assumed: a transfer BIND never received).
   */
  const query = (id: string) =>
    request({
      method: "GET",
      path: Api.paths.transfer(id),
      idempotent: true,
      what: "transfer status query"
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<Option.Option<Api.TransferData>, BankError> =>
        answer.status === 404
          ? Effect.succeedNone
          : ok(answer)
            ? Effect.asSome(decode(Api.TransferData, "transfer status query")(answer))
            : Effect.fail(statusError("transfer status query", answer))
      )
    )

  /** Consultar transferencia by `origin_id`; `Unknown` is a transfer BIND never received. */
  const statusByOriginId = (originId: string) =>
    query(originId).pipe(
      Effect.map(Option.match({ onNone: (): TransferStatus => ({ _tag: "Unknown" }), onSome: statusOf })),
      Effect.tap((status) =>
        status._tag === "Pending" && status.status === "UNKNOWN_FOREVER"
          ? Effect.logError(
              "BIND reports an outgoing transfer UNKNOWN_FOREVER: it needs manual handling at BIND; it stays in flight until BIND reports it COMPLETED or FAILED"
            ).pipe(
              Effect.annotateLogs({ origin_id: originId, bank_transaction_id: status.bank_transaction_id })
            )
          : Effect.void
      )
    )

  /** The port's view of a transfer's status: BIND's code kept in a failure's reason. */
  const portStatus = (status: TransferStatus): BankProvider.TransferStatus => {
    switch (status._tag) {
      case "Sent":
        return { _tag: "Completed", bank_transaction_id: status.bank_transaction_id }
      case "Pending":
        return { _tag: "Pending", bank_transaction_id: status.bank_transaction_id }
      case "Failed":
        return {
          _tag: "Failed",
          bank_transaction_id: status.bank_transaction_id,
          reason: `BIND reports the transfer ${status.bank_transaction_id} ${status.status}`
        }
      case "Unknown":
        return { _tag: "NotFound" }
    }
  }

  return { transfer, query, statusByOriginId, portStatus }
}
