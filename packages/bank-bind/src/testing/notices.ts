/**
 * The simulator's side of BIND's events, in the shapes of BIND's pages: the incoming-transfer
 * event in a CVU (`transfer.cvu.received`, its "Ejemplo JSON real"), the entry of "Consultar
 * transferencias", the outgoing-transfer event and the answer of "Realizar Transferencia", and
 * their delivery (redelivered until the receiver answers 200).
 */
import type * as http from "node:http"
import * as Api from "../internal/api.js"
import type { TransferEntry } from "./model.js"

/** A transfer in the simulator books and notifies. */
export interface Notice {
  /** Our CVU credited. */
  readonly cvu: string
  /** Major units, e.g. 1500.5. */
  readonly amount: number
  readonly sender: { readonly cuit: string; readonly name: string; readonly cbu: string }
  /** The transfer's Coelsa id; a new one by default. Reuse it to send a duplicate. */
  readonly id?: string
}

/** Where the simulator posts its events (the URL configured with BIND). */
export interface WebhookTarget {
  readonly url: string
  /** The optional shared-secret header and its value (see `BindConfig.webhookSecret`). */
  readonly header?: string
  readonly secret?: string
}

/** The collecting account's id at the bank (the pages' examples look like this one). */
export const ACCOUNT_ID = "20-1-700001-10-5"

/** A transfer in, as booked. `data` is the event's `data`, or an entry booked raw. */
export interface IncomingEntry {
  /** Epoch millis of the booking. */
  readonly booked: number
  readonly data: Record<string, unknown>
  /** Whether its event reached BIND's books as sent (a dropped one is "not conciliated"). */
  notified: boolean
  /** Booked raw (`bookRaw`): listed as given, never notified. */
  readonly raw: boolean
}

const iso = (millis: number) => new Date(millis).toISOString()

/** The event's `data` of a transfer in (the shape of the page's real example). */
export const incomingData = (id: string, notice: Notice, entityCuit: string) => ({
  id,
  type: "TRANSFER",
  from: { bank_id: Api.BANK_ID, account_id: ACCOUNT_ID },
  counterparty: {
    id: notice.sender.cuit,
    name: notice.sender.name,
    id_type: "CUIT_CUIL",
    bank_routing: { scheme: "UNAVAILABLE", address: "" },
    account_routing: {
      scheme: notice.sender.cbu.startsWith("000") ? "CVU" : "CBU",
      address: notice.sender.cbu
    }
  },
  details: { origin_debit: null, origin_credit: { cvu: notice.cvu, cuit: entityCuit } },
  transaction_ids: [id],
  status: "COMPLETED",
  start_date: null,
  end_date: null,
  challenge: null,
  charge: { summary: "VAR", value: { currency: "ARS", amount: notice.amount } }
})

/** The event "Aviso de transferencia entrante en CVU" of a booked transfer. */
export const incomingEvent = (entry: IncomingEntry, created: number, redeliveries: number) => ({
  id: `CASHOUT-${String(entry.data["id"])}`,
  object: "ApiTransaction",
  created: iso(created),
  data: entry.data,
  type: Api.CVU_RECEIVED,
  redeliveries
})

/** An entry of "Consultar transferencias" (its page's response fields). */
export const statementEntry = (entry: IncomingEntry) => {
  if (entry.raw) return entry.data
  const d = entry.data as ReturnType<typeof incomingData>
  return {
    id: d.id,
    type: "TRANSFER",
    from: d.from,
    counterparty: { ...d.counterparty, bank_routing: { ...d.counterparty.bank_routing, code: "" } },
    details: {
      type: Api.RECEIVED,
      origin_id: d.id,
      origin_debit: d.details.origin_debit,
      origin_credit: d.details.origin_credit,
      transaction_ids: d.transaction_ids
    },
    status: Api.RECEIVED,
    start_date: iso(entry.booked),
    end_date: iso(entry.booked),
    charge: d.charge,
    business_date: iso(entry.booked)
  }
}

/** The answer of "Realizar Transferencia" and "Consultar transferencia", and the outgoing event's `data`. */
export const transferAnswer = (
  t: TransferEntry,
  holder: { readonly cuit: string; readonly name: string } | undefined
) => ({
  id: t.id,
  type: "TRANSFER",
  from: { bank_id: Api.BANK_ID, account_id: ACCOUNT_ID },
  counterparty: {
    id: holder?.cuit ?? "",
    name: holder?.name ?? "",
    id_type: holder === undefined ? "UNAVAILABLE" : "CUIT_CUIL",
    bank_routing: { scheme: "UNAVAILABLE", address: "", code: "" },
    account_routing:
      t.to.cbu !== undefined
        ? { scheme: t.to.cbu.startsWith("000") ? "CVU" : "CBU", address: t.to.cbu }
        : { scheme: "LABEL", address: t.to.alias ?? "" }
  },
  details: {
    origin_id: t.origin_id,
    origin_debit: { cvu: "", cuit: "" },
    origin_credit: { cvu: "", cuit: "" }
  },
  transaction_ids: t.status === "COMPLETED" ? [t.id, `${t.id.replace(/\W/g, "")}C`] : [t.id],
  status: t.status,
  start_date: iso(t.started),
  end_date: t.ended === null ? null : iso(t.ended),
  challenge: "",
  charge: { summary: `${t.concept} ${t.description}`, value: { currency: "ARS", amount: t.amount } }
})

export const sleep = (millis: number) => new Promise((done) => setTimeout(done, millis))

export const post = async (
  url: string,
  body: unknown,
  auth?: { readonly header?: string; readonly secret?: string }
) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (auth?.header !== undefined && auth.secret !== undefined) headers[auth.header] = auth.secret
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) })
  await response.arrayBuffer()
  return response.status
}

/**
 * Posts until the receiver answers 200, at most `attempts` (BIND's ten redeliveries over two
 * hours, compressed), with `redeliveries` counting up as BIND's does.
 */
export const deliver = async (
  target: WebhookTarget,
  body: (redeliveries: number) => unknown,
  attempts: number
) => {
  let status = 0
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(100 * attempt)
    status = await post(target.url, body(attempt), target).catch(() => 0)
    if (status === 200) break
  }
  return status
}

/** POST `{cvu, amount}` here to make money arrive (a developer's switch, not part of BIND's API). */
export const controlPath = "/_simulator/incoming"

export const readBody = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })
