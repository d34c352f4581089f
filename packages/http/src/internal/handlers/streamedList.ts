/** The list routes' body: an envelope whose list is written as its stream yields it. */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Chunk, Effect, Schema, Stream } from "effect"

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0] ?? request.url

/**
 * An envelope whose `data.<field>` is an array written as the stream yields it, so a list of any
 * length is sent in constant memory. Callers check access before, so the stream only fails on a
 * storage defect. The 200 and part of the body are then already sent: the defect is logged and
 * the connection cut (on node, its socket destroyed; on a fetch-style host, the body stream
 * errors), so that no client takes the part for the whole list. Ending the body instead, as the
 * platform does on a failed stream, made a truncated list a complete HTTP response.
 *
 * Each chunk of `items` (a storage page) is encoded and written as one piece of the body, not one
 * piece per item. With a write per item, the items' buffers queued behind the socket lived long
 * enough to leave V8's young generation, and their memory came back only at a full collection:
 * the peak grew with the length of the list. With a write per page
 * it does not.
 */
export const streamedList = <A, I, E>(
  message: string,
  field: string,
  item: Schema.Schema<A, I>,
  items: Stream.Stream<A, E>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const encode = Schema.encodeSync(item)
    const open = `{"message":${JSON.stringify(message)},"error":false,"code":200,"data":{${JSON.stringify(field)}:[`
    const body = Stream.make(open).pipe(
      Stream.concat(
        items.pipe(
          Stream.orDie,
          Stream.chunks,
          Stream.filter(Chunk.isNonEmpty),
          Stream.mapAccum(true, (first, chunk) => {
            let json = ""
            for (const value of chunk) json += `,${JSON.stringify(encode(value))}`
            return [false, first ? json.slice(1) : json] as const
          })
        )
      ),
      Stream.concat(Stream.make("]}}")),
      cutOnFailure(request, "its list"),
      Stream.encodeText
    )
    return HttpServerResponse.stream(body, { contentType: "application/json" })
  })

/**
 * A response body that, should it fail once begun, has its failure logged and the connection
 * cut (see `streamedList`): `what` names the body in the log line.
 */
export const cutOnFailure =
  (request: HttpServerRequest.HttpServerRequest, what: string) =>
  <A, E, R>(body: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
    Stream.tapErrorCause(body, (cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : Effect.zipRight(
            Effect.logError(
              `${request.method} ${pathOf(request)} failed while ${what} was being sent`,
              cause
            ),
            cut(request)
          )
    )

/** Cuts the connection a request came on, where the host has one (node's socket). */
const cut = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => {
    const source = request.source as { readonly socket?: { readonly destroy?: () => void } } | undefined
    source?.socket?.destroy?.()
  })
