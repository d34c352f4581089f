/** Serving a node:http server on the loopback interface, and stopping it. */
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"

export const HOST = "127.0.0.1"

/** Starts `server` on `port` (0: any free port) and returns its `http://127.0.0.1:<port>`. */
export const listen = async (server: Http.Server, port: number): Promise<string> => {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, HOST, () => {
      server.off("error", reject)
      resolve()
    })
  })
  return `http://${HOST}:${(server.address() as AddressInfo).port}`
}

/** Stops accepting connections and closes the idle ones (browsers keep them open). */
export const close = (server: Http.Server): Promise<void> =>
  new Promise((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)))
    server.closeIdleConnections()
  })
