/**
 * BIND's lists: "Consultar transferencias" of transfers in (the statement reconciliation reads,
 * and the confirmation of a notified transfer before it is credited), "Conciliar transferencia"
 * and the collecting account's balance.
 */
import { BankProvider, Money, Spans } from "@cobro/core"
import { DateTime, Duration, Effect, Either, Schema } from "effect"
import type { BindSettings } from "../BindConfig.js"
import { mapIncoming } from "../BindWebhook.js"
import { ok } from "./answers.js"
import * as Api from "./api.js"
import { bankError, type Client, decode, statusError } from "./client.js"

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

/** The statement, confirmation, conciliation and balance on `client`. */
export const statement = ({ request }: Client, settings: BindSettings) => {
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

  return { incomingTransfers, confirmIncoming, conciliate, balance }
}
