/**
 * `BankProvider` on BIND PSP, plus the BIND-specific calls the in-flight transfer job and the
 * reconciliation will stand on (`BindBank`: a transfer's status by our reference). The wire and
 * what is assumed of it are in `internal/api.ts` and docs/decisions.md ("BIND PSP adapter").
 *
 * Opening a CVU and assigning an alias are never retried (a repeat could open a second CVU or
 * race another holder); lookups, release, status queries and transfers (deduplicated by BIND on
 * `origin_id`) are retried while BIND is `unavailable`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { BankAccount, BankProvider, Ids, Money, Spans } from "@cobro/core"
import { type ConfigError, Context, DateTime, Effect, Either, Layer, Schema } from "effect"
import { type BindSettings, config } from "./BindConfig.js"
import * as Api from "./internal/api.js"
import {
  type Answer,
  bankError,
  type Client,
  decode,
  make as makeClient,
  statusError
} from "./internal/client.js"
import { fromData } from "./BindWebhook.js"
import * as OriginId from "./OriginId.js"

type BankError = BankProvider.BankError

/** Where an outgoing transfer stands at BIND, found by the `origin_id` of our reference. */
export type TransferStatus =
  | { readonly _tag: "Sent"; readonly bank_transaction_id: Ids.BankTransactionId }
  | { readonly _tag: "Pending"; readonly bank_transaction_id: Ids.BankTransactionId }
  | {
      readonly _tag: "Failed"
      readonly bank_transaction_id: Ids.BankTransactionId
      readonly status: Api.TransferStatusCode
    }
  /** BIND has no transfer with that `origin_id`: it never arrived, sending it again is safe. */
  | { readonly _tag: "Unknown" }

export class BindBank extends Context.Tag("@cobro/bank-bind/BindBank")<
  BindBank,
  {
    /** The status of the transfer sent with `reference` (see `OriginId.forReference`). */
    readonly transferStatus: (reference: string) => Effect.Effect<TransferStatus, BankError>
    /** The status of the return of the received transfer `bankTransactionId`. */
    readonly returnStatus: (bankTransactionId: string) => Effect.Effect<TransferStatus, BankError>
  }
>() {}

const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300

/** Decodes a value the bank reports with one of core's schemas; a mismatch is a bad answer. */
const reported = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Schema.decodeUnknown(schema)(value).pipe(
    Effect.mapError(() => bankError("unavailable", `BIND reported an invalid ${what}: ${String(value)}`))
  )

const statusOf = (response: Api.TransferResponse): Exclude<TransferStatus, { _tag: "Unknown" }> => {
  const bank_transaction_id = Ids.BankTransactionId.make(response.id)
  const status = response.status
  if ((Api.confirmedStatuses as ReadonlyArray<string>).includes(status))
    return { _tag: "Sent", bank_transaction_id }
  if ((Api.pendingStatuses as ReadonlyArray<string>).includes(status))
    return { _tag: "Pending", bank_transaction_id }
  return { _tag: "Failed", bank_transaction_id, status }
}

const makeWith = (client: Client) => {
  const { request } = client

  const findCvu = (cvu: string) =>
    request({ method: "GET", path: Api.paths.cvu(cvu), idempotent: true, what: "CVU lookup" }).pipe(
      Effect.flatMap((answer) =>
        answer.status === 404
          ? Effect.fail(bankError("rejected", `CVU ${cvu} is not an open account at BIND`))
          : ok(answer)
            ? decode(Api.CvuRecord, "CVU lookup")(answer)
            : Effect.fail(statusError("CVU lookup", answer))
      )
    )

  /** Asignar alias; 409 is a taken alias, another refusal `refused`. Never retried. */
  const assignAlias = (id: number, alias: BankAccount.Alias, refused: BankError["reason"]) =>
    request({
      method: "PATCH",
      path: Api.paths.assignAlias(id),
      body: { alias, idEsCuenta: false },
      idempotent: false,
      what: "alias assignment"
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<void, BankError> => {
        if (ok(answer)) return Effect.void
        if (answer.status === 409)
          return Effect.fail(bankError("alias_taken", `alias ${alias} is already in use`))
        const error = statusError("alias assignment", answer)
        return Effect.fail(
          error.reason === "rejected"
            ? bankError(refused, `BIND refused alias ${alias}: ${error.message}`)
            : error
        )
      })
    )

  const releaseAccount = (cvu: BankAccount.Cvu) =>
    request({ method: "DELETE", path: Api.paths.cvu(cvu), idempotent: true, what: "CVU release" }).pipe(
      Effect.flatMap((answer) =>
        ok(answer) || answer.status === 404 ? Effect.void : Effect.fail(statusError("CVU release", answer))
      )
    )

  const openAccount = ({ alias }: { readonly alias?: BankAccount.Alias | undefined }) =>
    Effect.gen(function* () {
      const answer = yield* request({
        method: "POST",
        path: Api.paths.cvus,
        body: { currency: "ARS" },
        idempotent: false,
        what: "CVU opening"
      })
      if (!ok(answer)) return yield* Effect.fail(statusError("CVU opening", answer))
      const record = yield* decode(Api.CvuRecord, "CVU opening")(answer)
      const cvu = yield* reported(BankAccount.Cvu, record.cvu, "CVU")
      if (alias === undefined) {
        const given = yield* reported(BankAccount.Alias, record.alias, "alias")
        return new BankProvider.BankAccountRef({ cvu, alias: given })
      }
      // A CVU without the alias asked for is of no use to the caller: close it again.
      yield* assignAlias(record.id, alias, "alias_taken").pipe(
        Effect.tapError(() => Effect.ignore(releaseAccount(cvu)))
      )
      return new BankProvider.BankAccountRef({ cvu, alias })
    })

  const changeAlias = (cvu: BankAccount.Cvu, alias: BankAccount.Alias) =>
    Effect.gen(function* () {
      const record = yield* findCvu(cvu)
      yield* assignAlias(record.id, alias, "alias_change_refused")
      return new BankProvider.BankAccountRef({ cvu, alias })
    })

  const lookupHolder = (address: string) =>
    Effect.gen(function* () {
      const answer = yield* request({
        method: "GET",
        path: Api.paths.counterparty(address),
        idempotent: true,
        what: "holder lookup"
      })
      if (answer.status === 404) {
        return yield* Effect.fail(
          bankError("holder_not_found", `BIND knows no account holder for ${address}`)
        )
      }
      if (!ok(answer)) return yield* Effect.fail(statusError("holder lookup", answer))
      const holder = yield* decode(Api.Counterparty, "holder lookup")(answer)
      const cuit = yield* reported(BankAccount.Cuit, holder.id, "CUIT")
      const account = holder.account_routing.scheme === "CBU" ? holder.account_routing.address : address
      return new BankProvider.AccountHolder({ account, cuit, name: holder.name })
    })

  /** Realizar Transferencia with `origin_id`; BIND answers the original for a repeated one. */
  const transfer = (to: string, amount: Money.Money, originId: string, description: string) =>
    Effect.gen(function* () {
      if (amount.currency !== "ARS") {
        return yield* Effect.fail(bankError("rejected", `BIND sends ARS only, not ${amount.currency}`))
      }
      if (!Money.isPositive(amount))
        return yield* Effect.fail(bankError("rejected", "transfer amount must be positive"))
      const body: Api.TransferRequest = {
        origin_id: originId,
        to: BankAccount.isValidCbu(to) ? { cbu: to } : { alias: to },
        value: { currency: "ARS", amount: Money.toNumber(amount) },
        description,
        concepto: "VAR"
      }
      const answer = yield* request({
        method: "POST",
        path: Api.paths.transfers,
        body,
        idempotent: true,
        what: "transfer"
      })
      if (!ok(answer)) return yield* Effect.fail(statusError("transfer", answer))
      const response = yield* decode(Api.TransferResponse, "transfer")(answer)
      const sameAmount = Either.match(Money.fromNumber(response.details.value.amount, "ARS"), {
        onLeft: () => false,
        onRight: (m) => m.minor === amount.minor
      })
      const sameDestination = (response.details.to.cbu ?? response.details.to.alias) === to
      if (response.details.origin_id !== originId || !sameAmount || !sameDestination) {
        return yield* Effect.fail(
          bankError("rejected", `BIND holds another transfer under origin_id ${originId}; nothing was sent`)
        )
      }
      const status = statusOf(response)
      if (status._tag === "Failed") {
        return yield* Effect.fail(
          bankError("rejected", `BIND failed the transfer ${response.id} (${status.status})`)
        )
      }
      return {
        status: status._tag === "Sent" ? "completed" : "pending",
        bank_transaction_id: status.bank_transaction_id
      } satisfies BankProvider.TransferAcceptance
    })

  const statusByOriginId = (originId: string) =>
    request({
      method: "GET",
      path: Api.paths.transfers,
      urlParams: { origin_id: originId },
      idempotent: true,
      what: "transfer status query"
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<TransferStatus, BankError> =>
        answer.status === 404
          ? Effect.succeed({ _tag: "Unknown" })
          : ok(answer)
            ? Effect.map(decode(Api.TransferResponse, "transfer status query")(answer), statusOf)
            : Effect.fail(statusError("transfer status query", answer))
      )
    )

  /** The port's view of a transfer's status: BIND's codes kept in a failure's reason. */
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
  /**
   * The statement's transfers in for the window, page by page. A transfer in that does not map
   * (a field we cannot read) is logged with its raw movement and skipped, never guessed at.
   */
  const incomingTransfers = ({ from, to }: BankProvider.IncomingWindow) =>
    Effect.gen(function* () {
      const found: Array<BankProvider.IncomingTransfer> = []
      for (let offset = 0; ; offset += Api.MOVEMENTS_PAGE) {
        const answer = yield* request({
          method: "GET",
          path: Api.paths.movements,
          urlParams: {
            obp_from_date: DateTime.formatIso(from),
            obp_to_date: DateTime.formatIso(to),
            obp_limit: String(Api.MOVEMENTS_PAGE),
            obp_offset: String(offset)
          },
          idempotent: true,
          what: "statement"
        })
        if (!ok(answer)) return yield* Effect.fail(statusError("statement", answer))
        const page = yield* decode(Api.MovementsPage, "statement")(answer)
        for (const raw of page.transactions) {
          const movement = Schema.decodeUnknownEither(Api.Movement)(raw)
          if (Either.isRight(movement) && movement.right.direction === "DEBIT") continue
          if (Either.isRight(movement) && movement.right.type !== "TRANSFER") continue
          const mapped = fromData(raw)
          if (Either.isRight(mapped)) found.push(mapped.right)
          else
            yield* Effect.logError("BIND's statement holds a transfer in that cannot be read; skipped").pipe(
              Effect.annotateLogs({ reason: mapped.left.message, movement: JSON.stringify(raw) })
            )
        }
        if (page.transactions.length < Api.MOVEMENTS_PAGE) return found
      }
    }).pipe(Spans.span("BindBank.incomingTransfers"))

  const provider: BankProvider.BankProvider["Type"] = {
    incomingTransfers,
    openAccount,
    changeAlias,
    releaseAccount,
    lookupHolder,
    sendTransfer: ({ to, amount, reference }) =>
      transfer(to, amount, OriginId.forReference(reference), `cobro ${reference}`.slice(0, 100)),
    transferStatus: (reference) => Effect.map(statusByOriginId(OriginId.forReference(reference)), portStatus),
    returnTransfer: (incoming) =>
      incoming.sender_account === ""
        ? Effect.fail(
            bankError(
              "rejected",
              `BIND did not report the sender's account of ${incoming.bank_transaction_id}`
            )
          )
        : Effect.asVoid(
            transfer(
              incoming.sender_account,
              incoming.amount,
              OriginId.forReturn(incoming.bank_transaction_id),
              `devolucion ${incoming.bank_transaction_id}`.slice(0, 100)
            )
          )
  }
  const bind: BindBank["Type"] = {
    transferStatus: (reference) => statusByOriginId(OriginId.forReference(reference)),
    returnStatus: (id) => statusByOriginId(OriginId.forReturn(id))
  }
  return { provider, bind }
}

/** `BankProvider` and `BindBank` on BIND with `settings`; the host provides the `HttpClient`. */
export const layer = (
  settings: BindSettings
): Layer.Layer<BankProvider.BankProvider | BindBank, never, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(makeClient(settings), (client) => {
      const { provider, bind } = makeWith(client)
      return Context.make(BankProvider.BankProvider, provider).pipe(Context.add(BindBank, bind))
    })
  )

/** `layer` with its settings read from `COBRO_BIND_*` (see `BindConfig`). */
export const layerConfig: Layer.Layer<
  BankProvider.BankProvider | BindBank,
  ConfigError.ConfigError,
  HttpClient.HttpClient
> = Layer.unwrapEffect(Effect.map(config, layer))
