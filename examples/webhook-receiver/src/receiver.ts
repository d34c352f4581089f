/**
 * A host application's webhook endpoint, written as SPEC recommends:
 *
 * 1. verify the signature on the raw body (`Receiver.verifySync` from `@cobro/webhooks`: both
 *    header styles, 5-minute timestamp tolerance, constant-time comparison) — 401 otherwise;
 * 2. answer 200 at once (cobro gives up on an attempt after 3 seconds);
 * 3. then, outside the request, confirm what the event says by reading the resource from the API
 *    (the payload only carries ids), and act on the confirmed state — once per event id, since a
 *    delivery may arrive more than once.
 *
 * Plain `node:http` and `fetch`, no framework: the same steps fit Express, Fastify or a worker.
 */
import { Receiver } from "@cobro/webhooks"
import { Either } from "effect"
import * as http from "node:http"

export interface ReceiverOptions {
  /** The merchant's client secret (webhooks are signed with it). */
  readonly secret: string
  /** Where the cobro API is, e.g. `https://api.example.com`; GET /payments/{id} confirms payments. */
  readonly apiBaseUrl: string
  /** A bearer token for the API (POST /users/{id}/tokens). */
  readonly apiToken: string
  /** What the host does with a payment state it has confirmed. */
  readonly onConfirmed: (confirmation: Confirmation) => void | Promise<void>
  /** Called when an event could not be processed after it was accepted (log, alert, retry later). */
  readonly onError?: (eventId: string, error: unknown) => void
  /** The current time in milliseconds (for tests); `Date.now` by default. */
  readonly now?: () => number
}

export interface Confirmation {
  readonly eventId: string
  readonly paymentId: string
  /** As read from GET /payments/{id}, not as the event claimed. */
  readonly payment_status: string
}

const MAX_BODY_BYTES = 64 * 1024

const readBody = (req: http.IncomingMessage): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const reply = (res: http.ServerResponse, status: number, body: Record<string, unknown>) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** The endpoint as a `node:http` request listener (mount it on any path). */
export const makeHandler = (options: ReceiverOptions): http.RequestListener => {
  const now = options.now ?? Date.now
  const seen = new Set<string>()

  /** After the 200: read the payment from the API and hand its confirmed state to the host. */
  const confirm = async (eventId: string, payload: Record<string, unknown>) => {
    const paymentId = payload["paymentId"]
    if (typeof paymentId !== "string") return // other events: customers, accounts, splits…
    const response = await fetch(`${options.apiBaseUrl}/payments/${encodeURIComponent(paymentId)}`, {
      headers: { authorization: `Bearer ${options.apiToken}` },
      signal: AbortSignal.timeout(10_000)
    })
    if (!response.ok) throw new Error(`GET /payments/${paymentId} answered ${response.status}`)
    const envelope = (await response.json()) as { data?: { id?: unknown; payment_status?: unknown } }
    const status = envelope.data?.payment_status
    if (envelope.data?.id !== paymentId || typeof status !== "string") {
      throw new Error(`GET /payments/${paymentId} did not return that payment`)
    }
    await options.onConfirmed({ eventId, paymentId, payment_status: status })
  }

  return (req, res) => {
    if (req.method !== "POST") return reply(res, 405, { error: "use POST" })
    readBody(req).then(
      (body) => {
        if (body === undefined) return reply(res, 413, { error: "body too large" })
        const verified = Receiver.verifySync({
          secret: options.secret,
          headers: req.headers,
          body,
          now: now()
        })
        if (Either.isLeft(verified)) return reply(res, 401, { error: verified.left.reason })
        let payload: unknown
        try {
          payload = JSON.parse(body.toString("utf8"))
        } catch {
          return reply(res, 400, { error: "body is not JSON" })
        }
        // Answer first: everything else happens after the response.
        reply(res, 200, { received: true })
        const eventId = verified.right.id ?? ""
        if (seen.has(eventId)) return // a retry or a replay of an event already handled
        seen.add(eventId)
        confirm(eventId, payload as Record<string, unknown>).catch((error: unknown) => {
          seen.delete(eventId) // let a later delivery of the same event try again
          options.onError?.(eventId, error)
        })
      },
      () => reply(res, 400, { error: "could not read the body" })
    )
  }
}

/** A server with the endpoint at every path. */
export const createReceiver = (options: ReceiverOptions): http.Server =>
  http.createServer(makeHandler(options))
