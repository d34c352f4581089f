/**
 * Reading a request's body at the edge: a body of undeclared length within the size limit, and
 * the nesting depth of a JSON text, both before any route decodes it.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as UrlParams from "@effect/platform/UrlParams"
import { Effect, Inspectable, Option, Predicate, Stream } from "effect"

/**
 * Deepest nesting a JSON body may have. No request nests more than 4 levels; a much deeper
 * value makes Effect's parse-error formatter overflow the stack (a 500) when it fails to decode.
 */
export const MAX_JSON_DEPTH = 64

/** Whether the JSON text nests arrays/objects deeper than `max` (strings are skipped). */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/**
 * Reads a request's body keeping at most `max` bytes; `None` when it is larger. A larger body is
 * still read to its end and dropped: abandoning it would make node reset the connection before
 * the 413 is sent (platform-node destroys an unfinished request), and the web platform has no size
 * limit of its own on a body of undeclared length.
 *
 * The chunks are read from the host's own body (node's `IncomingMessage`, a fetch `Request`'s
 * stream) where there is one, not through the platform's readers:
 * - through `request.stream`, an Effect `Stream` over it, a small body took over twenty times as
 *   long to read, half the cost of a POST on a fetch-style host;
 * - platform-node's `text` leaves its listeners on node's request after the body ends, and they
 *   keep the finished request's fiber reachable
 *   (docs/decisions/0055-finished-requests-unreachable.md). Here the listeners go when the body ends, however it ends.
 */
export const readBounded = (
  request: HttpServerRequest.HttpServerRequest,
  max: number
): Effect.Effect<Option.Option<Uint8Array>, unknown> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  const take = (chunk: Uint8Array) => {
    size += chunk.length
    if (size <= max) chunks.push(chunk)
  }
  const source: unknown = request.source
  const read: Effect.Effect<void, unknown> = isNodeReadable(source)
    ? readNode(source, take)
    : Effect.suspend((): Effect.Effect<void, unknown> => {
        const web = webBody(source)
        return web === undefined
          ? Stream.runForEach(request.stream, (chunk) => Effect.sync(() => take(chunk)))
          : Effect.tryPromise(async () => {
              for await (const chunk of web) take(chunk)
            })
      })
  return read.pipe(
    Effect.map(() => {
      if (size > max) return Option.none()
      const body = new Uint8Array(size)
      let offset = 0
      for (const chunk of chunks) {
        body.set(chunk, offset)
        offset += chunk.length
      }
      return Option.some(body)
    })
  )
}

/** What of node's `IncomingMessage` the edge reads a body with. */
interface NodeReadable {
  readonly readableEnded: boolean
  on(event: string, listener: (...args: Array<never>) => void): unknown
  off(event: string, listener: (...args: Array<never>) => void): unknown
}

const isNodeReadable = (source: unknown): source is NodeReadable =>
  Predicate.hasProperty(source, "readableEnded") &&
  Predicate.hasProperty(source, "on") &&
  Predicate.hasProperty(source, "off") &&
  typeof source.on === "function" &&
  typeof source.off === "function"

/** Node's request to its end, each chunk to `take`; its listeners removed at the end, however it ends. */
const readNode = (source: NodeReadable, take: (chunk: Uint8Array) => void): Effect.Effect<void, unknown> =>
  Effect.async<void, unknown>((resume) => {
    if (source.readableEnded) return resume(Effect.void)
    const done = () => {
      source.off("data", take)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onEnd = () => {
      done()
      resume(Effect.void)
    }
    const onError = (error: unknown) => {
      done()
      resume(Effect.fail(error))
    }
    source.on("data", take)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(done)
  })

/** A fetch `Request`'s body as chunks, or `undefined` when `source` is not one (or has none). */
const webBody = (source: unknown): AsyncIterable<Uint8Array> | undefined => {
  if (typeof Request === "undefined" || !(source instanceof Request)) return undefined
  const body = source.body
  return body === null ? undefined : readerChunks(body)
}

/** A web `ReadableStream`'s chunks, through its reader (not every runtime makes it iterable). */
async function* readerChunks(body: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

/**
 * A body without `Content-Length`: chunked on node, or a streamed `Request` on fetch-style hosts
 * (whose headers never show `Transfer-Encoding`).
 */
export const hasUndeclaredBody = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["content-length"] === undefined &&
  (request.headers["transfer-encoding"] !== undefined ||
    (typeof Request !== "undefined" && request.source instanceof Request && request.source.body !== null))

/** One decoder for every body: a decode without `stream` keeps no state between calls. */
const utf8 = new TextDecoder()

/**
 * `request` with its body already read: the body's reads answer `body` and its text, everything
 * else is `request`'s. A class of its own rather than an object with `request` as its prototype:
 * made per request, that turned every request into a prototype, which V8 handles on its slow
 * path (`Object.create` with getters showed in the profile of every POST).
 */
class WithBody extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  constructor(
    readonly request: HttpServerRequest.HttpServerRequest,
    readonly body: Uint8Array,
    readonly bodyText: string
  ) {
    super()
  }
  get source() {
    return this.request.source
  }
  get url() {
    return this.request.url
  }
  get originalUrl() {
    return this.request.originalUrl
  }
  get method() {
    return this.request.method
  }
  get cookies() {
    return this.request.cookies
  }
  get headers() {
    return this.request.headers
  }
  get remoteAddress() {
    return this.request.remoteAddress
  }
  get multipart() {
    return this.request.multipart
  }
  get multipartStream() {
    return this.request.multipartStream
  }
  get upgrade() {
    return this.request.upgrade
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) {
    return new WithBody(this.request.modify(options), this.body, this.bodyText)
  }
  get text() {
    return Effect.succeed(this.bodyText)
  }
  get json() {
    return Effect.try({
      try: (): unknown => (this.bodyText === "" ? null : JSON.parse(this.bodyText)),
      catch: (cause) => this.decodeError(cause)
    })
  }
  get urlParamsBody() {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.bodyText)),
      catch: (cause) => this.decodeError(cause)
    })
  }
  get arrayBuffer() {
    return Effect.succeed(this.body.slice().buffer)
  }
  get stream() {
    return Stream.succeed(this.body)
  }
  toJSON() {
    return this.request.toJSON()
  }
  private decodeError(cause: unknown) {
    return new HttpServerError.RequestError({ request: this.request, reason: "Decode", cause })
  }
}

/** `request` with its body replaced by `body`, already read, and that body's text. */
export const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  body: Uint8Array
): { readonly request: HttpServerRequest.HttpServerRequest; readonly text: string } => {
  const text = utf8.decode(body)
  return { request: new WithBody(request, body, text), text }
}
