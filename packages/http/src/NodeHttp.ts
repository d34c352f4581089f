/**
 * cobro on node:http (and Express), the `@cobro/http/node` entry point. It is apart from the main
 * entry because it needs `@effect/platform-node` (and with it `@effect/cluster`, `@effect/rpc` and
 * `@effect/workflow`), an optional peer dependency that a host of `CobroHttp.layer` or
 * `CobroHttp.toWebHandler` never loads:
 *
 * - `toNodeListener(engine, settings)`: a `(req, res)` listener for node:http or Express;
 * - `onClientError`: the `clientError` listener that answers node's parser refusals with the
 *   error envelope;
 * - `dropCloseListeners`: for a host serving the API on its own node:http server through
 *   `CobroHttp.layer`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, ManagedRuntime } from "effect"
import type * as Http from "node:http"
import { type EngineServices, layer } from "./CobroHttp.js"
import type { Settings } from "./HttpConfig.js"
import * as ClientError from "./internal/clientError.js"

/**
 * A `clientError` listener for a node:http server (`server.on("clientError", onClientError)`):
 * what node's HTTP parser refuses before routing (headers over 16 KiB: 431, a malformed request:
 * 400, a request too slow: 408) is answered with the error envelope instead of a bare status line.
 */
export const onClientError = ClientError.onClientError

/**
 * Takes every `close` listener off node's response once it has closed (it closes once). Call it
 * as a request arrives, before the API's handler sees the response: `toNodeListener` does, and
 * the reference server for its own node:http server.
 *
 * platform-node's handler listens for `close` to interrupt the request's fiber when the client
 * goes away first, and leaves that listener on the response, holding the finished fiber. A
 * response V8 has moved to its old generation then keeps the request's young objects alive
 * through every scavenge until the next full collection (docs/decisions/0055-finished-requests-unreachable.md, "Nothing keeps a
 * finished request reachable").
 */
export const dropCloseListeners = (response: Http.ServerResponse): void => {
  response.once("close", () => response.removeAllListeners("close"))
}

/**
 * A node:http (or Express) request listener over `engine`. `prefix` is stripped from the URL
 * first, so the API can be mounted under a path such as `/api/cobro` in a host's own server.
 */
export const toNodeListener = async <E>(
  engine: Layer.Layer<EngineServices, E>,
  settings: Partial<Settings> & { readonly prefix?: string } = {}
): Promise<{
  readonly listener: (request: Http.IncomingMessage, response: Http.ServerResponse) => void
  readonly dispose: () => Promise<void>
}> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, HttpServer.layerContext).pipe(
      Layer.provideMerge(layer(settings).pipe(Layer.provide(engine)))
    )
  )
  const handle = await runtime.runPromise(
    Effect.flatMap(HttpApiBuilder.httpApp, (app) => NodeHttpServer.makeHandler(app))
  )
  const prefix = settings.prefix?.replace(/\/+$/, "") ?? ""
  const listener = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    // Only a whole path segment is the prefix: `/api/cobro/x` and `/api/cobro?x`, not `/api/cobrox`.
    if (prefix !== "" && request.url !== undefined && request.url.startsWith(prefix)) {
      const rest = request.url.slice(prefix.length)
      if (rest === "" || rest.startsWith("?")) request.url = `/${rest}`
      else if (rest.startsWith("/")) request.url = rest
    }
    dropCloseListeners(response)
    handle(request, response)
  }
  return { listener, dispose: () => runtime.dispose() }
}
