/**
 * What the server and every CLI command run on: the storage the configuration names, the engine's
 * services over it, the bank, the webhook delivery service and, in sandbox mode, the faucet and
 * the shared test clock. No background work and no HTTP here (see `Server`).
 *
 * The bank is the sandbox bank in both modes: cobro ships no integration with a real bank (a host
 * provides its `BankProvider` through the library). Production mode differs in what it exposes
 * (no faucet, no test clock, webhooks only to public addresses, a secret key of its own), not in
 * the bank it talks to; the server says so when it starts.
 */
import {
  Crypto,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  SandboxBank,
  SecondFactor
} from "@cobro/core"
import type { CobroHttp } from "@cobro/http"
import { NodeTransport, Webhooks, type WebhooksConfig } from "@cobro/webhooks"
import type { ConfigError } from "effect"
import { Effect, Layer } from "effect"
import * as SandboxClock from "./SandboxClock.js"
import type { ServerConfig } from "./ServerConfig.js"
import * as Storage from "./Storage.js"

/** The engine's services the server uses in both modes. */
export type Services =
  | Storage.Services
  | Layer.Layer.Success<typeof Engine.services>
  | CobroHttp.EngineServices
  | SandboxBank.SandboxBank
  | Webhooks.Webhooks
  | WebhooksConfig.WebhooksConfig

export type LayerError = Storage.StorageError | ConfigError.ConfigError

/** The engine's settings from the server's configuration. */
export const engineSettings = (config: ServerConfig): Partial<EngineConfig.EngineSettings> => ({
  paymentPageBaseUrl: config.publicUrl,
  secretKey: config.secretKey,
  userTokenLifetime: config.tokenLifetime,
  // The transport's policy (`webhooks` below): no URL is accepted that it will never contact.
  webhookDestinations: config.mode
})

/**
 * The sandbox's second factor, stateless: the code of a request is `SecondFactor.sandboxCode` of
 * its id, so it checks on any instance and after a restart (core's `layerSandbox` remembers the
 * codes it delivered in memory, which suits one process only). In sandbox mode the delivery is a
 * log line with the code; `cobro sandbox codes` lists the open ones.
 */
export const sandboxSecondFactor = (mode: ServerConfig["mode"]): Layer.Layer<SecondFactor.SecondFactor> =>
  Layer.succeed(
    SecondFactor.SecondFactor,
    SecondFactor.SecondFactor.of({
      deliver: ({ request_id, user_id }) =>
        Effect.logInfo("2FA code delivered (sandbox second factor)").pipe(
          Effect.annotateLogs({
            request_id,
            user_id,
            ...(mode === "sandbox" ? { code: SecondFactor.sandboxCode(request_id) } : {})
          })
        ),
      check: (request_id, code) => Effect.succeed(code === SecondFactor.sandboxCode(request_id))
    })
  )

/** Everything but storage that the engine's services need. */
const ports = (config: ServerConfig) =>
  Layer.mergeAll(
    FeePolicy.layer(),
    ExchangeRates.layerFixed(),
    Crypto.layerWebCrypto(config.secretKey),
    EngineConfig.layer(engineSettings(config)),
    SandboxBank.layer,
    sandboxSecondFactor(config.mode)
  )

/**
 * The webhook delivery service over the engine's storage. Single integration point with
 * `@cobro/webhooks`: the transport's SSRF guard follows the mode (loopback receivers are allowed
 * only in the sandbox).
 */
const webhooks = (config: ServerConfig) =>
  // `webhook-timestamp` is core's `RealTime`, which the sandbox clock's layer provides.
  Webhooks.layer().pipe(Layer.provide(NodeTransport.layer({ mode: config.mode })))

/** Production: the engine without the faucet, on real time. */
export const layerProduction = (config: ServerConfig): Layer.Layer<Services, LayerError> =>
  webhooks(config).pipe(
    Layer.provideMerge(Engine.services),
    Layer.provideMerge(ports(config)),
    Layer.provideMerge(Storage.layer(config.database))
  )

/** Sandbox: the faucet, and the shared test clock as the `Clock` of everything on top of it. */
export const layerSandbox = (
  config: ServerConfig
): Layer.Layer<
  Services | SandboxClock.SandboxClock | Layer.Layer.Success<typeof Engine.sandboxServices>,
  LayerError
> =>
  webhooks(config).pipe(
    Layer.provideMerge(Engine.sandboxServices),
    Layer.provideMerge(ports(config)),
    Layer.provideMerge(SandboxClock.layer),
    Layer.provideMerge(Storage.layer(config.database))
  )

/** The services of `config.mode`. */
export const layer = (config: ServerConfig): Layer.Layer<Services, LayerError> =>
  config.mode === "sandbox" ? layerSandbox(config) : layerProduction(config)
