/**
 * `BankProvider` on BIND PSP's collection product, every call as BIND's developer portal documents
 * it (the wire: `internal/api.ts`), plus the BIND-specific calls (`BindBank`): a transfer's status
 * with BIND's own code, confirming a notified transfer with BIND's list before crediting it,
 * "Conciliar transferencia" and the collecting account's balance.
 *
 * Opening a CVU and assigning an alias are never retried (a repeat could open a second CVU or
 * race another holder); lookups, release, status queries, the statement and transfers
 * (deduplicated by BIND on `origin_id`) are retried while BIND is `unavailable`.
 *
 * Outgoing statuses (docs/decisions/0062-bind-as-documented.md): COMPLETED settles as sent,
 * FAILED as failed (BIND gave the money back); PENDING, IN_PROGRESS and UNKNOWN (BIND is still
 * resolving it during the day) stay in flight; UNKNOWN_FOREVER (BIND needs manual handling) also
 * stays in flight — the money may have left — logged as an error on every check until BIND's
 * manual handling turns it COMPLETED or FAILED, which settles it.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { BankAccount, BankProvider, Ids, Money, Spans } from "@cobro/core"
import {
  type ConfigError,
  Context,
  DateTime,
  Duration,
  Effect,
  Either,
  Layer,
  Option,
  Random,
  Schema
} from "effect"
import { type BindSettings, config } from "./BindConfig.js"
import { mapIncoming } from "./BindWebhook.js"
import * as Api from "./internal/api.js"
import {
  type Answer,
  bankError,
  type Client,
  decode,
  make as makeClient,
  statusError
} from "./internal/client.js"
import * as OriginId from "./OriginId.js"

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

/** What BIND's list says of a notified transfer (`confirmIncoming`). */
export type Confirmation =
  /** BIND lists it as claimed: credit BIND's record. */
  | { readonly _tag: "Confirmed"; readonly transfer: BankProvider.IncomingTransfer }
  /** BIND lists no transfer in with that id. */
  | { readonly _tag: "Unknown" }
  /** BIND lists it, but not as claimed (amount, CVU), or in a way that cannot be booked. */
  | { readonly _tag: "Mismatch"; readonly reason: string }

/** "Conciliar transferencia"'s answer, per id. */
export type Conciliation = typeof Api.ConciliateResponse.Type

export class BindBank extends Context.Tag("@cobro/bank-bind/BindBank")<
  BindBank,
  {
    /** The status of the transfer sent with `reference` (see `OriginId.forReference`). */
    readonly transferStatus: (reference: string) => Effect.Effect<TransferStatus, BankError>
    /**
     * An outgoing transfer as "Consultar transferencia" reports it by BIND's id (an event's
     * `data.id`): its status and the `origin_id` it was sent with, when BIND reports it; none
     * when BIND has no such transfer.
     */
    readonly outgoing: (id: string) => Effect.Effect<Option.Option<OutgoingRecord>, BankError>
    /** The status of the return of the received transfer `bankTransactionId`. */
    readonly returnStatus: (bankTransactionId: string) => Effect.Effect<TransferStatus, BankError>
    /** Looks a notified transfer up in BIND's list of transfers in, by its id. */
    readonly confirmIncoming: (claim: BankProvider.IncomingTransfer) => Effect.Effect<Confirmation, BankError>
    /** Asks BIND to book (and notify again) transfers in that it may have missed. */
    readonly conciliate: (ids: ReadonlyArray<string>) => Effect.Effect<Conciliation, BankError>
    /** The collecting account's balance. */
    readonly balance: Effect.Effect<Money.Money, BankError>
  }
>() {}

const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300

/** Decodes a value the bank reports with one of core's schemas; a mismatch is a bad answer. */
const reported = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Schema.decodeUnknown(schema)(value).pipe(
    Effect.mapError(() => bankError("unavailable", `BIND reported an invalid ${what}: ${String(value)}`))
  )

/**
 * The documented refusals of an alias (422, told apart by their words: "ya se encuentra en uso",
 * "formato … incorrecto", "más de una vez en 24 horas"); another refusal is `rejected`.
 */
export const aliasRefusal = (alias: string, answer: Answer): BankError => {
  const text = answer.body.toLowerCase()
  if (answer.status === 422 || answer.status === 409 || answer.status === 400) {
    if (text.includes("en uso")) return bankError("alias_taken", `alias ${alias} is already in use`)
    if (text.includes("formato"))
      return bankError("alias_invalid", `BIND refuses the format of alias ${alias}`)
    if (text.includes("24 horas") || text.includes("24hs"))
      return bankError(
        "alias_change_refused",
        `BIND allows one alias change every 24 hours; alias ${alias} was not assigned`
      )
  }
  return statusError("alias assignment", answer)
}

/** BIND's code of an outgoing transfer as our status. */
const statusOf = (data: Api.TransferData): Exclude<TransferStatus, { _tag: "Unknown" }> => {
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

const makeWith = (client: Client, settings: BindSettings) => {
  const { request } = client

  /** Asignar alias; each documented refusal its own reason. Never retried. */
  const assignAlias = (cvu: BankAccount.Cvu, alias: BankAccount.Alias) =>
    request({
      method: "POST",
      path: Api.paths.alias,
      body: { cuit: settings.cuit, cvu, label: alias } satisfies typeof Api.AliasRequest.Encoded,
      idempotent: false,
      what: "alias assignment"
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<void, BankError> =>
        ok(answer) ? Effect.void : Effect.fail(aliasRefusal(alias, answer))
      )
    )

  /** Eliminar CVU; one BIND does not know (404) is already released. */
  const releaseAccount = (cvu: BankAccount.Cvu) =>
    request({
      method: "DELETE",
      path: Api.paths.deleteCvu(cvu, settings.cuit),
      idempotent: true,
      what: "CVU release"
    }).pipe(
      Effect.flatMap((answer) =>
        ok(answer) || answer.status === 404 ? Effect.void : Effect.fail(statusError("CVU release", answer))
      )
    )

  /**
   * Crear CVU in the entity's CUIT with the holder name the payer's bank shows (the merchant's),
   * then its alias: the one asked for, else `cobro.` and the CVU's account digits (BIND creates
   * CVUs without one). A CVU that does not get its alias is released again.
   */
  const openAccount = ({
    alias,
    holder
  }: {
    readonly alias?: BankAccount.Alias | undefined
    readonly holder?: { readonly name: string } | undefined
  }) =>
    Effect.gen(function* () {
      const name = holder?.name ?? Option.getOrUndefined(settings.name)
      if (name === undefined)
        return yield* Effect.fail(
          bankError("rejected", "a CVU needs a holder name: the merchant's, or COBRO_BIND_NAME")
        )
      // Ours, unique per CVU: 18 random digits (BIND reactivates a CVU created again with the same).
      const client_id = (yield* Effect.all(Array.from({ length: 18 }, () => Random.nextIntBetween(0, 10))))
        .join("")
        .replace(/^0/, "1")
      const answer = yield* request({
        method: "POST",
        path: Api.paths.createCvu,
        body: { client_id, cuit: settings.cuit, name: name.slice(0, 100) },
        idempotent: false,
        what: "CVU opening"
      })
      if (!ok(answer)) return yield* Effect.fail(statusError("CVU opening", answer))
      const created = yield* decode(Api.CreateCvuResponse, "CVU opening")(answer)
      const cvu = yield* reported(BankAccount.Cvu, created.cvu, "CVU")
      if (created.reactivated === true)
        yield* Effect.logWarning("BIND reactivated a released CVU").pipe(Effect.annotateLogs({ cvu }))
      const given = created.label ?? ""
      if (alias === undefined && BankAccount.isValidAlias(given))
        return new BankProvider.BankAccountRef({ cvu, alias: BankAccount.Alias.make(given) })
      const wanted = alias ?? BankAccount.Alias.make(`cobro.${cvu.slice(8, 21)}`)
      yield* assignAlias(cvu, wanted).pipe(Effect.tapError(() => Effect.ignore(releaseAccount(cvu))))
      return new BankProvider.BankAccountRef({ cvu, alias: wanted })
    })

  const changeAlias = (cvu: BankAccount.Cvu, alias: BankAccount.Alias) =>
    Effect.as(assignAlias(cvu, alias), new BankProvider.BankAccountRef({ cvu, alias }))

  /** Wallet's "Consultar cuenta x CBU/CVU/alias": 404 (bad CBU/CVU) and 422 (no such alias) are unknown. */
  const lookupHolder = (address: string) =>
    Effect.gen(function* () {
      const byNumber = /^\d{22}$/.test(address)
      const answer = yield* request({
        method: "GET",
        path: Api.paths.account,
        urlParams: byNumber ? { cbuOrCvu: address } : { alias: address },
        idempotent: true,
        what: "holder lookup"
      })
      if (answer.status === 404 || answer.status === 422)
        return yield* Effect.fail(
          bankError("holder_not_found", `BIND knows no account holder for ${address}`)
        )
      if (!ok(answer)) return yield* Effect.fail(statusError("holder lookup", answer))
      const account = yield* decode(Api.AccountResponse, "holder lookup")(answer)
      if (account.activo === false)
        return yield* Effect.fail(bankError("holder_not_found", `the account ${address} is not active`))
      const cuit = yield* reported(BankAccount.Cuit, account.cuitCuil, "CUIT")
      return new BankProvider.AccountHolder({
        account: account.cbucvu,
        cuit,
        name: account.nombreCvu ?? account.nombre ?? ""
      })
    })

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

  /**
   * "Consultar transferencias" of transfers in, from `from` to `to` (minutes, UTC), with `extra`
   * headers (a CVU, a transfer id), page by page (`start` from 1, `length` a page) until a page
   * comes back short. Answers BIND's entries as sent.
   */
  const listIncoming = (from: Date, to: Date, extra: Record<string, string> = {}) =>
    Effect.gen(function* () {
      const entries: Array<unknown> = []
      for (let page = 1; ; page++) {
        const answer = yield* request({
          method: "GET",
          path: Api.paths.transfersList,
          headers: {
            start: String(page),
            length: String(Api.PAGE_LENGTH),
            type: Api.RECEIVED,
            fromDate: Api.formatListDate(from),
            toDate: Api.formatListDate(to),
            ...extra
          },
          idempotent: true,
          what: "statement"
        })
        if (!ok(answer)) return yield* Effect.fail(statusError("statement", answer))
        const list = yield* decode(Schema.Array(Schema.Unknown), "statement")(answer)
        entries.push(...list)
        if (list.length < Api.PAGE_LENGTH) return entries
      }
    })

  /** The minute of `d` (the list's dates have minutes), rounded down or up. */
  const minute = (d: DateTime.Utc, up: boolean) => {
    const ms = DateTime.toEpochMillis(d)
    return new Date((up ? Math.ceil(ms / 60_000) : Math.floor(ms / 60_000)) * 60_000)
  }

  /** The statement of transfers in for a window; an entry that cannot be read is `unreadable`. */
  const incomingTransfers = ({ from, to }: BankProvider.IncomingWindow) =>
    Effect.gen(function* () {
      const entries = yield* listIncoming(minute(from, false), minute(to, true))
      const transfers: Array<BankProvider.IncomingTransfer> = []
      const unreadable: Array<BankProvider.UnreadableTransfer> = []
      const seen = new Set<string>()
      for (const entry of entries) {
        const mapped = mapIncoming(entry, "statement")
        if (Either.isRight(mapped)) {
          if (seen.has(mapped.right.bank_transaction_id)) continue
          seen.add(mapped.right.bank_transaction_id)
          transfers.push(mapped.right)
        } else {
          const id = (entry as { id?: unknown } | null)?.id
          unreadable.push({
            bank_transaction_id: typeof id === "string" || typeof id === "number" ? String(id) : "",
            reason: mapped.left.message,
            body: JSON.stringify(entry)
          })
        }
      }
      return { transfers, unreadable } satisfies BankProvider.Statement
    }).pipe(Spans.span("BindBank.incomingTransfers"))

  const confirmIncoming = (claim: BankProvider.IncomingTransfer) =>
    Effect.gen(function* () {
      const now = yield* DateTime.now
      const entries = yield* listIncoming(
        minute(DateTime.subtractDuration(now, settings.confirmWindow), false),
        minute(DateTime.addDuration(now, Duration.minutes(1)), true),
        { transferenceId: claim.bank_transaction_id }
      )
      const entry = entries.find(
        (e) => String((e as { id?: unknown } | null)?.id) === claim.bank_transaction_id
      )
      if (entry === undefined) return { _tag: "Unknown" } satisfies Confirmation
      const record = mapIncoming(entry, "statement")
      if (Either.isLeft(record))
        return {
          _tag: "Mismatch",
          reason: `BIND's record cannot be booked: ${record.left.message}`
        } satisfies Confirmation
      const bank = record.right
      if (bank.amount.minor !== claim.amount.minor)
        return {
          _tag: "Mismatch",
          reason: `BIND's record has amount ${Money.format(bank.amount)}, the notification ${Money.format(claim.amount)}`
        } satisfies Confirmation
      if (bank.cvu !== claim.cvu)
        return {
          _tag: "Mismatch",
          reason: `BIND's record credits CVU ${bank.cvu}, the notification ${claim.cvu}`
        } satisfies Confirmation
      return { _tag: "Confirmed", transfer: bank } satisfies Confirmation
    }).pipe(Spans.span("BindBank.confirmIncoming"))

  const conciliate = (ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed<Conciliation>({ conciliadas: [], conError: [], noConciliadas: [] })
      : request({
          method: "POST",
          path: Api.paths.conciliate,
          body: { transactions_ids: ids },
          idempotent: true,
          what: "transfer conciliation"
        }).pipe(
          Effect.flatMap((answer) =>
            ok(answer)
              ? decode(Api.ConciliateResponse, "transfer conciliation")(answer)
              : Effect.fail(statusError("transfer conciliation", answer))
          )
        )

  const balance = request({ method: "GET", path: Api.paths.balance, idempotent: true, what: "balance" }).pipe(
    Effect.flatMap((answer) =>
      ok(answer)
        ? decode(Api.BalanceResponse, "balance")(answer)
        : Effect.fail(statusError("balance", answer))
    ),
    Effect.flatMap((b) =>
      b.moneda === "ARS"
        ? Either.match(Money.fromNumber(b.saldo, "ARS"), {
            onLeft: (e) =>
              Effect.fail(bankError("unavailable", `BIND reported an invalid balance: ${e.message}`)),
            onRight: Effect.succeed
          })
        : Effect.fail(bankError("unavailable", `BIND reported the balance in ${b.moneda}, not ARS`))
    )
  )

  const provider: BankProvider.BankProvider["Type"] = {
    incomingTransfers,
    openAccount,
    changeAlias,
    releaseAccount,
    lookupHolder,
    sendTransfer: ({ to, amount, reference }) =>
      transfer(to, amount, OriginId.forReference(reference), `cobro ${reference}`),
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
              `devolucion ${incoming.bank_transaction_id}`
            )
          )
  }
  const bind: BindBank["Type"] = {
    transferStatus: (reference) => statusByOriginId(OriginId.forReference(reference)),
    outgoing: (id) =>
      Effect.map(
        query(id),
        Option.map((data) => ({
          ...statusOf(data),
          origin_id: Option.fromNullable(data.details?.origin_id).pipe(Option.filter((o) => o !== ""))
        }))
      ),
    returnStatus: (id) => statusByOriginId(OriginId.forReturn(id)),
    confirmIncoming,
    conciliate,
    balance
  }
  return { provider, bind }
}

/** `BankProvider` and `BindBank` on BIND with `settings`; the host provides the `HttpClient`. */
export const layer = (
  settings: BindSettings
): Layer.Layer<BankProvider.BankProvider | BindBank, never, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(makeClient(settings), (client) => {
      const { provider, bind } = makeWith(client, settings)
      return Context.make(BankProvider.BankProvider, provider).pipe(Context.add(BindBank, bind))
    })
  )

/** `layer` with its settings read from `COBRO_BIND_*` (see `BindConfig`). */
export const layerConfig: Layer.Layer<
  BankProvider.BankProvider | BindBank,
  ConfigError.ConfigError,
  HttpClient.HttpClient
> = Layer.unwrapEffect(Effect.map(config, layer))
