/** The simulator's books, shared by its routes, and what every route answers with. */
import { randomUUID } from "node:crypto"
import type * as http from "node:http"
import * as Api from "../internal/api.js"
import type { Faults } from "./faults.js"
import type { CvuEntry, Holder, Simulator, TransferEntry } from "./model.js"
import { deliver, type IncomingEntry, transferAnswer, type WebhookTarget } from "./notices.js"

/** Everything the simulator holds: its accounts, transfers, tokens and switches. */
export interface State {
  readonly now: () => number
  readonly entity: Simulator["entity"]
  readonly faults: Faults
  readonly stats: Simulator["stats"]
  readonly tokens: Map<string, number>
  readonly cvus: Map<string, CvuEntry>
  readonly transfers: Map<string, TransferEntry>
  readonly holders: Array<Holder>
  readonly incoming: Array<IncomingEntry>
  webhook: WebhookTarget | undefined
  /** The last number given to a CVU or a transfer. */
  serial: number
}

export const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** A string BIND takes as a number too (`client_id`, CUITs). */
export const text = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined

export const finals = new Set<Api.TransferStatusCode>(["COMPLETED", "FAILED", "UNKNOWN_FOREVER"])

/** The CVU or CBU an alias names now (an open CVU's, or an outside holder's). */
export const aliasOwner = (st: State, alias: string): string | undefined =>
  [...st.cvus.values()].find((c) => c.open && c.alias === alias)?.cvu ??
  st.holders.find((h) => h.alias === alias)?.cbu
export const holderOf = (st: State, address: string): Holder | undefined => {
  const own = st.cvus.get(address) ?? [...st.cvus.values()].find((c) => c.open && c.alias === address)
  if (own !== undefined)
    return own.open
      ? {
          cuit: st.entity.cuit,
          name: own.name,
          cbu: own.cvu,
          ...(own.alias === null ? {} : { alias: own.alias })
        }
      : undefined
  return st.holders.find((h) => h.cbu === address || h.alias === address)
}
export const answerOf = (st: State, t: TransferEntry) =>
  transferAnswer(t, holderOf(st, t.to.cbu ?? t.to.alias ?? ""))

/** The outgoing transfer's event, once it is final (only final statuses are notified). */
export const notifyOutgoing = (st: State, t: TransferEntry) => {
  if (st.webhook === undefined || !finals.has(t.status) || !st.faults.notifyOutgoing) return
  const { details, ...rest } = answerOf(st, t)
  const data = {
    ...rest,
    details: { origin_debit: details.origin_debit, origin_credit: details.origin_credit }
  }
  const target = st.webhook
  void deliver(
    target,
    (redeliveries) => ({
      id: randomUUID(),
      object: "",
      created: new Date(st.now()).toISOString(),
      data,
      type: Api.OUTGOING,
      redeliveries
    }),
    3
  ).catch(() => 0)
}
