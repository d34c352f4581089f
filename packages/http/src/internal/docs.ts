/**
 * `/openapi.json` and the interactive reference at `/docs`, built on first request.
 *
 * `HttpApiBuilder.middlewareOpenApi` and `HttpApiScalar.layer` build both responses when the
 * layer starts and keep them for the life of the process. The `/docs` page inlines Scalar's
 * browser bundle, so an idle server held the module holding that bundle (its source and the
 * string it exports, as V8 stores them) and the rendered page: a quarter of an idle heap, for a
 * page few processes ever serve. Here the OpenAPI document is built on the first
 * request for it and kept (it is small); Scalar's module is imported on the first `/docs`
 * request, and its page is rendered for each request and not kept.
 *
 * Both list only the routes the server serves: a route whose engine service is absent (the
 * sandbox's, in production) is left out (`unserved`), as if it were not part of the API.
 *
 * Importing `@effect/platform` through its index loads every module of it, Swagger UI's bundle
 * among them: the package's modules are imported by path in `@cobro/http` and
 * `@cobro/server` for that reason.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect, Layer } from "effect"

/**
 * Scalar's settings: the reference opens with the bearer token as its authentication, so a
 * token pasted once is sent by every "Try it" of a protected route. (`authentication` is a
 * setting of Scalar's that `HttpApiScalar`'s type does not list; the page passes it through.)
 */
export const scalarConfig: HttpApiScalar.ScalarConfig = {
  authentication: { preferredSecurityScheme: "bearer" }
} as HttpApiScalar.ScalarConfig

/** An endpoint of the API: its group's identifier and its name. */
export type EndpointName = readonly [group: string, endpoint: string]

/**
 * `api` with `unserved` excluded from its OpenAPI document (`OpenApi.Exclude`): a group none of
 * whose endpoints is served goes with them (its tag too).
 */
export const documented = <Api extends HttpApi.HttpApi.Any>(
  api: Api,
  unserved: ReadonlyArray<EndpointName>
): Api => {
  let result = api as unknown as HttpApi.HttpApi.AnyWithProps
  for (const [id, group] of Object.entries(result.groups)) {
    const names = unserved.filter(([g]) => g === id).map(([, e]) => e)
    if (names.length === 0) continue
    let changed: HttpApiGroup.HttpApiGroup.AnyWithProps = group
    for (const name of names) {
      const endpoint = changed.endpoints[name]
      if (endpoint !== undefined) changed = changed.add(endpoint.annotate(OpenApi.Exclude, true))
    }
    if (Object.keys(changed.endpoints).every((name) => names.includes(name)))
      changed = changed.annotate(OpenApi.Exclude, true)
    result = result.add(changed) as unknown as HttpApi.HttpApi.AnyWithProps
  }
  return result as unknown as Api
}

export const layer = (
  paths: {
    readonly openApi: `/${string}`
    readonly docs: `/${string}`
  },
  unserved: ReadonlyArray<EndpointName> = []
): Layer.Layer<never, never, HttpApi.Api> =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const full = yield* HttpApi.Api
      const service = unserved.length === 0 ? full : { ...full, api: documented(full.api, unserved) }
      let spec: OpenApi.OpenAPISpec | undefined
      const document = () => (spec ??= OpenApi.fromApi(service.api))

      yield* router.get(
        paths.openApi,
        Effect.suspend(() => HttpServerResponse.json(document())).pipe(Effect.orDie)
      )

      // The page is Scalar's own (`HttpApiScalar.layer`), served by a router built on demand:
      // the module with the bundle loads on the first request for it.
      const page = Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
        Effect.flatMap((Scalar) =>
          Effect.provide(
            HttpApiBuilder.Router.router,
            Scalar.layer({ path: paths.docs, scalar: scalarConfig }).pipe(
              Layer.provideMerge(HttpApiBuilder.Router.Live),
              Layer.provide(Layer.succeed(HttpApi.Api, service))
            )
          )
        ),
        Effect.flatten,
        Effect.orDie
      )
      yield* router.get(paths.docs, page)
    })
  )
