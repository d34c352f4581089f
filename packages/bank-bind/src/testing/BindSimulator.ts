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
import { Effect, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Api from "../internal/api.js"
import { assignAlias, createCvu, lookup, releaseCvu } from "./accountRoutes.js"
import { makeFaults } from "./faults.js"
import type { Options, Simulator } from "./model.js"
import {
  controlPath,
  deliver,
  type IncomingEntry,
  incomingData,
  incomingEvent,
  type Notice,
  post,
  readBody,
  sleep
} from "./notices.js"
import { finals, json, notifyOutgoing, type State } from "./state.js"
import { balance, conciliate, list, query, transfer } from "./transferRoutes.js"

export type { Faults } from "./faults.js"
export { controlPath } from "./notices.js"
export type { IncomingEntry, Notice, WebhookTarget } from "./notices.js"
export type { CvuEntry, Holder, Options, Simulator, TransferEntry } from "./model.js"

export const start = (options: Options): Promise<Simulator> => {
  let offset = 0
  const clientId = options.clientId ?? "cobro-sim"
  const clientSecret = options.clientSecret ?? "sim-secret"
  const scope = options.scope ?? Api.environments.staging.scope
  const st: State = {
    now: () => options.now() + offset,
    entity: options.entity ?? { cuit: "30716595540", name: "Cobro Simulado SA" },
    faults: makeFaults(),
    stats: { logins: 0, unauthorized: 0, transferRequests: 0, conciliations: 0 },
    tokens: new Map(),
    cvus: new Map(),
    transfers: new Map(),
    holders: [],
    incoming: [],
    webhook: options.webhook,
    serial: 0
  }
  const { now, entity, faults, stats, tokens, cvus, transfers, holders, incoming } = st

  const token = (body: string, res: http.ServerResponse) => {
    const form = new URLSearchParams(body)
    if (
      form.get("grant_type") !== "client_credentials" ||
      form.get("client_id") !== clientId ||
      form.get("client_secret") !== clientSecret
    )
      return json(res, 401, { error: "invalid_client" })
    if (form.get("scope") !== scope) return json(res, 400, { error: "invalid_scope" })
    st.stats.logins++
    const value = randomBytes(16).toString("hex")
    st.tokens.set(value, st.now() + st.faults.tokenLifetimeSeconds * 1000)
    json(res, 200, {
      token_type: "Bearer",
      expires_in: st.faults.tokenLifetimeSeconds,
      ext_expires_in: st.faults.tokenLifetimeSeconds,
      access_token: value
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
    if (method === "POST" && path === Api.paths.createCvu) return createCvu(st, body(), res)
    if (method === "POST" && path === Api.paths.alias) return assignAlias(st, body(), res)
    const deletePrefix = `${Api.paths.createCvu}/`
    if (method === "DELETE" && path.startsWith(deletePrefix))
      return releaseCvu(st, path.slice(deletePrefix.length), res)
    if (method === "GET" && path === Api.paths.account) return lookup(st, url, res)
    if (method === "GET" && path === Api.paths.transfersList) return list(st, req, res)
    if (method === "POST" && path === Api.paths.conciliate) return conciliate(st, body(), res)
    if (method === "GET" && path === Api.paths.balance) return balance(st, res)
    if (method === "POST" && path === Api.paths.transfers) return transfer(st, body(), req, res)
    const transferPrefix = Api.paths.transfer("")
    if (method === "GET" && path.startsWith(transferPrefix))
      return query(st, decodeURIComponent(path.slice(transferPrefix.length)), res)
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
    st.serial++
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
    if (st.webhook === undefined) return { id, status: "none" }
    const target = st.webhook
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
          st.webhook = target
        },
        receive,
        addHolder: (holder) => void holders.push(holder),
        revokeTokens: () => tokens.clear(),
        settle: (originId, status) => {
          const entry = transfers.get(originId)
          if (entry === undefined) return
          entry.status = status
          entry.ended = finals.has(status) ? now() : null
          notifyOutgoing(st, entry)
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
