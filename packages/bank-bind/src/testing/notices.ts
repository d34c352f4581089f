/**
 * The simulator's side of "Aviso de transferencia entrante": the body of a transfer in, and its
 * delivery to the receiver BIND is configured with (retried until it answers 200).
 */
import type * as http from "node:http"
import * as Api from "../internal/api.js"

/** A transfer in the simulator notifies. */
export interface Notice {
  /** Our CVU credited. */
  readonly cvu: string
  /** Major units, e.g. 1500.5. */
  readonly amount: number
  readonly sender: { readonly cuit: string; readonly name: string; readonly cbu: string }
  /** The transfer's Coelsa id; a new one by default. Reuse it to send a duplicate. */
  readonly id?: string
}

/** Where the simulator posts "Aviso de transferencia entrante" (the URL configured with BIND). */
export interface WebhookTarget {
  readonly url: string
  /** The shared-secret header and its value (see `BindConfig.webhookSecret`). */
  readonly header?: string
  readonly secret?: string
}

/** A transfer in, as booked in the statement. */
export interface IncomingEntry {
  /** Epoch millis of the booking. */
  readonly booked: number
  readonly data: ReturnType<typeof noticeData>
}

export const noticeData = (id: string, notice: Notice) => ({
  id,
  type: "TRANSFER" as const,
  from: { bank_id: Api.BANK_ID, account_id: "owner" },
  counterparty: {
    id: notice.sender.cuit,
    name: notice.sender.name,
    id_type: "CUIT_CUIL",
    bank_routing: { scheme: "UNAVAILABLE", address: "", code: "" },
    account_routing: { scheme: "CBU" as const, address: notice.sender.cbu }
  },
  value: { currency: "ARS" as const, amount: notice.amount },
  to: { cvu: notice.cvu }
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

/** Posts until the receiver answers 200 (BIND retries a notification), at most `attempts`. */
export const deliver = async (target: WebhookTarget, body: unknown, attempts: number) => {
  let status = 0
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(100 * attempt)
    status = await post(target.url, body, target).catch(() => 0)
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
