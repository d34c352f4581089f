/**
 * A host application with its own node:http server that mounts the cobro API under
 * `/api/cobro`. The host keeps its own routes (here `GET /health`); every request under the
 * prefix goes to cobro, with the prefix stripped.
 *
 * The host also calls the engine directly: at start it creates a demo merchant (in a real host,
 * an operator or the host's sign-up flow would), so the API has someone to take payments for.
 * Engine and HTTP layer share one in-memory engine instance.
 */
import { Accounts } from "@cobro/core"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { NodeHttp } from "@cobro/http/node"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** Where the cobro API is mounted. */
export const prefix = "/api/cobro"

/** The demo merchant's credentials: exchange them at POST /api/cobro/users/{user_id}/tokens. */
export interface DemoMerchant {
  readonly user_id: string
  readonly client_id: string
  readonly client_secret: string
}

export interface Host {
  /** `http://localhost:<port>` */
  readonly url: string
  readonly port: number
  readonly merchant: DemoMerchant
  /** Stops accepting requests and releases the engine. */
  readonly close: () => Promise<void>
}

const seedDemoMerchant = Effect.gen(function* () {
  const accounts = yield* Accounts.Accounts
  const request = yield* Accounts.decodeCreateUserRequest({
    user_id: "demo_merchant",
    name: "Tienda Demo",
    email: "demo@tienda.example",
    cuit: "30-71234567-1",
    account_status: "ACTIVE"
  })
  const created = yield* accounts.createUser(request)
  return { user_id: created.user.user_id, client_id: created.client_id, client_secret: created.client_secret }
})

const isUnder = (path: string, base: string) => path === base || path.startsWith(`${base}/`)

/**
 * Starts the host on `port` (0: any free port). The engine is built once the server listens: the
 * payment page's address (`payment_url`, given to payers) is under the host's own URL and prefix,
 * which are only known then.
 */
export const start = async (port: number): Promise<Host> => {
  let cobro: Awaited<ReturnType<typeof NodeHttp.toNodeListener>> | undefined = undefined
  const server = Http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] ?? "/"
    if (isUnder(path, prefix)) {
      if (cobro !== undefined) return cobro.listener(request, response)
      response.writeHead(503, { "content-type": "text/plain; charset=utf-8" }).end("starting")
      return
    }
    if (request.method === "GET" && path === "/health") {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("ok")
      return
    }
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found")
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const actual = (server.address() as AddressInfo).port
  const url = `http://localhost:${actual}`

  const engine = ManagedRuntime.make(SandboxEngine.layerMemory({ paymentPageBaseUrl: `${url}${prefix}` }))
  const merchant = await engine.runPromise(seedDemoMerchant)
  cobro = await NodeHttp.toNodeListener(Layer.succeedContext((await engine.runtime()).context), {
    prefix
  })
  const mounted = cobro

  const close = async () => {
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error === undefined ? resolve() : reject(error)))
      server.closeIdleConnections()
    })
    await mounted.dispose()
    await engine.dispose()
  }
  return { url, port: actual, merchant, close }
}
