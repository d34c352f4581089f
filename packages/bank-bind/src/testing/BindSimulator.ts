/**
 * A simulator of BIND PSP's API as a real `node:http` server, written from the same pages as the
 * adapter (and the same assumptions, `internal/api.ts`): the token endpoint, CVUs with aliases,
 * holder lookup, transfers deduplicated on `origin_id` with their status, and the
 * incoming-transfer webhook. Its fault switches (`faults`) make the cases a real bank has: a
 * transfer applied whose answer never arrives, 5xx, malformed answers, tokens that expire or are
 * revoked, transfers that stay pending and fail late, refused alias changes, slow answers, and
 * notifications of transfers in that never come, come twice or come late (the statement,
 * `GET …/transactions`, lists every transfer in all the same).
 */
import { BankAccount } from "@cobro/core"
import { DateTime, Effect, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Api from "../internal/api.js"
import { makeFaults } from "./faults.js"
import type { CvuEntry, Holder, Options, Simulator, TransferEntry } from "./model.js"
import {
  controlPath,
  deliver,
  type IncomingEntry,
  type Notice,
  noticeData,
  post,
  readBody,
  sleep
} from "./notices.js"

export type { Faults } from "./faults.js"
export { controlPath } from "./notices.js"
export type { IncomingEntry, Notice, WebhookTarget } from "./notices.js"
export type { CvuEntry, Holder, Options, Simulator, TransferEntry } from "./model.js"

/** CVUs issued by the simulator start with this PSP code. */
const PSP = "0000322"

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const start = (options: Options): Promise<Simulator> => {
  const now = options.now
  const clientId = options.clientId ?? "cobro-sim"
  const clientSecret = options.clientSecret ?? "sim-secret"
  const faults = makeFaults()

  let webhook = options.webhook
  const incoming: Array<IncomingEntry> = []
  const stats = { logins: 0, unauthorized: 0, transferRequests: 0 }
  const tokens = new Map<string, number>()
  const cvus = new Map<string, CvuEntry>()
  const transfers = new Map<string, TransferEntry>()
  const holders: Array<Holder> = []
  let serial = 0

  const aliasHolder = (alias: string) => [...cvus.values()].find((c) => c.open && c.alias === alias)
  const entity = options.entity ?? { cuit: "30716595540", name: "Cobro Simulado SA" }
  /** Who holds `address`: a CVU of ours (open, by CVU or alias) is the entity's; else a holder added. */
  const holderOf = (address: string): Holder | undefined => {
    const own = cvus.get(address) ?? aliasHolder(address)
    if (own !== undefined) return own.open ? { ...entity, cbu: own.cvu, alias: own.alias } : undefined
    return holders.find((h) => h.cbu === address || h.alias === address)
  }
  const transferAnswer = (t: TransferEntry) => ({
    id: t.id,
    type: "TRANSFER",
    from: { bank_id: Api.BANK_ID, account_id: "owner" },
    status: t.status,
    details: { origin_id: t.origin_id, to: t.to, value: { currency: "ARS", amount: t.amount } },
    transaction_ids: t.status === "COMPLETED" ? [`${t.id}-tx`] : []
  })

  const token = (body: string, res: http.ServerResponse) => {
    const form = new URLSearchParams(body)
    if (
      form.get("grant_type") !== "client_credentials" ||
      form.get("client_id") !== clientId ||
      form.get("client_secret") !== clientSecret
    ) {
      return json(res, 401, { error: "invalid_client" })
    }
    stats.logins++
    const value = randomBytes(16).toString("hex")
    tokens.set(value, now() + faults.tokenLifetimeSeconds * 1000)
    json(res, 200, { access_token: value, token_type: "Bearer", expires_in: faults.tokenLifetimeSeconds })
  }

  const openCvu = (res: http.ServerResponse) => {
    serial++
    const cvu = BankAccount.makeCvu(PSP, String(serial).padStart(13, "0"))
    const entry: CvuEntry = { id: serial, cvu, alias: `sim.cvu.${serial}`, open: true }
    cvus.set(cvu, entry)
    json(res, 201, { id: entry.id, cvu: entry.cvu, alias: entry.alias })
  }

  const assignAlias = (id: number, body: string, res: http.ServerResponse) => {
    const entry = [...cvus.values()].find((c) => c.id === id && c.open)
    const alias = (JSON.parse(body) as { alias?: unknown }).alias
    if (entry === undefined) return json(res, 404, { mensaje: "CVU inexistente" })
    if (typeof alias !== "string" || alias.length > 20) return json(res, 400, { mensaje: "alias invalido" })
    const holder = aliasHolder(alias)
    if (holder !== undefined && holder !== entry) return json(res, 409, { mensaje: "alias en uso" })
    if (faults.refuseAliasChange.has(entry.cvu))
      return json(res, 400, { mensaje: "cambio de alias no permitido" })
    entry.alias = alias
    json(res, 200, { id: entry.id, cvu: entry.cvu, alias })
  }

  const transfer = (body: string, req: http.IncomingMessage, res: http.ServerResponse) => {
    stats.transferRequests++
    const request = JSON.parse(body) as Partial<Api.TransferRequest>
    const originId = request.origin_id
    if (typeof originId !== "string" || originId.length === 0 || originId.length > 15) {
      return json(res, 400, { mensaje: "origin_id invalido" })
    }
    // Documented: a repeated origin_id creates nothing and answers the original.
    let entry = transfers.get(originId)
    if (entry === undefined) {
      const to = request.to ?? {}
      const target = "cbu" in to ? to.cbu : "alias" in to ? to.alias : undefined
      const amount = request.value?.amount
      if (target === undefined || typeof amount !== "number" || !(amount > 0)) {
        return json(res, 400, { mensaje: "transferencia invalida" })
      }
      serial++
      entry = {
        id: `bind-tr-${serial}`,
        origin_id: originId,
        to,
        amount,
        status: faults.holdTransfers ? "PENDING" : "COMPLETED"
      }
      transfers.set(originId, entry)
    }
    if (faults.dropTransferAnswers > 0) {
      faults.dropTransferAnswers--
      req.socket.setTimeout(0)
      return // applied; the answer never comes
    }
    json(res, 200, transferAnswer(entry))
  }

  /** The statement: transfers in booked in [obp_from_date, obp_to_date), oldest first, paged. */
  const movements = (url: URL, res: http.ServerResponse) => {
    const from = Date.parse(url.searchParams.get("obp_from_date") ?? "")
    const to = Date.parse(url.searchParams.get("obp_to_date") ?? "")
    const limit = Number(url.searchParams.get("obp_limit") ?? "50")
    const offset = Number(url.searchParams.get("obp_offset") ?? "0")
    if (Number.isNaN(from) || Number.isNaN(to) || !(limit > 0) || !(offset >= 0))
      return json(res, 400, { mensaje: "parametros invalidos" })
    const page = incoming
      .filter((e) => e.booked >= from && e.booked < to)
      .slice(offset, offset + limit)
      .map((e) => ({
        ...e.data,
        direction: "CREDIT",
        created: DateTime.formatIso(DateTime.unsafeMake(e.booked))
      }))
    json(res, 200, { transactions: page })
  }

  const api = (
    method: string,
    url: URL,
    body: string,
    req: http.IncomingMessage,
    res: http.ServerResponse
  ) => {
    const path = url.pathname
    if (method === "POST" && path === Api.paths.cvus) return openCvu(res)
    if (path.startsWith(`${Api.paths.cvus}/`)) {
      const entry = cvus.get(decodeURIComponent(path.slice(Api.paths.cvus.length + 1)))
      if (entry === undefined || !entry.open) return json(res, 404, { mensaje: "CVU inexistente" })
      if (method === "GET") return json(res, 200, { id: entry.id, cvu: entry.cvu, alias: entry.alias })
      if (method === "DELETE") {
        entry.open = false
        return json(res, 200, {})
      }
    }
    const aliasPrefix = Api.paths.assignAlias(0).slice(0, -1)
    if (method === "PATCH" && path.startsWith(aliasPrefix))
      return assignAlias(Number(path.slice(aliasPrefix.length)), body, res)
    const counterpartyPrefix = Api.paths.counterparty("")
    if (method === "GET" && path.startsWith(counterpartyPrefix)) {
      const address = decodeURIComponent(path.slice(counterpartyPrefix.length))
      const holder = holderOf(address)
      if (holder === undefined) return json(res, 404, { mensaje: "cuenta inexistente" })
      return json(res, 200, {
        id: holder.cuit,
        name: holder.name,
        id_type: "CUIT_CUIL",
        account_routing: { scheme: "CBU", address: holder.cbu }
      })
    }
    if (path === Api.paths.movements && method === "GET") return movements(url, res)
    if (path === Api.paths.transfers && method === "POST") return transfer(body, req, res)
    if (path === Api.paths.transfers && method === "GET") {
      const entry = transfers.get(url.searchParams.get("origin_id") ?? "")
      return entry === undefined
        ? json(res, 404, { mensaje: "transferencia inexistente" })
        : json(res, 200, transferAnswer(entry))
    }
    json(res, 404, { mensaje: "ruta inexistente" })
  }

  const server = http.createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const url = new URL(req.url ?? "/", "http://simulator")
      if (req.method === "POST" && url.pathname === "/oauth2/token") return token(body, res)
      if (req.method === "POST" && url.pathname === controlPath) return control(body, res)
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const expiry = bearer === undefined ? undefined : tokens.get(bearer)
      if (expiry === undefined || expiry <= now()) {
        stats.unauthorized++
        return json(res, 401, { mensaje: "token invalido o vencido" })
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

  /** Books a transfer in (once per id) and answers its notification's body. */
  const book = (notice: Notice) => {
    serial++
    const id = notice.id ?? `coelsa-${serial}`
    let entry = incoming.find((e) => e.data.id === id)
    if (entry === undefined) {
      entry = { booked: now(), data: noticeData(id, notice) }
      incoming.push(entry)
    }
    return {
      id: randomBytes(16).toString("hex"),
      object: "transfer",
      created: DateTime.formatIso(DateTime.unsafeMake(now())),
      data: entry.data
    }
  }

  const receive: Simulator["receive"] = async (notice) => {
    const body = book(notice)
    const id = body.data.id
    if (faults.dropNotifications > 0) {
      faults.dropNotifications--
      return { id, status: "dropped" }
    }
    if (webhook === undefined) return { id, status: "none" }
    const target = webhook
    const twice = faults.duplicateNotifications > 0
    if (twice) faults.duplicateNotifications--
    if (faults.notificationDelayMillis > 0) await sleep(faults.notificationDelayMillis)
    let status = await deliver(target, body, 5)
    if (twice) status = await deliver(target, { ...body, id: randomBytes(16).toString("hex") }, 5)
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

  const sendIncomingTransfer: Simulator["sendIncomingTransfer"] = (url, notice, auth) =>
    post(url, book(notice), auth)

  return new Promise((resolve) => {
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const host = options.host === undefined || options.host === "0.0.0.0" ? "127.0.0.1" : options.host
      const url = `http://${host}:${port}`
      resolve({
        url,
        tokenUrl: `${url}/oauth2/token`,
        clientId,
        clientSecret,
        faults,
        stats,
        cvus,
        transfers,
        incoming,
        setWebhook: (target) => {
          webhook = target
        },
        receive,
        addHolder: (holder) => void holders.push(holder),
        revokeTokens: () => tokens.clear(),
        settle: (originId, status) => {
          const entry = transfers.get(originId)
          if (entry !== undefined) entry.status = status
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
