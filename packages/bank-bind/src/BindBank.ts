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
import { BankProvider, type Money } from "@cobro/core"
import { type ConfigError, Context, Effect, Layer, Option } from "effect"
import { type BindSettings, config } from "./BindConfig.js"
import { accounts } from "./internal/accounts.js"
import { type Client, bankError, make as makeClient } from "./internal/client.js"
import { outgoing, type OutgoingRecord, statusOf, type TransferStatus } from "./internal/outgoing.js"
import { type Conciliation, type Confirmation, statement } from "./internal/statement.js"
import * as OriginId from "./OriginId.js"

export { aliasRefusal } from "./internal/accounts.js"
export type { OutgoingRecord, TransferStatus } from "./internal/outgoing.js"
export type { Conciliation, Confirmation } from "./internal/statement.js"

type BankError = BankProvider.BankError

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

const makeWith = (client: Client, settings: BindSettings) => {
  const { openAccount, changeAlias, releaseAccount, lookupHolder } = accounts(client, settings)
  const { transfer, query, statusByOriginId, portStatus } = outgoing(client)
  const { incomingTransfers, confirmIncoming, conciliate, balance } = statement(client, settings)

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
