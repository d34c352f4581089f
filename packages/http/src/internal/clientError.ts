/**
 * Answers for the requests node's HTTP parser refuses before any route sees them (a request line
 * or headers over `--max-http-header-size`, a malformed request, one that arrives too slowly).
 * Without a `clientError` listener node writes a bare status line and an empty body; with this
 * one the client gets the documented envelope, and the connection is closed (the parser cannot
 * find where the next request would start).
 */
import type * as Stream from "node:stream"
import { ApiError, toWire, withRequestId } from "../ApiError.js"
import * as RequestId from "../RequestId.js"

/** What node's parser reports, as the error the client gets. */
export const clientErrorOf = (code: string | undefined): ApiError => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return ApiError.of(
        431,
        "request.headers.too_large",
        "the request line and headers are larger than the server accepts (16 KiB)"
      )
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADER_TIMEOUT":
      return ApiError.of(408, "request.timeout", "the request did not arrive in time")
    default:
      return ApiError.of(400, "request.malformed", "the request is not valid HTTP/1.1")
  }
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large"
}

/** A `clientError` listener for a node:http server: the envelope, then the connection closes. */
export const onClientError = (error: Error & { readonly code?: string }, socket: Stream.Duplex): void => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  // No request was read, so no caller's id: a new one, for support to find the answer by.
  const requestId = RequestId.generate()
  const answer = withRequestId(clientErrorOf(error.code), requestId)
  const body = JSON.stringify(toWire(answer, "envelope"))
  socket.end(
    `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? "Bad Request"}\r\n` +
      "content-type: application/json\r\n" +
      `request-id: ${requestId}\r\n` +
      `content-length: ${new TextEncoder().encode(body).length}\r\n` +
      "connection: close\r\n\r\n" +
      body
  )
}
