/**
 * A scripted HTTP server on a random loopback port: each test says how it answers, and reads back
 * what it received (method, path, headers, body), to see what the client sent over real HTTP.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export type Answer = (request: Received, res: http.ServerResponse, index: number) => void

export interface Scripted {
  readonly base: string
  readonly received: Array<Received>
  answer: Answer
  readonly close: () => Promise<void>
}

export const json = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {}
) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/** An error in cobro's envelope. */
export const envelopeError = (res: http.ServerResponse, status: number, message: string, data: object = {}) =>
  json(res, status, {
    message,
    error: true,
    code: status,
    data: { detail: `${message} (scripted)`, ...data }
  })

export const startScripted = async (): Promise<Scripted> => {
  const received: Array<Received> = []
  const sockets = new Set<import("node:net").Socket>()
  const scripted = {
    received,
    answer: ((_, res) => json(res, 404, {})) as Answer
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8")
      }
      received.push(request)
      scripted.answer(request, res, received.length - 1)
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(scripted, {
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  })
}

/** The token answer of POST /users/{id}/tokens. */
export const tokenAnswer = (res: http.ServerResponse, token: string, expiresIn = 3600) =>
  json(res, 200, {
    message: "token.created",
    error: false,
    code: 200,
    data: {
      token,
      token_type: "Bearer",
      expires_in: expiresIn,
      expiration_timestamp: "2030-01-01T00:00:00.000Z"
    }
  })

export const credentials = { userId: "shop", clientId: "ci_1", clientSecret: "cs_1" }

/** No waiting between retries in tests: the jitter draws 0. */
export const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 }, random: () => 0 } as const
