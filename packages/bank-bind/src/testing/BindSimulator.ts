/**
 * A simulator of BIND PSP's API as a real `node:http` server, written from the same pages as the
 * adapter (and the same assumptions, `internal/api.ts`): the token endpoint, CVUs with aliases,
 * holder lookup, transfers deduplicated on `origin_id` with their status, and the
 * incoming-transfer webhook. Its fault switches (`faults`) make the cases a real bank has: a
 * transfer applied whose answer never arrives, 5xx, malformed answers, tokens that expire or are
 * revoked, transfers that stay pending and fail late, refused alias changes.
 */
import { BankAccount } from "@cobro/core"
import { DateTime, Effect, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Api from "../internal/api.js"

export interface Faults {
  /** The next N transfer requests are applied, then never answered (the client times out). */
  dropTransferAnswers: number
  /** The next N authenticated calls answer 500 without acting. */
  serverErrors: number
  /** The next N authenticated calls answer 200 with a body that is not JSON, without acting. */
  malformedAnswers: number
  /** Lifetime of the tokens issued from now on. */
  tokenLifetimeSeconds: number
  /** New transfers stay `PENDING` until `settle`. */
  holdTransfers: boolean
  /** CVUs whose alias BIND refuses to change. */
  readonly refuseAliasChange: Set<string>
}

export interface Holder {
  readonly cuit: string
  readonly name: string
  /** The CBU/CVU; the holder is found by it or by `alias`. */
  readonly cbu: string
  readonly alias?: string
}

export interface CvuEntry {
  readonly id: number
  readonly cvu: string
  alias: string
  open: boolean
}

export interface TransferEntry {
  readonly id: string
  readonly origin_id: string
  readonly to: { readonly cbu?: string; readonly alias?: string }
  readonly amount: number
  status: Api.TransferStatusCode
}

export interface Notice {
  /** Our CVU credited. */
  readonly cvu: string
  /** Major units, e.g. 1500.5. */
  readonly amount: number
  readonly sender: Holder
  /** The transfer's Coelsa id; a new one by default. Reuse it to send a duplicate. */
  readonly id?: string
}

export interface Simulator {
  /** The API's base URL (`COBRO_BIND_BASE_URL`). */
  readonly url: string
  /** The token endpoint (`COBRO_BIND_TOKEN_URL`). */
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly faults: Faults
  readonly stats: { logins: number; unauthorized: number; transferRequests: number }
  readonly cvus: ReadonlyMap<string, CvuEntry>
  /** Transfers by `origin_id`. */
  readonly transfers: ReadonlyMap<string, TransferEntry>
  readonly addHolder: (holder: Holder) => void
  /** Every token issued so far is refused from now on (401). */
  readonly revokeTokens: () => void
  /** Finishes a transfer that `holdTransfers` kept pending. */
  readonly settle: (originId: string, status: "COMPLETED" | "FAILED") => void
  /** POSTs "Aviso de transferencia entrante" to `url`; resolves to the receiver's status. */
  readonly sendIncomingTransfer: (
    url: string,
    notice: Notice,
    auth?: { readonly header: string; readonly secret: string }
  ) => Promise<number>
  readonly close: () => Promise<void>
}

/** CVUs issued by the simulator start with this PSP code. */
const PSP = "0000322"

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const readBody = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export interface Options {
  readonly clientId?: string
  readonly clientSecret?: string
  /** The simulator's clock (token expiry, notification dates), epoch millis. */
  readonly now: () => number
}

export const start = (options: Options): Promise<Simulator> => {
  const now = options.now
  const clientId = options.clientId ?? "cobro-sim"
  const clientSecret = options.clientSecret ?? "sim-secret"
  const faults: Faults = {
    dropTransferAnswers: 0,
    serverErrors: 0,
    malformedAnswers: 0,
    tokenLifetimeSeconds: 3900,
    holdTransfers: false,
    refuseAliasChange: new Set()
  }
  const stats = { logins: 0, unauthorized: 0, transferRequests: 0 }
  const tokens = new Map<string, number>()
  const cvus = new Map<string, CvuEntry>()
  const transfers = new Map<string, TransferEntry>()
  const holders: Array<Holder> = []
  let serial = 0

  const aliasHolder = (alias: string) => [...cvus.values()].find((c) => c.open && c.alias === alias)
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
      const holder = holders.find((h) => h.cbu === address || h.alias === address)
      if (holder === undefined) return json(res, 404, { mensaje: "cuenta inexistente" })
      return json(res, 200, {
        id: holder.cuit,
        name: holder.name,
        id_type: "CUIT_CUIL",
        account_routing: { scheme: "CBU", address: holder.cbu }
      })
    }
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
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? "/", "http://simulator")
      if (req.method === "POST" && url.pathname === "/oauth2/token") return token(body, res)
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const expiry = bearer === undefined ? undefined : tokens.get(bearer)
      if (expiry === undefined || expiry <= now()) {
        stats.unauthorized++
        return json(res, 401, { mensaje: "token invalido o vencido" })
      }
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

  const sendIncomingTransfer: Simulator["sendIncomingTransfer"] = async (url, notice, auth) => {
    serial++
    const body = {
      id: randomBytes(16).toString("hex"),
      object: "transfer",
      created: DateTime.formatIso(DateTime.unsafeMake(now())),
      data: {
        id: notice.id ?? `coelsa-${serial}`,
        type: "TRANSFER",
        from: { bank_id: Api.BANK_ID, account_id: "owner" },
        counterparty: {
          id: notice.sender.cuit,
          name: notice.sender.name,
          id_type: "CUIT_CUIL",
          bank_routing: { scheme: "UNAVAILABLE", address: "", code: "" },
          account_routing: { scheme: "CBU", address: notice.sender.cbu }
        },
        value: { currency: "ARS", amount: notice.amount },
        to: { cvu: notice.cvu }
      }
    }
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (auth !== undefined) headers[auth.header] = auth.secret
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) })
    await response.arrayBuffer()
    return response.status
  }

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const url = `http://127.0.0.1:${port}`
      resolve({
        url,
        tokenUrl: `${url}/oauth2/token`,
        clientId,
        clientSecret,
        faults,
        stats,
        cvus,
        transfers,
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
