/**
 * `WebhookTransport` over `node:http`/`node:https`, with the SSRF guard.
 *
 * Before anything else the URL goes through `WebhookDestination.refusal`, the policy the engine
 * applied when the URL was registered: in production, https only, not `localhost`, no non-public
 * IP literal. Those refusals (`forbidden`, `invalid_url`) come from the URL alone and never pass
 * later. Then, outside sandbox mode, only public addresses are contacted (`IpAddress`), and the
 * check is made on the address the socket is about to connect to: a hostname is resolved by a
 * `lookup` hook that refuses it (`refused`) when any resolved address is not public. So a name that resolved to a public address when the URL was registered and now
 * resolves to 127.0.0.1 (DNS rebinding) is refused too. Redirects are never followed (Node's
 * client does not follow them, and the 3xx is reported as it is). The timeout covers everything
 * up to the response headers: resolution, connection, TLS, request and the receiver's answer.
 * Response bodies are read and dropped (at most `maxResponseBytes`) so sockets can be reused.
 *
 * Sandbox mode allows every address: the point is to deliver to a receiver on localhost.
 */
import { IpAddress, Spans, WebhookDestination } from "@cobro/core"
import { Duration, Effect, Layer, Option, type Scope } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"
import * as tls from "node:tls"
import {
  TransportError,
  WebhookTransport,
  type WebhookRequest,
  type WebhookResponse
} from "./WebhookTransport.js"

export type Mode = WebhookDestination.Mode

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Resolves a hostname to every address it has (the system resolver by default). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export interface Options {
  readonly mode: Mode
  /** Replaces the system resolver (`dns.lookup`, all addresses). */
  readonly resolve?: Resolver
  /** Concurrent sockets per destination (default 64). */
  readonly maxSockets?: number
  /** Bytes of a response body read before the socket is dropped (default 64 KiB). */
  readonly maxResponseBytes?: number
}

export const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4
  }))

/** Raised inside the node client when the guard refuses an address; becomes reason `refused`. */
class RefusedAddress extends Error {
  readonly code = "ECOBRO_REFUSED"
}

/** Raised by the deadline timer; becomes reason `timeout`. */
class Deadline extends Error {
  readonly code = "ECOBRO_TIMEOUT"
}

/** Why `address` may not be contacted in `mode`; none when it may. */
export const refusal = (mode: Mode, host: string, address: string): Option.Option<string> => {
  if (mode === "sandbox") return Option.none()
  const cls = IpAddress.classify(address)
  if (Option.isNone(cls)) return Option.some(`${host}: ${address} is not an IP address`)
  if (cls.value === "public") return Option.none()
  return Option.some(
    host === address
      ? `${address} is ${IpAddress.describe(cls.value)}`
      : `${host} resolves to ${address}, ${IpAddress.describe(cls.value)}`
  )
}

/** A `lookup` for node's sockets that resolves with `resolve` and applies the guard. */
const guardedLookup =
  (mode: Mode, resolve: Resolver): net.LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined
        const candidates = family === undefined ? all : all.filter((a) => a.family === family)
        const first = candidates[0]
        if (first === undefined) {
          const error: NodeJS.ErrnoException = new Error(`no address found for ${hostname}`)
          error.code = "ENOTFOUND"
          return callback(error, "", 0)
        }
        // One refused address refuses the name: the socket may try any of them.
        for (const a of candidates) {
          const refused = refusal(mode, hostname, a.address)
          if (Option.isSome(refused)) return callback(new RefusedAddress(refused.value), "", 0)
        }
        if (options.all === true) {
          callback(
            null,
            candidates.map((a) => ({ address: a.address, family: a.family }))
          )
        } else {
          callback(null, first.address, first.family)
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0)
    )
  }

/** The URL, if the policy of `mode` lets the transport try it; why not otherwise. */
const parseUrl = (
  mode: Mode,
  text: string
): URL | { readonly reason: "invalid_url" | "forbidden"; readonly message: string } =>
  Option.match(WebhookDestination.refusal(mode, text), {
    onNone: () => new URL(text),
    onSome: ({ kind, detail }) =>
      kind === "invalid"
        ? { reason: "invalid_url" as const, message: detail }
        : { reason: "forbidden" as const, message: `refused: ${detail}` }
  })

export const make = (options: Options): Effect.Effect<WebhookTransport["Type"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const resolve = options.resolve ?? systemResolver
    const lookup = guardedLookup(options.mode, resolve)
    const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const settings = { keepAlive: true, maxSockets: options.maxSockets ?? 64 }
        // One TLS context for every connection. Without it `tls.connect` builds one per new
        // connection (an OpenSSL context loaded with the default root certificates), costly in CPU,
        // also for a connection whose name does not resolve (`bench/tls.mjs`). It is built as each connection's was, with node's defaults:
        // the same trusted roots, protocol versions and ciphers, and every certificate is still
        // verified against the connection's host name.
        const secureContext = tls.createSecureContext()
        return { http: new http.Agent(settings), https: new https.Agent({ ...settings, secureContext }) }
      }),
      (a) =>
        Effect.sync(() => {
          a.http.destroy()
          a.https.destroy()
        })
    )

    const send = (request: WebhookRequest) =>
      Effect.async<WebhookResponse, TransportError>((resume) => {
        const started = performance.now()
        const elapsed = () => Math.max(0, Math.round(performance.now() - started))
        const failWith = (reason: TransportError["reason"], message: string) =>
          resume(Effect.fail(new TransportError({ reason, message, durationMs: elapsed() })))

        // An IP literal is never passed to `lookup`: the policy has judged it here.
        const url = parseUrl(options.mode, request.url)
        if (!(url instanceof URL)) return failWith(url.reason, url.message)

        const timeoutMs = Duration.toMillis(request.timeout)
        let settled = false
        const settle = (effect: Effect.Effect<WebhookResponse, TransportError>) => {
          if (settled) return
          settled = true
          resume(effect)
        }
        const secure = url.protocol === "https:"
        const req = (secure ? https : http).request(url, {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          lookup,
          headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) }
        })
        const timer = setTimeout(
          () => req.destroy(new Deadline(`no response within ${timeoutMs} ms`)),
          timeoutMs
        )
        req.on("response", (res) => {
          const location = res.headers.location ?? null
          settle(Effect.succeed({ status: res.statusCode ?? 0, location, durationMs: elapsed() }))
          let read = 0
          res.on("data", (chunk: Buffer) => {
            read += chunk.length
            if (read > maxResponseBytes) res.destroy()
          })
          res.on("error", () => clearTimeout(timer))
          res.on("close", () => clearTimeout(timer))
        })
        req.on("error", (error: NodeJS.ErrnoException) => {
          clearTimeout(timer)
          if (error instanceof RefusedAddress) {
            settle(
              Effect.fail(
                new TransportError({
                  reason: "refused",
                  message: `refused: ${error.message}`,
                  durationMs: elapsed()
                })
              )
            )
          } else if (error instanceof Deadline) {
            settle(
              Effect.fail(
                new TransportError({
                  reason: "timeout",
                  message: `timeout: ${error.message}`,
                  durationMs: elapsed()
                })
              )
            )
          } else {
            const code = error.code === undefined ? "" : `${error.code}: `
            settle(
              Effect.fail(
                new TransportError({
                  reason: "network",
                  message: `${code}${error.message}`,
                  durationMs: elapsed()
                })
              )
            )
          }
        })
        req.end(request.body)
        // Interrupted (the worker is shutting down): drop the request.
        return Effect.sync(() => {
          clearTimeout(timer)
          settled = true
          req.destroy()
        })
      })

    return WebhookTransport.of({
      send: (request) => send(request).pipe(Spans.span("NodeTransport.send"))
    })
  })

export const layer = (options: Options): Layer.Layer<WebhookTransport> =>
  Layer.scoped(WebhookTransport, make(options))

/**
 * Whether `url` may receive webhooks in `mode` right now: a check for when a URL is registered
 * (the transport checks again at every connection, since DNS answers change).
 */
export const checkDestination = (
  url: string,
  options: Pick<Options, "mode" | "resolve">
): Effect.Effect<void, TransportError> =>
  Effect.gen(function* () {
    const started = performance.now()
    const failure = (reason: TransportError["reason"], message: string) =>
      new TransportError({ reason, message, durationMs: Math.round(performance.now() - started) })
    const parsed = parseUrl(options.mode, url)
    if (!(parsed instanceof URL)) return yield* failure(parsed.reason, parsed.message)
    if (options.mode === "sandbox") return
    const host = WebhookDestination.hostOf(parsed)
    const addresses = Option.isSome(IpAddress.parse(host))
      ? [host]
      : (yield* Effect.tryPromise({
          try: () => (options.resolve ?? systemResolver)(host),
          catch: (e) => failure("network", `cannot resolve ${host}: ${String(e)}`)
        })).map((a) => a.address)
    if (addresses.length === 0) return yield* failure("network", `no address found for ${host}`)
    for (const address of addresses) {
      const refused = refusal(options.mode, host, address)
      if (Option.isSome(refused)) return yield* failure("refused", `refused: ${refused.value}`)
    }
  })
