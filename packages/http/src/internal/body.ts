/**
 * Reading a request's body at the edge: a body of undeclared length within the size limit, and
 * the nesting depth of a JSON text, both before any route decodes it.
 */
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as UrlParams from "@effect/platform/UrlParams"
import { Effect, Option, Predicate, Stream } from "effect"

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
 * Reads a body of undeclared length (chunked) keeping at most `max` bytes; `None` when it is
 * larger. A larger body is still read to its end and dropped: abandoning it would make node reset
 * the connection before the 413 is sent (platform-node destroys an unfinished request), and the
 * web platform has no size limit of its own on such a body.
 *
 * The chunks are read from the host's own body (a fetch `Request`'s stream, node's
 * `IncomingMessage`) where there is one: through `request.stream`, an Effect `Stream` over it, a
 * small body took over twenty times as long to read, half the cost of a POST on a fetch-style
 * host (figures in bench/results.md).
 */
export const readBounded = (
  request: HttpServerRequest.HttpServerRequest,
  max: number
): Effect.Effect<Option.Option<Uint8Array>> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  const take = (chunk: Uint8Array) => {
    size += chunk.length
    if (size <= max) chunks.push(chunk)
  }
  const source = hostBody(request)
  const read: Effect.Effect<void, unknown> =
    source === undefined
      ? Stream.runForEach(request.stream, (chunk) => Effect.sync(() => take(chunk)))
      : Effect.tryPromise(async () => {
          for await (const chunk of source) take(chunk)
        })
  return read.pipe(
    Effect.orDie,
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

/** The host's body of `request` as chunks: a fetch `Request`'s stream or node's request itself. */
const hostBody = (request: HttpServerRequest.HttpServerRequest): AsyncIterable<Uint8Array> | undefined => {
  const source: unknown = request.source
  if (typeof Request !== "undefined" && source instanceof Request) {
    const body = source.body
    return body === null ? undefined : readerChunks(body)
  }
  return Predicate.hasProperty(source, Symbol.asyncIterator) &&
    typeof source[Symbol.asyncIterator] === "function"
    ? (source as AsyncIterable<Uint8Array>)
    : undefined
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

/** `request` with its body replaced by `body`, already read. */
export const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  body: Uint8Array
): HttpServerRequest.HttpServerRequest => {
  const text = new TextDecoder().decode(body)
  const decodeError = (cause: unknown) =>
    new HttpServerError.RequestError({ request, reason: "Decode", cause })
  return Object.create(request, {
    text: { get: () => Effect.succeed(text) },
    json: {
      get: () =>
        Effect.try({ try: (): unknown => (text === "" ? null : JSON.parse(text)), catch: decodeError })
    },
    urlParamsBody: {
      get: () => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: decodeError })
    },
    arrayBuffer: { get: () => Effect.succeed(body.slice().buffer) },
    stream: { get: () => Stream.succeed(body) }
  }) as HttpServerRequest.HttpServerRequest
}
