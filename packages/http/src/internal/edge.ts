/**
 * The edge of the HTTP layer: every request passes here first. Checks that hold for any path
 * come first (a path that does not decode, a parameter or query the store cannot keep, a body
 * declared larger than the limit); then the request goes where its path belongs:
 *
 * - a path of the API (`routes.ts`): the API's boundary (`boundary.ts`): its body checks, the
 *   routed API, every failure as an envelope;
 * - any other path: the hosted pages' router (`PageRouter`) and, when no page has the path,
 *   the API's router (the OpenAPI document, the docs and the host's routes live there) under
 *   the same boundary, whose answer to a path nobody knows (404, or 405 naming the methods the
 *   path takes) is the only one.
 *
 * The request's id (`RequestId.ts`) is around all of it: every answer and every log line carries
 * it. Built once with the configuration and the page router, so that it needs nothing from the
 * request's context (a middleware given its layer's context would merge it into every request's).
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, FiberRef, Option } from "effect"
import { HttpConfig } from "../HttpConfig.js"
import * as RequestId from "../RequestId.js"
import { type Answer, answeringFailures, apiBoundary, errorResponse, refused, tooLarge } from "./boundary.js"
import * as Input from "./input.js"
import { PageRouter } from "./pages/router.js"
import { routeAt } from "./routes.js"

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])

const isRouteNotFound = (error: unknown): error is HttpServerError.RouteNotFound =>
  error instanceof HttpServerError.RouteNotFound

export const edge: Effect.Effect<(api: HttpApp.Default) => HttpApp.Default, never, HttpConfig | PageRouter> =
  Effect.gen(function* () {
    const config = yield* HttpConfig
    // The pages' routes need the server's default services (`HttpRouter.DefaultServices`), as the
    // API's own routes do: the server provides them to every request it serves.
    const pages = (yield* HttpRouter.toHttpApp(yield* PageRouter.router)) as HttpApp.Default<unknown>
    return (api) => edgeOf(config, api, pages)
  })

const edgeOf = (
  config: HttpConfig["Type"],
  api: HttpApp.Default,
  pages: HttpApp.Default<unknown>
): HttpApp.Default => {
  const toApi = apiBoundary(config, api)
  const maxBodySize = HttpIncomingMessage.withMaxBodySize(Option.some(config.maxBodyBytes))
  // The body's limit is provided once, around everything: the API's read of the body and a
  // page's alike see it (each provide copies the request's whole context).
  const front = maxBodySize(
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const route = routeAt(request.method, request.url)
      // Every error leaves in the envelope its route declares (the default one off the API's paths),
      // with the request's id.
      const style = route?.style ?? "envelope"
      const requestId = yield* FiberRef.get(RequestId.current)
      const answer: Answer = (error) => errorResponse(error, style, requestId)
      // Before routing: a path the router cannot decode, or a parameter no id can be, is the
      // client's (400 naming it); unchecked, the router reports either as a path it does not know.
      const params = route?.params
      const path = Input.refusePath(request.url, params)
      if (Option.isSome(path)) return answer(refused(path.value))
      if (params !== undefined) {
        const query = Input.refuseQuery(request.url.split("?").slice(1).join("?"))
        if (Option.isSome(query)) return answer(refused(query.value))
      }
      if (BODY_METHODS.has(request.method)) {
        const length = Number(request.headers["content-length"] ?? "0")
        if (Number.isFinite(length) && length > config.maxBodyBytes)
          return answer(tooLarge(config.maxBodyBytes))
      }
      if (route !== undefined) return yield* toApi(request, answer)
      return yield* pages.pipe(
        Effect.catchIf(isRouteNotFound, () => toApi(request, answer)),
        answeringFailures(config.maxBodyBytes, answer)
      )
    })
  )
  return RequestId.middleware(front)
}
