/**
 * What node's HTTP parser refuses before routing (a request line or headers over 16 KiB, a
 * malformed request) is answered by the reference server with the error envelope over the
 * socket, not node's bare status line with an empty body.
 */
import { describe, expect, it } from "@effect/vitest"
import * as net from "node:net"
import type { AddressInfo } from "node:net"
import { Server } from "../src/index.js"

/** Sends `bytes` on a raw socket to a fresh `Server.createHttpServer()`; the whole answer. */
const exchange = async (bytes: string): Promise<string> => {
  const server = Server.createHttpServer()
  server.on("request", (_request, response) => response.end("routed"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const { port } = server.address() as AddressInfo
    return await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1")
      let answer = ""
      socket.on("data", (chunk) => (answer += chunk.toString()))
      socket.on("end", () => resolve(answer))
      socket.on("error", reject)
      socket.write(bytes)
    })
  } finally {
    server.close()
  }
}

const parse = (answer: string) => {
  const [head = "", body = ""] = answer.split("\r\n\r\n")
  return { statusLine: head.split("\r\n")[0], head: head.toLowerCase(), body: JSON.parse(body) as unknown }
}

describe("requests node's parser refuses", () => {
  it("a request line over 16 KiB is 431 request.headers.too_large in the envelope", async () => {
    const answer = parse(
      await exchange(`GET /payments/?user_id=${"x".repeat(100_000)} HTTP/1.1\r\nhost: x\r\n\r\n`)
    )
    expect(answer.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large")
    expect(answer.head).toContain("content-type: application/json")
    expect(answer.head).toContain("connection: close")
    expect(answer.body).toEqual({
      message: "request.headers.too_large",
      error: true,
      code: 431,
      data: { detail: expect.any(String) },
      request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/)
    })
    // The same new id in the header, for support to find the answer by.
    expect(answer.head).toContain(`request-id: ${(answer.body as { request_id: string }).request_id}`)
  })

  it("headers over 16 KiB are 431 as well", async () => {
    const answer = parse(await exchange(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${"y".repeat(20_000)}\r\n\r\n`))
    expect(answer.body).toMatchObject({ message: "request.headers.too_large", code: 431 })
  })

  it("a malformed request (a NUL in a header value) is 400 request.malformed in the envelope", async () => {
    const answer = parse(await exchange("GET / HTTP/1.1\r\nhost: x\r\nidempotency-key: a\u0000b\r\n\r\n"))
    expect(answer.statusLine).toBe("HTTP/1.1 400 Bad Request")
    expect(answer.body).toEqual({
      message: "request.malformed",
      error: true,
      code: 400,
      data: { detail: expect.any(String) },
      request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/)
    })
  })
})
