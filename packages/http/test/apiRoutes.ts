/**
 * The routes of `CobroApi` read from the API definition itself (so a test that walks them cannot
 * forget one), and the checks every error response must pass.
 */
import type { HttpApiEndpoint, HttpApiGroup, HttpMethod } from "@effect/platform"
import { HttpClientRequest } from "@effect/platform"
import { expect } from "@effect/vitest"
import { Api } from "../src/index.js"

export interface Route {
  /** `"GET /payments/:paymentId"`: the method and the path template, as `Api.ts` declares them. */
  readonly id: string
  readonly group: string
  readonly name: string
  readonly method: HttpMethod.HttpMethod
  readonly path: string
  /** Whether the group carries an authentication middleware. */
  readonly secured: boolean
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

/** Every endpoint of every group of `CobroApi`. */
export const apiRoutes: ReadonlyArray<Route> = Object.values(Api.CobroApi.groups).flatMap((group) => {
  const g = group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps
  return Object.values(g.endpoints).map((endpoint) => {
    const e = endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
    return {
      id: `${e.method} ${e.path}`,
      group: g.identifier,
      name: e.name,
      method: e.method,
      path: e.path,
      secured: g.middlewares.size > 0,
      endpoint: e
    }
  })
})

/** `path` with each `:param` replaced by `params[param]`, or by `fallback`. */
export const fillPath = (path: string, params: Record<string, string> = {}, fallback = "x") =>
  path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? fallback))

export type Style = "envelope" | "status"

/** The error envelope each route answers with (SPEC: partner and account routes use `status`). */
export const STATUS_STYLE_ROUTES: ReadonlySet<string> = new Set([
  "POST /auth/tokens",
  "GET /users/:user_id/account",
  "PATCH /users/:user_id",
  "POST /transactions/schedules",
  "GET /transactions/schedules",
  "GET /transactions/schedules/:schedule_id",
  "PATCH /transactions/schedules/:schedule_id"
])

export const styleOf = (route: Route): Style => (STATUS_STYLE_ROUTES.has(route.id) ? "status" : "envelope")

/** A request of `method` to `path`, with a JSON body when given. */
export const request = (method: HttpMethod.HttpMethod, path: string, body?: unknown) => {
  const base = HttpClientRequest.make(method)(path)
  return body === undefined ? base : HttpClientRequest.bodyUnsafeJson(base, body)
}

export interface RawResponse {
  readonly status: number
  readonly body: unknown
  readonly text: string
}

/** `response` is exactly the error `key` with `status`, in `style`, with nothing else in it. */
export const expectError = (
  response: RawResponse,
  style: Style,
  status: number,
  key: string,
  data: Record<string, unknown> = {}
) => {
  const expected =
    style === "envelope"
      ? { message: key, error: true, code: status, data: { detail: expect.any(String), ...data } }
      : { status: "error", error: true, message: key, data: { detail: expect.any(String), ...data } }
  expect({ status: response.status, body: response.body }).toEqual({ status, body: expected })
}

const DOTTED = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/

/**
 * `response` is some documented error in `style`: `error: true`, a dotted `message`, a string
 * `data.detail` (plus optional `field` / `retry_after`) and, on envelope routes, `code` equal to
 * the HTTP status. Returns the key.
 */
export const expectSomeError = (response: RawResponse, style: Style, context: string): string => {
  const body = response.body as Record<string, unknown>
  const where = `${context} → ${response.status} ${response.text.slice(0, 300)}`
  expect(response.status, where).toBeGreaterThanOrEqual(400)
  expect(response.status, where).toBeLessThan(500)
  expect(typeof body === "object" && body !== null && !Array.isArray(body), where).toBe(true)
  expect(body.error, where).toBe(true)
  expect(body.message, where).toMatch(DOTTED)
  const data = body.data as Record<string, unknown>
  expect(typeof data === "object" && data !== null, where).toBe(true)
  expect(typeof data.detail, where).toBe("string")
  for (const key of Object.keys(data)) expect(["detail", "field", "retry_after"], where).toContain(key)
  if (data.field !== undefined) expect(typeof data.field, where).toBe("string")
  if (style === "envelope") {
    expect(Object.keys(body).sort(), where).toEqual(["code", "data", "error", "message"])
    expect(body.code, where).toBe(response.status)
  } else {
    expect(Object.keys(body).sort(), where).toEqual(["data", "error", "message", "status"])
    expect(body.status, where).toBe("error")
  }
  return body.message as string
}
