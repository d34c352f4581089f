/**
 * What the server and every CLI command run on: the storage the configuration names, the engine's
 * services over it, the bank, the webhook delivery service and, in sandbox mode, the faucet and
 * the merchants' test clocks. No background work and no HTTP here (see `Server`).
 *
 * The bank is `COBRO_BANK`'s: the sandbox bank, or BIND PSP (`@cobro/bank-bind`, settings
 * `COBRO_BIND_*`) with the reconciliation of its statement under the key `bind:<client id>`. The
 * sandbox bank's controls (`SandboxBank`: the faucet's transfers) stay in both cases; on BIND they
 * credit the ledger without money at the bank, which is why the server refuses production mode on
 * anything but a real bank and the faucet exists only in sandbox mode.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { BindBank, BindConfig } from "@cobro/bank-bind"
import {
  BankProvider,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  Reconciliation,
  SecondFactor,
  SecondFactors,
  WebSessions
} from "@cobro/core"
import { type Transactor, type UserRepository } from "@cobro/core/ports"
import {
  SandboxAccounts,
  SandboxBank,
  type SandboxClocks,
  SandboxEngine,
  type TestClocks
} from "@cobro/bank-sandbox"
import type { CobroHttp } from "@cobro/http"
import { NodeTransport, Webhooks, type WebhooksConfig } from "@cobro/webhooks"
import { ConfigError } from "effect"
import { Context, Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import * as Authenticator from "./Authenticator.js"
import * as NodeCrypto from "./NodeCrypto.js"
import * as SandboxClock from "./SandboxClock.js"
import type { ServerConfig } from "./ServerConfig.js"
import * as SmtpMailer from "./SmtpMailer.js"
import * as Storage from "./Storage.js"

/** The engine's services the server uses in both modes. */
export type Services =
  | Storage.Services
  | Layer.Layer.Success<typeof Engine.services>
  | CobroHttp.EngineServices
  | SandboxBank.SandboxBank
  | Reconciliation.Reconciliation
  | Webhooks.Webhooks
  | WebhooksConfig.WebhooksConfig
  | SecondFactors.SecondFactors
  | WebSessions.WebSessions

export type LayerError = Storage.StorageError | ConfigError.ConfigError

/** The engine's settings from the server's configuration. */
export const engineSettings = (config: ServerConfig): Partial<EngineConfig.EngineSettings> => ({
  paymentPageBaseUrl: config.publicUrl,
  secretKey: config.secretKey,
  userTokenLifetime: config.tokenLifetime,
  idempotencyLease: config.idempotencyLease,
  transferCheckInterval: config.transferCheckInterval,
  // The transport's policy (`webhooks` below): no URL is accepted that it will never contact.
  webhookDestinations: config.mode
})

/**
 * The sandbox's second factor, stateless: the code of a request is `SecondFactor.sandboxCode` of
 * its id, so it checks on any instance and after a restart (core's `layerSandbox` remembers the
 * codes it delivered in memory, which suits one process only). The delivery is a log line with
 * the code; `cobro sandbox codes` lists the open ones. Anyone can compute such a code: never
 * production's (`secondFactor`).
 */
export const sandboxSecondFactor: Layer.Layer<SecondFactor.SecondFactor> = Layer.succeed(
  SecondFactor.SecondFactor,
  SecondFactor.SecondFactor.of({
    deliver: ({ request_id, user_id }) =>
      Effect.logInfo("2FA code delivered (sandbox second factor)").pipe(
        Effect.annotateLogs({ request_id, user_id, code: SecondFactor.sandboxCode(request_id) })
      ),
    check: ({ code, request_id }) => Effect.succeed(code === SecondFactor.sandboxCode(request_id))
  })
)

/**
 * The merchants' second factors (`SecondFactors`: TOTP or e-mail codes, enrolled through the API
 * and the CLI) in both modes, and the `SecondFactor` that verifies payout accounts: in production
 * the merchant's enrolled factor (none enrolled: 409 `second_factor.not_enrolled`), in the
 * sandbox its visible codes.
 */
const secondFactor = (config: ServerConfig) =>
  // The dashboard's sessions, on the merchants' factors (production's sign-in asks for a code).
  WebSessions.WebSessions.Default.pipe(
    Layer.provideMerge(
      config.mode === "sandbox"
        ? Layer.merge(SecondFactors.SecondFactors.Default, sandboxSecondFactor)
        : SecondFactors.layerPort.pipe(Layer.provideMerge(SecondFactors.SecondFactors.Default))
    )
  )

/**
 * The bank of `config.bank` as `BankProvider`, with the sandbox's controls, and the key of its
 * collecting account's reconciliation cursor.
 */
const bank = (config: ServerConfig) => {
  // The sandbox bank also knows the accounts testers registered (stored: see `SandboxAccounts`).
  if (config.bank === "sandbox") return SandboxAccounts.bankLayer
  const controls = Layer.map(SandboxBank.layer, Context.omit(BankProvider.BankProvider))
  return Layer.merge(
    controls,
    Layer.unwrapEffect(
      Effect.flatMap(BindConfig.config, (settings) =>
        Effect.map(bindHttpClient(settings.mtls), (client) =>
          BindBank.layer(settings).pipe(Layer.provide(client))
        )
      )
    )
  )
}

/**
 * The HTTP client of the calls to BIND: fetch, or node's with the client certificate BIND signed
 * when the calls go over mTLS (`COBRO_BIND_TLS_CERT`, `…_KEY`, `…_CA`; read once at start).
 */
const bindHttpClient = (mtls: Option.Option<BindConfig.MtlsFiles>) =>
  Option.match(mtls, {
    onNone: () => Effect.succeed(FetchHttpClient.layer),
    onSome: (files) =>
      Effect.try({
        try: () => ({
          cert: readFileSync(files.cert),
          key: readFileSync(files.key),
          ...Option.match(files.ca, { onNone: () => ({}), onSome: (ca) => ({ ca: readFileSync(ca) }) })
        }),
        catch: (e) =>
          ConfigError.InvalidData(
            ["COBRO_BIND_TLS_CERT"],
            `the mTLS certificate, key or CA cannot be read: ${e instanceof Error ? e.message : String(e)}`
          )
      }).pipe(
        Effect.map((options) =>
          NodeHttpClient.layerWithoutAgent.pipe(Layer.provide(NodeHttpClient.makeAgentLayer(options)))
        )
      )
  })

/** The reconciliation of the bank's statement, one cursor per collecting account. */
const reconciliation = (config: ServerConfig) =>
  config.bank === "sandbox"
    ? Reconciliation.layer({ account: "sandbox" })
    : Layer.unwrapEffect(
        Effect.map(BindConfig.config, (bind) => Reconciliation.layer({ account: `bind:${bind.clientId}` }))
      )

/** Everything but storage that the engine's services need. */
const ports = (config: ServerConfig) =>
  Layer.mergeAll(
    FeePolicy.layer(),
    ExchangeRates.layerFixed(),
    NodeCrypto.layer(config.secretKey),
    EngineConfig.layer(engineSettings(config)),
    bank(config),
    Authenticator.layer,
    SmtpMailer.layer(config.mode, config.publicUrl)
  )

/**
 * The webhook delivery service over the engine's storage. Single integration point with
 * `@cobro/webhooks`: the transport's SSRF guard follows the mode (loopback receivers are allowed
 * only in the sandbox).
 */
const webhooks = (config: ServerConfig) =>
  // `webhook-timestamp` is core's `RealTime`, which the sandbox clock's layer provides.
  Webhooks.layer({ pollInterval: config.webhookPollInterval }).pipe(
    Layer.provide(NodeTransport.layer({ mode: config.mode }))
  )

/** Production: the engine without the faucet, on real time. */
export const layerProduction = (config: ServerConfig): Layer.Layer<Services, LayerError> =>
  Layer.merge(webhooks(config), reconciliation(config)).pipe(
    Layer.provideMerge(Engine.services),
    Layer.provideMerge(secondFactor(config)),
    Layer.provideMerge(ports(config)),
    Layer.provideMerge(Storage.layer(config.database, config))
  )

/**
 * The bank accounts sandbox testers register (`POST /sandbox/bank-accounts`): only on the sandbox
 * bank, the only bank that can hold them (on BIND the routes answer 404).
 */
const sandboxAccounts = (
  config: ServerConfig
): Layer.Layer<
  never,
  never,
  SandboxBank.SandboxBank | Storage.Services | UserRepository.UserRepository | Transactor.Transactor
> => (config.bank === "sandbox" ? SandboxAccounts.SandboxAccounts.Default : Layer.empty)

/**
 * Sandbox: the faucet, the accounts testers register at the sandbox bank, and the merchants'
 * test clocks (`MerchantClocks` for everything on top of them, and `TestClocks` for the routes).
 */
export const layerSandbox = (
  config: ServerConfig
): Layer.Layer<
  | Services
  | SandboxClocks.SandboxClocks
  | TestClocks.TestClocks
  | Layer.Layer.Success<typeof SandboxEngine.sandboxServices>,
  LayerError
> =>
  SandboxClock.testClocks.pipe(
    Layer.provideMerge(Layer.mergeAll(webhooks(config), reconciliation(config), sandboxAccounts(config))),
    Layer.provideMerge(SandboxEngine.sandboxServices),
    Layer.provideMerge(secondFactor(config)),
    Layer.provideMerge(ports(config)),
    Layer.provideMerge(SandboxClock.layer),
    Layer.provideMerge(Storage.layer(config.database, config))
  )

/** The services of `config.mode`. */
export const layer = (config: ServerConfig): Layer.Layer<Services, LayerError> =>
  config.mode === "sandbox" ? layerSandbox(config) : layerProduction(config)
