/**
 * `/openapi.json` and the interactive reference at `/docs`, built on first request.
 *
 * `HttpApiBuilder.middlewareOpenApi` and `HttpApiScalar.layer` build both responses when the
 * layer starts and keep them for the life of the process. The `/docs` page inlines Scalar's
 * browser bundle, so an idle server held the module holding that bundle (its source and the
 * string it exports, as V8 stores them) and the rendered page: a quarter of an idle heap, for a
 * page few processes ever serve (figures in bench/results.md). Here the OpenAPI document is built on the first
 * request for it and kept (it is small); Scalar's module is imported on the first `/docs`
 * request, and its page is rendered for each request and not kept.
 *
 * Importing `@effect/platform` through its index loads every module of it, Swagger UI's bundle
 * among them: the package's modules are imported by path in `@cobro/http` and
 * `@cobro/server` for that reason.
 */
import * as HttpApi from "@effect/platform/HttpApi"
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

export const layer = (paths: {
  readonly openApi: `/${string}`
  readonly docs: `/${string}`
}): Layer.Layer<never, never, HttpApi.Api> =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const service = yield* HttpApi.Api
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
