/**
 * Mounting the API. Three ways, one behaviour:
 *
 * - `layer(settings)`: the API as a Layer for Effect hosts (serve it with `HttpApiBuilder.serve`
 *   on any `HttpServer`, e.g. `NodeHttpServer.layer`);
 * - `toWebHandler(engine, settings)`: a `(Request) => Promise<Response>` for any fetch-style host;
 * - `NodeHttp.toNodeListener(engine, settings)` (from `@cobro/http/node`, which needs
 *   `@effect/platform-node`): a `(req, res)` listener for node:http or Express.
 *
 * The engine (services and storage) comes from the host: `SandboxEngine.layerMemory`, or the services
 * over `SqlStorage`. The faucet route works only when the engine has the sandbox's `Faucet`, the
 * test clock routes only with `TestClocks` (`SandboxClocks.testClocks`, over `SandboxClocks.layer`
 * provided below the engine so that its merchants follow their clocks). The rate limits count in
 * the host's `RateLimitStore` when it provides one (a store several instances share), in this
 * process otherwise.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import {
  Accounts,
  Auth,
  Balances,
  BankProvider,
  Crypto,
  Customers,
  Idempotency,
  MerchantClocks,
  Onboarding,
  Payments,
  RealTime,
  Refunds,
  Schedules,
  SecondFactors,
  Splits,
  WebhookDeliveries,
  WebSessions
} from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { Faucet, SandboxAccounts, SandboxClocks, TestClocks } from "@cobro/bank-sandbox"
import { Effect, Layer, Option } from "effect"
import { CobroApi } from "./Api.js"
import { handlers, type Requirements } from "./Http.js"
import { HttpConfig, type Settings } from "./HttpConfig.js"
import * as Cors from "./Cors.js"
import { edge } from "./internal/edge.js"
import { MAX_PARAM_LENGTH } from "./internal/input.js"
import * as Docs from "./internal/docs.js"
import * as Dashboard from "./Dashboard.js"
import * as Pages from "./Pages.js"
import * as RateLimit from "./internal/rateLimit.js"
import * as RateLimitStore from "./RateLimitStore.js"
import { restricted } from "./internal/restricted.js"
import { layerAuthentication, layerPartnerAuthentication } from "./Security.js"

export { restricted } from "./internal/restricted.js"

/**
 * The engine services the API and the hosted pages call; `Faucet` and `TestClocks` are optional
 * (sandbox).
 */
export type EngineServices = Exclude<Requirements | Pages.Requirements, HttpConfig | RateLimit.Limits>

/**
 * The engine's `Context.Reference`s the API reads: a layer built without them (`restricted`) reads
 * their defaults, not what the host set.
 */
export const engineReferences = [
  RealTime.RealTime,
  MerchantClocks.MerchantClocks,
  SandboxClocks.DueDeliveries
] as const

/**
 * What `layer` is built on of the host's context (`internal/restricted.ts`): the services of
 * `EngineServices` (checked against it), those read when present (sandbox), and the
 * `Context.Reference`s the engine may have set.
 */
export const engineServices = [
  Payments.Payments,
  Refunds.Refunds,
  Accounts.Accounts,
  Customers.Customers,
  Auth.Auth,
  Schedules.Schedules,
  Splits.Splits,
  Balances.Balances,
  WebhookDeliveries.WebhookDeliveries,
  Idempotency.Idempotency,
  PaymentRepository.PaymentRepository,
  Onboarding.Onboarding,
  Crypto.Crypto,
  // Read with `Effect.serviceOption`: the faucet, the sandbox bank's accounts, the merchants' second
  // factors, the test clocks, the payer's page's account holder lookup, the rate limits' store.
  Faucet.Faucet,
  SandboxAccounts.SandboxAccounts,
  SecondFactors.SecondFactors,
  // The dashboard's sessions (only a host that serves the dashboard provides them).
  WebSessions.WebSessions,
  TestClocks.TestClocks,
  BankProvider.BankProvider,
  RateLimitStore.RateLimitStore,
  ...engineReferences
] as const

/**
 * The rate limits over the host's `RateLimitStore`, or over a store in this process. Stores count
 * on real time (the system's clock): moving the engine's clock (a merchant's sandbox test clock)
 * does not open a fresh window.
 */
const limits = (settings: Partial<Settings>) =>
  RateLimit.layerLimits.pipe(
    Layer.provide(
      Layer.unwrapEffect(
        Effect.map(
          Effect.serviceOption(RateLimitStore.RateLimitStore),
          Option.match({
            onNone: () => RateLimitStore.layerMemory,
            onSome: (store) => Layer.succeed(RateLimitStore.RateLimitStore, store)
          })
        )
      )
    ),
    Layer.provideMerge(HttpConfig.layer(settings))
  )

/**
 * The sandbox's routes the engine does not serve (each answers 404 without its service): all of
 * them in production; on a sandbox over a real bank, the sandbox bank's accounts. `/openapi.json`
 * and `/docs` leave them out.
 */
const unservedRoutes = Effect.gen(function* () {
  const faucet = yield* Effect.serviceOption(Faucet.Faucet)
  const accounts = yield* Effect.serviceOption(SandboxAccounts.SandboxAccounts)
  const clocks = yield* Effect.serviceOption(TestClocks.TestClocks)
  return [
    ...(Option.isSome(faucet) ? [] : ["faucet"]),
    ...(Option.isSome(accounts)
      ? []
      : [
          "registerBankAccount",
          "listBankAccounts",
          "getBankAccount",
          "bankAccountTransfers",
          "removeBankAccount"
        ]),
    ...(Option.isSome(clocks) ? [] : ["getClock", "advanceClock"])
  ].map((endpoint): Docs.EndpointName => ["sandbox", endpoint])
})

/**
 * The hosted pages' layers, each adding its routes to `PageRouter` (`internal/pages/router.ts`);
 * a new set of pages is one more entry here.
 */
const pageLayers = (settings: Partial<Settings>) => [
  ...(settings.pages === false ? [] : [Pages.layer]),
  ...(settings.dashboard === undefined ? [] : [Dashboard.layer])
]

/**
 * The edge (`internal/edge.ts`) as the API's middleware, over the page router once every page
 * layer has added its routes.
 */
const edgeLayer = (settings: Partial<Settings>) =>
  HttpApiBuilder.middleware(edge).pipe(
    Layer.provide(Layer.mergeAll(Layer.empty, ...pageLayers(settings))),
    Layer.provideMerge(Pages.PageRouter.Live)
  )

/**
 * The API with its handlers, auth, limits, error envelopes, `/openapi.json` and `/docs`, and the
 * hosted pages (`/pay/{id}`, `/authorize`) on their own router unless `settings.pages` is false.
 */
export const layer = (
  settings: Partial<Settings> = {}
): Layer.Layer<HttpApi.Api | Pages.PageRouter, never, EngineServices> => {
  const api = HttpApiBuilder.api(CobroApi).pipe(
    Layer.provide(handlers),
    Layer.provide(Layer.mergeAll(layerAuthentication, layerPartnerAuthentication, RateLimit.layer))
  )
  const docs =
    settings.docs === false
      ? Layer.empty
      : Layer.unwrapEffect(
          Effect.map(unservedRoutes, (unserved) =>
            Docs.layer({ openApi: "/openapi.json", docs: "/docs" }, unserved)
          )
        )
  // Built on the engine's services it calls, not on the host's whole context: each group keeps
  // the context it was built in and copies it into every request (`internal/restricted.ts`).
  return restricted(
    Layer.mergeAll(
      docs,
      edgeLayer(settings),
      // Preflights and the browser routes' CORS headers (`Cors.ts`), whichever side of the
      // boundary it lands on: it gives the request its id itself, and touches no other route.
      HttpApiBuilder.middleware(Cors.middleware)
    ).pipe(
      Layer.provideMerge(api),
      Layer.provide(limits(settings)),
      // The router's own limit on a path parameter (100 by default) would make a longer id, such
      // as a payment id of a 64-character user id and external id, a path it does not know.
      Layer.provideMerge(HttpRouter.setRouterConfig({ maxParamLength: MAX_PARAM_LENGTH }))
    ),
    engineServices
  )
}

/**
 * A fetch-style handler over `engine`: `(Request) => Promise<Response>`. Call `dispose` on
 * shutdown to release the engine's resources (database pools).
 */
export const toWebHandler = <E>(
  engine: Layer.Layer<EngineServices, E>,
  settings: Partial<Settings> = {}
): {
  readonly handler: (request: Request) => Promise<Response>
  readonly dispose: () => Promise<void>
} =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(layer(settings), HttpServer.layerContext).pipe(Layer.provide(engine)) as Layer.Layer<
      HttpApi.Api | HttpRouterDefaultServices
    >
  )

type HttpRouterDefaultServices = Layer.Layer.Success<typeof HttpServer.layerContext>
