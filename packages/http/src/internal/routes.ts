/**
 * What the edge knows of the API's routes before routing: the routes `HttpApi.reflect` lists, in a
 * `find-my-way-ts` router (the one `HttpRouter` matches requests with, with its defaults), so that
 * a request's route, a path's methods (405) and a route's declared error envelope come from the
 * API itself, not from a table written again by hand.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as FindMyWay from "find-my-way-ts"
import { Option } from "effect"
import { CobroApi } from "../Api.js"
import { type Style, styleOfDeclared } from "../ApiError.js"

export interface Route {
  readonly method: string
  /** The names of the path's parameters by segment index. */
  readonly params: ReadonlyMap<number, string>
  /** The envelope of the errors the route declares (its group's). */
  readonly style: Style
}

/** The parameters of `path` (`/a/:id/b`) by segment index. */
const paramsOf = (path: string): ReadonlyMap<number, string> =>
  new Map(
    path.split("/").flatMap((segment, i) => (segment.startsWith(":") ? [[i, segment.slice(1)] as const] : []))
  )

/**
 * Every route of the API. Parameters of any length match here: a too long one is refused at the
 * edge naming its parameter (`Input.refusePath`), where the real router would not know the path.
 */
const router: FindMyWay.Router<Route> = (() => {
  const found = FindMyWay.make<Route>({ maxParamLength: Number.MAX_SAFE_INTEGER })
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors }) => {
      const declared = [...errors.values()].flatMap(({ ast }) => Option.toArray(ast))
      found.on(endpoint.method, endpoint.path, {
        method: endpoint.method,
        params: paramsOf(endpoint.path),
        style: styleOfDeclared(declared)
      })
    }
  })
  return found
})()

const METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"] as const

const decodes = (segment: string) => {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}

/**
 * `url`'s path, a segment that is not valid percent-encoded UTF-8 replaced by `_`: such a segment
 * can only be a parameter's, which the edge then refuses naming it (`Input.refusePath`).
 */
const pathOf = (url: string) =>
  (url.split("?")[0] ?? url)
    .split("/")
    .map((segment) => (decodes(segment) ? segment : "_"))
    .join("/")

/** The route `method` reaches at `url`'s path. */
const find = (method: string, url: string): Route | undefined => router.find(method, pathOf(url))?.handler

/** The methods the API answers at `url`'s path, in a stable order (none: no such path). */
export const methodsAt = (url: string): ReadonlyArray<string> =>
  METHODS.filter((method) => method !== "HEAD" && find(method, url)?.method === method)

/**
 * The route `method` and `url` reach; another route at that path when the method is not one of
 * the path's. `undefined`: not a path of the API.
 */
export const routeAt = (method: string, url: string): Route | undefined => {
  const route = find(method, url)
  if (route !== undefined && route.method === method) return route
  const other = methodsAt(url)[0]
  return other === undefined ? undefined : find(other, url)
}
