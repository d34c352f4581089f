/**
 * A simulator of BIND PSP's collection product as a real `node:http` server, written from BIND's
 * pages (`internal/api.ts` names each): the OAuth2 token endpoint (client credentials with the
 * environment's scope), Crear CVU (reactivating a released one created again with the same data),
 * Asignar alias (with its documented refusals: in use, bad format, more than once in 24 hours),
 * Eliminar CVU, Wallet's account lookup, Realizar Transferencia (deduplicated on `origin_id`, at
 * most 15 characters) and Consultar transferencia with every documented status, Consultar
 * transferencias (parameters in headers, paged), Conciliar transferencia, the balance, and the
 * events: "Aviso de transferencia entrante en CVU" in the shape of its page's real example, and
 * the outgoing transfer's final status.
 *
 * Its fault switches (`faults`) make the cases a real bank has: a transfer applied whose answer
 * never arrives, 5xx, malformed answers, tokens that expire or are revoked, transfers that stay
 * in progress and end late, refused alias changes, slow answers, and notifications that never
 * come, come twice or come late (the statement lists every transfer in all the same).
 */
import { BankAccount } from "@cobro/core"
import { Effect, type Scope } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Api from "../internal/api.js"
import { makeFaults } from "./faults.js"
import type { CvuEntry, Holder, Options, Simulator, TransferEntry } from "./model.js"
import {
  controlPath,
  deliver,
  type IncomingEntry,
  incomingData,
  incomingEvent,
  type Notice,
  post,
  readBody,
  sleep,
  statementEntry,
  transferAnswer
} from "./notices.js"

export type { Faults } from "./faults.js"
export { controlPath } from "./notices.js"
export type { IncomingEntry, Notice, WebhookTarget } from "./notices.js"
export type { CvuEntry, Holder, Options, Simulator, TransferEntry } from "./model.js"

/** CVUs issued by the simulator start with this PSP code. */
const PSP = "0000322"
const DAY = 86_400_000

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** A string BIND takes as a number too (`client_id`, CUITs). */
const text = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined

/** "YYYY-MM-DD HH:mm" (UTC) as epoch millis; NaN when it is not one. */
const listDate = (s: string | undefined): number =>
  s !== undefined && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(s)
    ? Date.parse(`${s.replace(" ", "T")}:00Z`)
    : NaN

const finals = new Set<Api.TransferStatusCode>(["COMPLETED", "FAILED", "UNKNOWN_FOREVER"])

export const start = (options: Options): Promise<Simulator> => {
  let offset = 0
  const now = () => options.now() + offset
  const clientId = options.clientId ?? "cobro-sim"
  const clientSecret = options.clientSecret ?? "sim-secret"
  const scope = options.scope ?? Api.environments.staging.scope
  const entity = options.entity ?? { cuit: "30716595540", name: "Cobro Simulado SA" }
  const faults = makeFaults()

  let webhook = options.webhook
  const incoming: Array<IncomingEntry> = []
  const stats = { logins: 0, unauthorized: 0, transferRequests: 0, conciliations: 0 }
  const tokens = new Map<string, number>()
  const cvus = new Map<string, CvuEntry>()
  const transfers = new Map<string, TransferEntry>()
  const holders: Array<Holder> = []
  let serial = 0

  /** The CVU or CBU an alias names now (an open CVU's, or an outside holder's). */
  const aliasOwner = (alias: string): string | undefined =>
    [...cvus.values()].find((c) => c.open && c.alias === alias)?.cvu ??
    holders.find((h) => h.alias === alias)?.cbu
  const holderOf = (address: string): Holder | undefined => {
    const own = cvus.get(address) ?? [...cvus.values()].find((c) => c.open && c.alias === address)
    if (own !== undefined)
      return own.open
        ? {
            cuit: entity.cuit,
            name: own.name,
            cbu: own.cvu,
            ...(own.alias === null ? {} : { alias: own.alias })
          }
        : undefined
    return holders.find((h) => h.cbu === address || h.alias === address)
  }
  const answerOf = (t: TransferEntry) => transferAnswer(t, holderOf(t.to.cbu ?? t.to.alias ?? ""))

  /** The outgoing transfer's event, once it is final (only final statuses are notified). */
  const notifyOutgoing = (t: TransferEntry) => {
    if (webhook === undefined || !finals.has(t.status) || !faults.notifyOutgoing) return
    const { details, ...rest } = answerOf(t)
    const data = {
      ...rest,
      details: { origin_debit: details.origin_debit, origin_credit: details.origin_credit }
    }
    const target = webhook
    void deliver(
      target,
      (redeliveries) => ({
        id: randomUUID(),
        object: "",
        created: new Date(now()).toISOString(),
        data,
        type: Api.OUTGOING,
        redeliveries
      }),
      3
    ).catch(() => 0)
  }

  const token = (body: string, res: http.ServerResponse) => {
    const form = new URLSearchParams(body)
    if (
      form.get("grant_type") !== "client_credentials" ||
      form.get("client_id") !== clientId ||
      form.get("client_secret") !== clientSecret
    )
      return json(res, 401, { error: "invalid_client" })
    if (form.get("scope") !== scope) return json(res, 400, { error: "invalid_scope" })
    stats.logins++
    const value = randomBytes(16).toString("hex")
    tokens.set(value, now() + faults.tokenLifetimeSeconds * 1000)
    json(res, 200, {
      token_type: "Bearer",
      expires_in: faults.tokenLifetimeSeconds,
      ext_expires_in: faults.tokenLifetimeSeconds,
      access_token: value
    })
  }

  /** Crear CVU: in the entity's CUIT; the same data again reactivates a released CVU. */
  const createCvu = (body: Record<string, unknown>, res: http.ServerResponse) => {
    const client_id = text(body["client_id"])
    const cuit = text(body["cuit"])
    const name = body["name"]
    if (client_id === undefined || cuit === undefined || typeof name !== "string" || name === "")
      return json(res, 400, { mensaje: "client_id, cuit y name son requeridos" })
    if (cuit !== entity.cuit) return json(res, 400, { mensaje: "El CUIT no corresponde a la entidad" })
    const same = [...cvus.values()].find((c) => c.client_id === client_id)
    if (same !== undefined) {
      if (same.open || same.name !== name) return json(res, 400, { mensaje: "El client_id ya existe" })
      same.open = true
      return json(res, 200, { cvu: same.cvu, label: same.alias, reactivated: true })
    }
    serial++
    const cvu = BankAccount.makeCvu(PSP, String(serial).padStart(13, "0"))
    cvus.set(cvu, { client_id, cvu, name, alias: null, aliasAssignedAt: null, open: true })
    json(res, 200, { cvu, label: null, reactivated: false })
  }

  /** Asignar alias, with the refusals BIND documents (Wallet's "Asignar alias", 422). */
  const assignAlias = (body: Record<string, unknown>, res: http.ServerResponse) => {
    const entry = cvus.get(text(body["cvu"]) ?? "")
    const label = body["label"]
    if (entry === undefined || !entry.open || text(body["cuit"]) !== entity.cuit)
      return json(res, 422, { mensaje: "No existe el CVU" })
    if (typeof label !== "string" || !BankAccount.isValidAlias(label) || faults.refuseAliasFormat.has(label))
      return json(res, 422, { mensaje: "El formato del alias es incorrecto" })
    const owner = aliasOwner(label)
    if (owner !== undefined && owner !== entry.cvu)
      return json(res, 422, { mensaje: "El alias ya se encuentra en uso" })
    if (
      faults.refuseAliasChange.has(entry.cvu) ||
      (entry.aliasAssignedAt !== null && now() - entry.aliasAssignedAt < DAY)
    )
      return json(res, 422, { mensaje: "El alias se intenta modificar más de una vez en 24 horas" })
    entry.alias = label
    entry.aliasAssignedAt = now()
    json(res, 200, { cvu: entry.cvu, label, reactivated: false })
  }

  const transfer = (body: Record<string, unknown>, req: http.IncomingMessage, res: http.ServerResponse) => {
    stats.transferRequests++
    const originId = text(body["origin_id"])
    if (originId === undefined || originId === "")
      return json(res, 400, { mensaje: "origin_id es requerido" })
    if (originId.length > Api.ORIGIN_ID_MAX)
      return json(res, 422, { mensaje: "origin_id tiene más de 15 caracteres" })
    // Documented: a repeated origin_id creates nothing and answers the original.
    let entry = transfers.get(originId)
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
      serial++
      entry = {
        id: `1-${entity.cuit}-${String(serial).padStart(15, "0")}-1`,
        origin_id: originId,
        to: cbu !== undefined ? { cbu } : { alias: alias! },
        amount,
        description: text(body["description"]) ?? "Varios",
        concept,
        started: now(),
        status: faults.holdTransfers ? "IN_PROGRESS" : "COMPLETED",
        ended: faults.holdTransfers ? null : now()
      }
      transfers.set(originId, entry)
      notifyOutgoing(entry)
    }
    if (faults.dropTransferAnswers > 0) {
      faults.dropTransferAnswers--
      req.socket.setTimeout(0)
      return // applied; the answer never comes
    }
    json(res, 200, answerOf(entry))
  }

  const header = (req: http.IncomingMessage, name: string) => {
    const v = req.headers[name.toLowerCase()]
    return typeof v === "string" && v !== "" ? v : undefined
  }

  /** Consultar transferencias: parameters in headers, `start` a page from 1, `length` per page. */
  const list = (req: http.IncomingMessage, res: http.ServerResponse) => {
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
        ? [...transfers.values()].filter((t) => t.started >= from && t.started < to).map(answerOf)
        : incoming
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
  const conciliate = (body: Record<string, unknown>, res: http.ServerResponse) => {
    const ids = body["transactions_ids"]
    if (!Array.isArray(ids)) return json(res, 400, { mensaje: "transactions_ids es requerido" })
    stats.conciliations++
    const answer = {
      conciliadas: [] as Array<string>,
      conError: [] as Array<string>,
      noConciliadas: [] as Array<string>
    }
    for (const id of ids.map(String)) {
      const entry = incoming.find((e) => String(e.data["id"]) === id && !e.raw)
      if (entry === undefined) answer.conError.push(id)
      else if (entry.notified) answer.noConciliadas.push(id)
      else {
        answer.conciliadas.push(id)
        entry.notified = true
        if (webhook !== undefined)
          void deliver(webhook, (r) => incomingEvent(entry, now(), r), 5).catch(() => 0)
      }
    }
    json(res, 200, answer)
  }

  const balance = (res: http.ServerResponse) => {
    const cents = (n: number) => Math.round(n * 100)
    const inCents = incoming.reduce((sum, e) => {
      const amount = (e.data as { charge?: { value?: { amount?: unknown } } }).charge?.value?.amount
      return typeof amount === "number" && amount < 1e13 ? sum + cents(amount) : sum
    }, 0)
    const outCents = [...transfers.values()]
      .filter((t) => t.status !== "FAILED")
      .reduce((sum, t) => sum + cents(t.amount), 0)
    json(res, 200, { moneda: "ARS", saldo: (inCents - outCents) / 100, fecha: new Date(now()).toISOString() })
  }

  const lookup = (url: URL, res: http.ServerResponse) => {
    const param = (k: string) => {
      const v = url.searchParams.get(k)
      return v === null || v === "" || v === "null" ? undefined : v
    }
    const number = param("cbuOrCvu")
    const alias = param("alias")
    if (number === undefined && alias === undefined)
      return json(res, 400, { mensaje: "Un campo requerido no fue enviado" })
    const holder = holderOf(number ?? alias!)
    if (holder === undefined)
      return number !== undefined
        ? json(res, 404, { mensaje: "El CBU/CVU no es válido" })
        : json(res, 422, { mensaje: "El alias ingresado no existe" })
    const own = cvus.get(holder.cbu)
    json(res, 200, {
      cuentaId: 1,
      cbucvu: holder.cbu,
      alias: holder.alias ?? null,
      cuitCuil: holder.cuit,
      nombre: own !== undefined ? entity.name : holder.name,
      bancoNombre: own !== undefined ? "BANCO INDUSTRIAL S.A." : "OTRO BANCO",
      activo: true,
      billeteraId: 1,
      nombreCvu: holder.name,
      entidad: own !== undefined ? entity.name : holder.name,
      moneda: "ARS"
    })
  }

  const api = (
    method: string,
    url: URL,
    raw: string,
    req: http.IncomingMessage,
    res: http.ServerResponse
  ) => {
    const path = url.pathname
    const body = (): Record<string, unknown> => {
      const parsed = JSON.parse(raw) as unknown
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {}
    }
    if (method === "POST" && path === Api.paths.createCvu) return createCvu(body(), res)
    if (method === "POST" && path === Api.paths.alias) return assignAlias(body(), res)
    const deletePrefix = `${Api.paths.createCvu}/`
    if (method === "DELETE" && path.startsWith(deletePrefix)) {
      const [cvu = "", cuit = ""] = path.slice(deletePrefix.length).split("/").map(decodeURIComponent)
      const entry = cvus.get(cvu)
      if (entry === undefined || !entry.open || cuit !== entity.cuit)
        return json(res, 404, { mensaje: "CVU inexistente" })
      entry.open = false
      return json(res, 200, { cvu })
    }
    if (method === "GET" && path === Api.paths.account) return lookup(url, res)
    if (method === "GET" && path === Api.paths.transfersList) return list(req, res)
    if (method === "POST" && path === Api.paths.conciliate) return conciliate(body(), res)
    if (method === "GET" && path === Api.paths.balance) return balance(res)
    if (method === "POST" && path === Api.paths.transfers) return transfer(body(), req, res)
    const transferPrefix = Api.paths.transfer("")
    if (method === "GET" && path.startsWith(transferPrefix)) {
      const id = decodeURIComponent(path.slice(transferPrefix.length))
      const entry = transfers.get(id) ?? [...transfers.values()].find((t) => t.id === id)
      return entry === undefined
        ? json(res, 404, { mensaje: "transferencia inexistente" })
        : json(res, 200, answerOf(entry))
    }
    json(res, 404, { mensaje: "ruta inexistente" })
  }

  const server = http.createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const url = new URL(req.url ?? "/", "http://simulator")
      if (req.method === "POST" && url.pathname.endsWith("/oauth2/v2.0/token")) return token(body, res)
      if (req.method === "POST" && url.pathname === controlPath) return control(body, res)
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const expiry = bearer === undefined ? undefined : tokens.get(bearer)
      if (expiry === undefined || expiry <= now()) {
        stats.unauthorized++
        return json(res, 401, { mensaje: "Token de autenticación inválido" })
      }
      if (faults.slowAnswersMillis > 0) await sleep(faults.slowAnswersMillis)
      if (faults.serverErrors > 0) {
        faults.serverErrors--
        return json(res, 500, { mensaje: "error interno" })
      }
      if (faults.malformedAnswers > 0) {
        faults.malformedAnswers--
        res.writeHead(200, { "content-type": "application/json" })
        return res.end('{"id": ')
      }
      try {
        api(req.method ?? "GET", url, body, req, res)
      } catch {
        json(res, 400, { mensaje: "cuerpo invalido" })
      }
    })
  })

  /** Books a transfer in (once per id). */
  const book = (notice: Notice): IncomingEntry => {
    serial++
    const id = notice.id ?? randomBytes(11).toString("hex").toUpperCase().slice(0, 22)
    let entry = incoming.find((e) => String(e.data["id"]) === id)
    if (entry === undefined) {
      entry = { booked: now(), data: incomingData(id, notice, entity.cuit), notified: false, raw: false }
      incoming.push(entry)
    }
    return entry
  }

  const receive: Simulator["receive"] = async (notice) => {
    const entry = book(notice)
    const id = String(entry.data["id"])
    if (faults.dropNotifications > 0) {
      faults.dropNotifications--
      return { id, status: "dropped" }
    }
    entry.notified = true
    if (webhook === undefined) return { id, status: "none" }
    const target = webhook
    const twice = faults.duplicateNotifications > 0
    if (twice) faults.duplicateNotifications--
    if (faults.notificationDelayMillis > 0) await sleep(faults.notificationDelayMillis)
    let status = await deliver(target, (r) => incomingEvent(entry, now(), r), 5)
    if (twice) status = await deliver(target, (r) => incomingEvent(entry, now(), r + 1), 5)
    return { id, status }
  }

  /** The developer's switch (not BIND's API): `{cvu, amount, sender?}` books a transfer in and notifies it. */
  const control = (body: string, res: http.ServerResponse) => {
    const input = (() => {
      try {
        return JSON.parse(body) as { cvu?: unknown; amount?: unknown; sender?: Notice["sender"] }
      } catch {
        return {}
      }
    })()
    if (typeof input.cvu !== "string" || typeof input.amount !== "number" || !(input.amount > 0))
      return json(res, 400, { mensaje: "se espera {cvu, amount}" })
    const sender = input.sender ?? {
      cuit: "20123456786",
      name: "Pagador Simulado",
      cbu: "0170099222000001234561"
    }
    void receive({ cvu: input.cvu, amount: input.amount, sender }).then((sent) => json(res, 200, sent))
  }

  const sendIncomingTransfer: Simulator["sendIncomingTransfer"] = (url, notice, auth, redeliveries = 0) => {
    const entry = book(notice)
    entry.notified = true
    return post(url, incomingEvent(entry, now(), redeliveries), auth)
  }

  return new Promise((resolve) => {
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const host = options.host === undefined || options.host === "0.0.0.0" ? "127.0.0.1" : options.host
      const url = `http://${host}:${port}`
      resolve({
        url,
        tokenUrl: `${url}/sim-tenant/oauth2/v2.0/token`,
        clientId,
        clientSecret,
        scope,
        entity,
        faults,
        stats,
        cvus,
        transfers,
        incoming,
        bookRaw: (data) => void incoming.push({ booked: now(), data, notified: false, raw: true }),
        setWebhook: (target) => {
          webhook = target
        },
        receive,
        addHolder: (holder) => void holders.push(holder),
        revokeTokens: () => tokens.clear(),
        settle: (originId, status) => {
          const entry = transfers.get(originId)
          if (entry === undefined) return
          entry.status = status
          entry.ended = finals.has(status) ? now() : null
          notifyOutgoing(entry)
        },
        passTime: (millis) => {
          offset += millis
        },
        sendIncomingTransfer,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/** `start` on Effect's `Clock`, for the life of the scope. */
export const scoped = (options: Omit<Options, "now"> = {}): Effect.Effect<Simulator, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.clockWith((clock) =>
      Effect.promise(() => start({ ...options, now: () => clock.unsafeCurrentTimeMillis() }))
    ),
    (simulator) => Effect.promise(() => simulator.close())
  )
