/**
 * The OpenAPI document the server publishes at `/openapi.json`: a valid OpenAPI 3.1 document
 * that lists every route of `CobroApi`, marks public and protected routes, and describes the
 * error bodies the server really sends (each route's envelope, never `HttpApiDecodeError`).
 */
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect, Either, Option, Schema } from "effect"
import { CobroHttp } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { apiRoutes, type Route, styleOf } from "./apiRoutes.js"
import { raw, serverLayer } from "./support.js"

/** SPEC: no Authorization header on these; every other route needs a bearer token. */
const PUBLIC = new Set([
  "POST /payments/",
  "GET /payments/:paymentId/public",
  "POST /users/:id/tokens",
  "POST /auth/tokens"
])

type Json = Record<string, unknown>

const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}")

const fetchSpec = Effect.gen(function* () {
  const response = yield* raw(HttpClientRequest.get("/openapi.json"))
  expect(response.status).toBe(200)
  expect(response.headers["content-type"]).toMatch(/^application\/json/)
  return response.body as Json & {
    openapi: string
    paths: Record<
      string,
      Record<string, Json & { security?: Array<unknown>; responses: Record<string, Json> }>
    >
    components: { schemas: Record<string, Json>; securitySchemes?: Record<string, Json> }
  }
})

type Spec = Effect.Effect.Success<typeof fetchSpec>

const operationOf = (spec: Spec, route: Route) =>
  spec.paths[openApiPath(route.path)]?.[route.method.toLowerCase()]

/** The component a `{$ref}` points to. */
const deref = (spec: Spec, schema: unknown): Json => {
  const ref = (schema as { $ref?: string }).$ref
  expect(ref, JSON.stringify(schema)).toMatch(/^#\/components\/schemas\//)
  const component = spec.components.schemas[ref!.split("/").pop()!]
  expect(component, ref).toBeDefined()
  return component!
}

layer(serverLayer())((it) => {
  describe("/openapi.json", () => {
    it.effect("is a valid OpenAPI 3.1 document whose references all resolve", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        expect(spec.openapi).toMatch(/^3\.1\.\d+$/)
        const validator = new Validator()
        const result = yield* Effect.promise(() => validator.validate(structuredClone(spec)))
        expect(result.errors ?? []).toEqual([])
        expect(result.valid).toBe(true)
        expect(validator.version).toBe("3.1")
        // Throws on a reference that points nowhere.
        expect(() => validator.resolveRefs()).not.toThrow()
        expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
      })
    )

    it.effect("lists exactly the routes of CobroApi, each with its own operationId", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        const documented = Object.entries(spec.paths).flatMap(([path, operations]) =>
          Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)
        )
        const routes = apiRoutes.map((r) => `${r.method} ${openApiPath(r.path)}`)
        expect(documented.sort()).toEqual(routes.sort())
        const ids = apiRoutes.map((r) => operationOf(spec, r)!["operationId"])
        expect(new Set(ids).size).toBe(apiRoutes.length)
      })
    )

    it.effect("marks the public routes without security and every other route with bearer auth", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        expect(spec.components.securitySchemes?.["bearer"]).toEqual({ type: "http", scheme: "bearer" })
        expect(apiRoutes.filter((r) => PUBLIC.has(r.id)).map((r) => r.id)).toHaveLength(PUBLIC.size)
        for (const route of apiRoutes) {
          const security = operationOf(spec, route)!.security ?? []
          expect([route.id, security]).toEqual([route.id, PUBLIC.has(route.id) ? [] : [{ bearer: [] }]])
        }
      })
    )

    it.effect("documents each error status with the route's own envelope and that status", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        for (const route of apiRoutes) {
          const responses = operationOf(spec, route)!.responses
          const errors = Object.keys(responses).filter((status) => Number(status) >= 400)
          expect(errors, route.id).toEqual(expect.arrayContaining(["400", "401", "404", "500"]))
          for (const status of errors) {
            const response = responses[status] as { description: string; content: Record<string, Json> }
            const where = `${route.id} ${status}`
            expect(response.description, where).not.toMatch(/^(Error|ApiError)$/)
            const schema = deref(spec, response.content["application/json"]!["schema"])
            const properties = schema["properties"] as Record<string, Json>
            expect(properties["error"], where).toEqual({ type: "boolean", enum: [true] })
            expect(properties["message"], where).toEqual({ type: "string" })
            expect(schema["required"], where).toEqual(expect.arrayContaining(["message", "error", "data"]))
            if (styleOf(route) === "status") {
              expect(Object.keys(properties).sort(), where).toEqual([
                "data",
                "error",
                "message",
                "request_id",
                "status"
              ])
              expect(properties["status"], where).toEqual({ type: "string", enum: ["error"] })
            } else {
              expect(Object.keys(properties).sort(), where).toEqual([
                "code",
                "data",
                "error",
                "message",
                "request_id"
              ])
              expect(properties["code"], where).toEqual({ type: "number", enum: [Number(status)] })
            }
            // The request's id, optional (the `Request-Id` header's value).
            expect(properties["request_id"], where).toMatchObject({ type: "string" })
            expect(schema["required"], where).not.toContain("request_id")
          }
        }
      })
    )

    it.effect("documents the success body of every route", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        for (const route of apiRoutes) {
          const ok = operationOf(spec, route)!.responses["200"] as
            { content?: Record<string, Json> } | undefined
          const type = route.path.endsWith(".csv") ? "text/csv" : "application/json"
          expect(ok?.content?.[type]?.["schema"], route.id).toBeDefined()
        }
      })
    )
  })

  describe("for a newcomer", () => {
    it.effect("every request body carries an example its endpoint's payload schema accepts", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        const problems: Array<string> = []
        let bodies = 0
        for (const route of apiRoutes) {
          if (Option.isNone(route.endpoint.payloadSchema)) continue
          bodies++
          const body = operationOf(spec, route)!["requestBody"] as
            { content?: Record<string, { example?: unknown }> } | undefined
          const example = body?.content?.["application/json"]?.example
          if (example === undefined) {
            problems.push(`${route.id}: no example (or Api.ts's example does not decode)`)
            continue
          }
          // What "Try it" sends: the JSON text of the example, decoded as the route decodes it.
          const decoded = Schema.decodeUnknownEither(
            route.endpoint.payloadSchema.value as Schema.Schema<unknown>
          )(JSON.parse(JSON.stringify(example)))
          if (Either.isLeft(decoded)) problems.push(`${route.id}: ${decoded.left.message}`)
        }
        expect(bodies).toBeGreaterThanOrEqual(16)
        expect(problems).toEqual([])
      })
    )

    it.effect("creates a payment for the sandbox's demo merchant with the documented example", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        const body = spec.paths["/payments/"]!["post"]!["requestBody"] as {
          content: Record<string, { example: Record<string, unknown> }>
        }
        const example = body.content["application/json"]!.example
        expect(example).toMatchObject({ user_id: "demo", payment_options: ["transfer"] })
        expect(example["price"]).toMatchObject({ currency: "ARS" })
      })
    )

    it.effect("groups the routes under a few consistently named tags", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        const tags = (spec["tags"] as Array<{ name: string }>).map((t) => t.name)
        expect(tags).toEqual([
          "Payments",
          "Customers",
          "Authentication",
          "Accounts",
          "Schedules",
          "Splits",
          "Balances",
          "Sandbox",
          "Webhooks",
          "Exports"
        ])
        for (const route of apiRoutes) {
          const operation = operationOf(spec, route)!
          expect(operation["tags"], route.id).toHaveLength(1)
          expect(tags, route.id).toContain((operation["tags"] as Array<string>)[0])
        }
      })
    )
  })

  describe("/docs", () => {
    it.effect("opens with the bearer token as the authentication of its requests", () =>
      Effect.gen(function* () {
        const spec = yield* fetchSpec
        const response = yield* raw(HttpClientRequest.get("/docs"))
        // The page hands Scalar its settings as the JSON text of a script.
        const config = /dataset\.configuration = JSON\.stringify\((\{.*?\})\)\s*<\/script>/s.exec(
          response.text
        )
        expect(config).not.toBeNull()
        const scheme = (JSON.parse(config![1]!) as { authentication?: { preferredSecurityScheme?: string } })
          .authentication?.preferredSecurityScheme
        expect(scheme).toBe("bearer")
        expect(spec.components.securitySchemes?.[scheme!]).toMatchObject({ type: "http", scheme: "bearer" })
      })
    )

    it.effect("serves an HTML reference page over /openapi.json", () =>
      Effect.gen(function* () {
        const response = yield* raw(HttpClientRequest.get("/docs"))
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toMatch(/^text\/html/)
        expect(response.text).toMatch(/^<!doctype html>/i)
        expect(response.text).toContain("<title>cobro</title>")
        expect(response.text).toContain("/payments/{paymentId}/public")
      })
    )
  })
})

describe("docs: false", () => {
  // A second in-process server in this file would share @effect/vitest's \`it\` with the first
  // (\`layer\` assigns its methods onto one object), so this one is a fetch-style handler.
  it("serves neither /openapi.json nor /docs", async () => {
    const { handler, dispose } = CobroHttp.toWebHandler(SandboxEngine.layerMemory(), { docs: false })
    try {
      for (const path of ["/openapi.json", "/docs"]) {
        const response = await handler(new Request(`http://cobro.test${path}`))
        const body = (await response.json()) as { message?: string }
        expect([path, response.status, body.message]).toEqual([path, 404, "route.not.found"])
      }
    } finally {
      await dispose()
    }
  })
})
