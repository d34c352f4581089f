/**
 * The API reference as the reference server serves it: `GET /` sends a visitor to `/docs`, and
 * `/docs` (3.5 MB of HTML, Scalar's bundle inlined) and `/openapi.json` go out compressed, br or
 * gzip as the request's `Accept-Encoding` prefers, with `Vary: Accept-Encoding` on every answer
 * of theirs.
 *
 * Both documents are the same for the life of the process, so each is compressed once, on the
 * first request that asks for that encoding, and the compressed bytes are kept (about 0.8 MB
 * br and 0.9 MB gzip for `/docs`; the uncompressed page is still rendered per request for a client that takes no
 * compression, as `@cobro/http` decided for memory). Compression runs on libuv's thread pool
 * (`node:zlib`'s asynchronous calls), not on the event loop. It lives in the server, not in
 * `@cobro/http`, which runs on any fetch runtime and imports no `node:` module.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Deferred, Effect, Option } from "effect"
import { promisify } from "node:util"
import * as Zlib from "node:zlib"

/** The documents compressed, by path. */
export const compressedPaths: ReadonlySet<string> = new Set(["/docs", "/openapi.json"])

export type Encoding = "br" | "gzip"

/**
 * The encoding to answer with for `header` (an `Accept-Encoding`): br, else gzip, each unless its
 * q-value (or that of `*`) is 0; none when neither is acceptable.
 */
export const negotiate = (header: string | undefined): Option.Option<Encoding> => {
  if (header === undefined) return Option.none()
  const weights = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    if (name === undefined || name === "") continue
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined)
    weights.set(name, q === undefined ? 1 : Number(q))
  }
  const weight = (name: Encoding) => weights.get(name) ?? weights.get("*") ?? 0
  const ranked = (["br", "gzip"] as const).filter((e) => weight(e) > 0)
  if (ranked.length === 0) return Option.none()
  return Option.some(ranked.reduce((best, e) => (weight(e) > weight(best) ? e : best)))
}

const brotli = promisify(Zlib.brotliCompress)
const gzip = promisify(Zlib.gzip)

/**
 * `bytes` in `encoding`. Brotli at quality 9 (of 11): the page's 3.5 MB take a few seconds once on
 * a busy machine, where 11 would take far longer for a few percent less.
 */
const compress = (bytes: Uint8Array, encoding: Encoding): Promise<Buffer> =>
  encoding === "br"
    ? brotli(bytes, {
        params: {
          [Zlib.constants.BROTLI_PARAM_QUALITY]: 9,
          [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
          [Zlib.constants.BROTLI_PARAM_MODE]: Zlib.constants.BROTLI_MODE_TEXT
        }
      })
    : gzip(bytes, { level: 9 })

interface Compressed {
  /** The length of the plain bytes it was made of: a different answer is compressed afresh. */
  readonly from: number
  readonly body: Uint8Array
}

const VARY = "accept-encoding"

/**
 * Middleware: the answer to a `GET` of a compressed path, compressed when the request accepts it,
 * from the bytes kept for that path and encoding; every answer of those paths carries
 * `Vary: Accept-Encoding`. Anything else passes through. (A pre-response handler: what a
 * middleware returns comes after the answer was written.)
 */
export const compression = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
  const kept = new Map<string, Deferred.Deferred<Option.Option<Compressed>>>()

  const compressed = (key: string, plain: Uint8Array, encoding: Encoding) =>
    Effect.gen(function* () {
      const existing = kept.get(key)
      if (existing !== undefined) {
        const done = yield* Deferred.await(existing)
        if (Option.isSome(done) && done.value.from === plain.byteLength) return Option.some(done.value.body)
        if (Option.isSome(done)) kept.delete(key)
        else return Option.none<Uint8Array>()
      }
      // The first request for this path and encoding compresses; those meanwhile wait for it. A
      // failure keeps nothing: the next request tries again.
      const deferred = yield* Deferred.make<Option.Option<Compressed>>()
      kept.set(key, deferred)
      return yield* Effect.tryPromise(() => compress(plain, encoding)).pipe(
        Effect.map((buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)),
        Effect.tap((body) => Deferred.succeed(deferred, Option.some({ from: plain.byteLength, body }))),
        Effect.option,
        Effect.ensuring(
          Effect.flatMap(Deferred.succeed(deferred, Option.none()), (unset) =>
            Effect.sync(() => void (unset && kept.delete(key)))
          )
        )
      )
    })

  const handler = (
    request: HttpServerRequest.HttpServerRequest,
    response: HttpServerResponse.HttpServerResponse
  ) =>
    Effect.gen(function* () {
      const path = new URL(request.url, "http://localhost").pathname
      if (request.method !== "GET" || !compressedPaths.has(path)) return response
      const vary = HttpServerResponse.setHeader(response, "vary", VARY)
      const encoding = negotiate(request.headers["accept-encoding"])
      if (Option.isNone(encoding) || response.status !== 200 || response.body._tag !== "Uint8Array")
        return vary
      const body = yield* compressed(`${path} ${encoding.value}`, response.body.body, encoding.value)
      return Option.match(body, {
        onNone: () => vary,
        onSome: (bytes) =>
          HttpServerResponse.uint8Array(bytes, {
            status: 200,
            contentType: (response.body as { readonly contentType: string }).contentType,
            headers: { ...response.headers, vary: VARY, "content-encoding": encoding.value }
          })
      })
    })

  return Effect.zipRight(HttpApp.appendPreResponseHandler(handler), app)
}

/** `GET /`: 302 to the API reference, `/docs`. */
export const home = HttpApiBuilder.Router.use((router) =>
  router.get("/", Effect.succeed(HttpServerResponse.redirect("/docs", { status: 302 })))
)
