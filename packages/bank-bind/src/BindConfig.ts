/**
 * Settings of the BIND adapter, read through `Config` (environment variables by default). The
 * client secret and the webhook secret are `Redacted`: they print as `<redacted>` and are never
 * logged.
 */
import { Config, ConfigError, Duration, Either, type Option, type Redacted } from "effect"
import { parseAllowList } from "./internal/allowList.js"

export interface BindSettings {
  /** BIND's API gateway, e.g. `https://gw-staging-qrbind.epays.services` for staging. */
  readonly baseUrl: string
  /** The OAuth 2 token endpoint that issues BIND's bearer tokens (client credentials). */
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  /** The `scope` asked for at login ("" sends none). */
  readonly scope: string
  /** Every call to BIND, login included, gives up after this long (`unavailable`). */
  readonly timeout: Duration.Duration
  /** A token is renewed this long before it expires. */
  readonly refreshBefore: Duration.Duration
  /** Attempts after the first for idempotent calls that fail `unavailable`. */
  readonly retries: number
  /** The first wait between retries (exponential, jittered). */
  readonly retryBase: Duration.Duration
  /** The shared secret BIND sends with the incoming-transfer webhook; `None` accepts no webhook. */
  readonly webhookSecret: Option.Option<Redacted.Redacted>
  /** The header that carries it (lower case). */
  readonly webhookSecretHeader: string
}

/** `COBRO_BIND_*`: BASE_URL, TOKEN_URL, CLIENT_ID, CLIENT_SECRET are required. */
export const config: Config.Config<BindSettings> = Config.all({
  baseUrl: Config.string("COBRO_BIND_BASE_URL"),
  tokenUrl: Config.string("COBRO_BIND_TOKEN_URL"),
  clientId: Config.string("COBRO_BIND_CLIENT_ID"),
  clientSecret: Config.redacted("COBRO_BIND_CLIENT_SECRET"),
  scope: Config.withDefault(Config.string("COBRO_BIND_SCOPE"), ""),
  timeout: Config.withDefault(Config.duration("COBRO_BIND_TIMEOUT"), Duration.seconds(10)),
  refreshBefore: Config.withDefault(Config.duration("COBRO_BIND_TOKEN_REFRESH_BEFORE"), Duration.minutes(5)),
  retries: Config.withDefault(
    Config.integer("COBRO_BIND_RETRIES").pipe(
      Config.validate({ message: "must be between 0 and 10", validation: (n) => n >= 0 && n <= 10 })
    ),
    3
  ),
  retryBase: Config.withDefault(Config.duration("COBRO_BIND_RETRY_BASE"), Duration.millis(200)),
  webhookSecret: Config.option(Config.redacted("COBRO_BIND_WEBHOOK_SECRET")),
  webhookSecretHeader: Config.withDefault(
    Config.string("COBRO_BIND_WEBHOOK_SECRET_HEADER").pipe(Config.map((h) => h.toLowerCase())),
    "x-bind-webhook-secret"
  )
})

/** What the incoming-transfer route checks: the shared secret, and where requests may come from. */
export interface IngressSettings extends Pick<BindSettings, "webhookSecret" | "webhookSecretHeader"> {
  /** Addresses and CIDR blocks BIND notifies from; empty: any source (the secret still applies). */
  readonly allow: ReadonlyArray<string>
}

/** `COBRO_BIND_WEBHOOK_SECRET`, `…_SECRET_HEADER` and `COBRO_BIND_WEBHOOK_ALLOW` (comma-separated). */
export const ingressConfig: Config.Config<IngressSettings> = Config.all({
  webhookSecret: Config.option(Config.redacted("COBRO_BIND_WEBHOOK_SECRET")),
  webhookSecretHeader: Config.withDefault(
    Config.string("COBRO_BIND_WEBHOOK_SECRET_HEADER").pipe(Config.map((h) => h.toLowerCase())),
    "x-bind-webhook-secret"
  ),
  allow: Config.withDefault(
    Config.string("COBRO_BIND_WEBHOOK_ALLOW").pipe(
      Config.mapOrFail((text) =>
        Either.mapLeft(parseAllowList(text), (message) => ConfigError.InvalidData([], message))
      )
    ),
    []
  )
})
