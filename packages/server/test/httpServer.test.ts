/**
 * The reference server's node:http server leaves no `close` listener on a response once it has
 * closed: platform-node's handler adds one that holds the request's fiber (`NodeHttp.dropCloseListeners`).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Server } from "../src/index.js"

describe("Server.createHttpServer", () => {
  it("a response keeps no close listener once closed, and every listener still heard it", async () => {
    const server = Server.createHttpServer()
    const responses: Array<Http.ServerResponse> = []
    let heard = 0
    // As platform-node's handler does: a listener added after the server's own.
    server.on("request", (_request, response: Http.ServerResponse) => {
      responses.push(response)
      response.on("close", () => heard++)
      response.end("routed")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      for (let i = 0; i < 3; i++) {
        const answer = await fetch(`http://127.0.0.1:${port}/`)
        expect(await answer.text()).toBe("routed")
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(heard).toBe(3)
      expect(responses.map((response) => response.listenerCount("close"))).toEqual([0, 0, 0])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
