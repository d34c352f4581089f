/**
 * The simulator's transfer routes: Realizar Transferencia, Consultar transferencia(s), Conciliar
 * transferencia and the balance.
 */
import type * as http from "node:http"
import * as Api from "../internal/api.js"
import { deliver, incomingEvent, statementEntry } from "./notices.js"
import { answerOf, json, notifyOutgoing, type State, text } from "./state.js"

/** "YYYY-MM-DD HH:mm" (UTC) as epoch millis; NaN when it is not one. */
const listDate = (s: string | undefined): number =>
  s !== undefined && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(s)
    ? Date.parse(`${s.replace(" ", "T")}:00Z`)
    : NaN

const header = (req: http.IncomingMessage, name: string) => {
  const v = req.headers[name.toLowerCase()]
  return typeof v === "string" && v !== "" ? v : undefined
}

export const transfer = (
  st: State,
  body: Record<string, unknown>,
  req: http.IncomingMessage,
  res: http.ServerResponse
) => {
  st.stats.transferRequests++
  const originId = text(body["origin_id"])
  if (originId === undefined || originId === "") return json(res, 400, { mensaje: "origin_id es requerido" })
  if (originId.length > Api.ORIGIN_ID_MAX)
    return json(res, 422, { mensaje: "origin_id tiene más de 15 caracteres" })
  // Documented: a repeated origin_id creates nothing and answers the original.
  let entry = st.transfers.get(originId)
  if (entry === undefined) {
    const to = (body["to"] ?? {}) as { cbu?: unknown; alias?: unknown }
    const cbu = text(to.cbu)
    const alias = text(to.alias)
    const value = (body["value"] ?? {}) as { currency?: unknown; amount?: unknown }
    const amount = value.amount
    if ((cbu === undefined && alias === undefined) || typeof amount !== "number" || !(amount > 0))
      return json(res, 400, { mensaje: "transferencia invalida" })
    if (value.currency !== "ARS") return json(res, 400, { mensaje: "moneda invalida" })
    const concept = text(body["concepto"]) ?? text(body["concept"]) ?? "VAR"
    if (!(Api.concepts as ReadonlyArray<string>).includes(concept))
      return json(res, 400, { mensaje: "concepto invalido" })
    st.serial++
    entry = {
      id: `1-${st.entity.cuit}-${String(st.serial).padStart(15, "0")}-1`,
      origin_id: originId,
      to: cbu !== undefined ? { cbu } : { alias: alias! },
      amount,
      description: text(body["description"]) ?? "Varios",
      concept,
      started: st.now(),
      status: st.faults.holdTransfers ? "IN_PROGRESS" : "COMPLETED",
      ended: st.faults.holdTransfers ? null : st.now()
    }
    st.transfers.set(originId, entry)
    notifyOutgoing(st, entry)
  }
  if (st.faults.dropTransferAnswers > 0) {
    st.faults.dropTransferAnswers--
    req.socket.setTimeout(0)
    return // applied; the answer never comes
  }
  json(res, 200, answerOf(st, entry))
}

/** Consultar transferencias: parameters in headers, `start` a page from 1, `length` per page. */
export const list = (st: State, req: http.IncomingMessage, res: http.ServerResponse) => {
  const page = Number(header(req, "start") ?? "1")
  const length = Number(header(req, "length") ?? "50")
  const fromText = header(req, "fromDate")
  const toText = header(req, "toDate")
  const from = fromText === undefined ? -Infinity : listDate(fromText)
  const to = toText === undefined ? Infinity : listDate(toText)
  if (
    !(Number.isInteger(page) && page >= 1) ||
    !(Number.isInteger(length) && length >= 1) ||
    Number.isNaN(from) ||
    Number.isNaN(to)
  )
    return json(res, 400, { mensaje: "parametros invalidos" })
  const cvu = header(req, "cvu")
  const id = header(req, "transferenceId")
  const type = header(req, "type")
  const all =
    type === "TRANSFER"
      ? [...st.transfers.values()]
          .filter((t) => t.started >= from && t.started < to)
          .map((t) => answerOf(st, t))
      : st.incoming
          .filter((e) => e.booked >= from && e.booked < to)
          .map(statementEntry)
          .filter((e) => id === undefined || String(e["id"]) === id)
          .filter(
            (e) =>
              cvu === undefined ||
              (e as { details?: { origin_credit?: { cvu?: unknown } } }).details?.origin_credit?.cvu === cvu
          )
  json(res, 200, all.slice((page - 1) * length, page * length))
}

/** Conciliar transferencia: one whose event never went out is notified now. */
export const conciliate = (st: State, body: Record<string, unknown>, res: http.ServerResponse) => {
  const ids = body["transactions_ids"]
  if (!Array.isArray(ids)) return json(res, 400, { mensaje: "transactions_ids es requerido" })
  st.stats.conciliations++
  const answer = {
    conciliadas: [] as Array<string>,
    conError: [] as Array<string>,
    noConciliadas: [] as Array<string>
  }
  for (const id of ids.map(String)) {
    const entry = st.incoming.find((e) => String(e.data["id"]) === id && !e.raw)
    if (entry === undefined) answer.conError.push(id)
    else if (entry.notified) answer.noConciliadas.push(id)
    else {
      answer.conciliadas.push(id)
      entry.notified = true
      if (st.webhook !== undefined)
        void deliver(st.webhook, (r) => incomingEvent(entry, st.now(), r), 5).catch(() => 0)
    }
  }
  json(res, 200, answer)
}

export const balance = (st: State, res: http.ServerResponse) => {
  const cents = (n: number) => Math.round(n * 100)
  const inCents = st.incoming.reduce((sum, e) => {
    const amount = (e.data as { charge?: { value?: { amount?: unknown } } }).charge?.value?.amount
    return typeof amount === "number" && amount < 1e13 ? sum + cents(amount) : sum
  }, 0)
  const outCents = [...st.transfers.values()]
    .filter((t) => t.status !== "FAILED")
    .reduce((sum, t) => sum + cents(t.amount), 0)
  json(res, 200, {
    moneda: "ARS",
    saldo: (inCents - outCents) / 100,
    fecha: new Date(st.now()).toISOString()
  })
}

/** Consultar transferencia by BIND's id or the `origin_id` it was sent with. */
export const query = (st: State, id: string, res: http.ServerResponse) => {
  const entry = st.transfers.get(id) ?? [...st.transfers.values()].find((t) => t.id === id)
  return entry === undefined
    ? json(res, 404, { mensaje: "transferencia inexistente" })
    : json(res, 200, answerOf(st, entry))
}
