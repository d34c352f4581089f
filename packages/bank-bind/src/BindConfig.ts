/**
 * Settings of the BIND adapter, read through `Config` (environment variables by default). The
 * base URL, the token endpoint and the scope default to those BIND documents for the environment
 * (`COBRO_BIND_ENVIRONMENT`, "Entornos, Autenticación OAuth2"). The client secret and the webhook
 * secret are `Redacted`: they print as `<redacted>` and are never logged.
 */
import { Config, ConfigError, Duration, Either, Option, type Redacted } from "effect"
import { parseAllowList } from "./internal/allowList.js"
import { type Environment, environments } from "./internal/api.js"

/** The client certificate cobro presents to BIND's mTLS gateway (PEM file paths). */
export interface MtlsFiles {
  readonly cert: string
  readonly key: string
  /** The CA that signed BIND's gateway certificate, when not a public one. */
  readonly ca: Option.Option<string>
}

export interface BindSettings {
  /** BIND's API gateway (default: the environment's; its mTLS gateway with `mtls`). */
  readonly baseUrl: string
  /** The OAuth 2 token endpoint that issues BIND's bearer tokens (client credentials). */
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  /** The `scope` asked for at login (documented per environment; another one on the mTLS lane). */
  readonly scope: string
  /** The entity's CUIT: the holder of every CVU it opens (Crear CVU, Asignar alias, Eliminar CVU). */
  readonly cuit: string
  /** The entity's name, the CVU's holder name when the merchant's is not given. */
  readonly name: Option.Option<string>
  /** Every call to BIND, login included, gives up after this long (`unavailable`). */
  readonly timeout: Duration.Duration
  /** A token is renewed this long before it expires. */
  readonly refreshBefore: Duration.Duration
  /** Attempts after the first for idempotent calls that fail `unavailable`. */
  readonly retries: number
  /** The first wait between retries (exponential, jittered). */
  readonly retryBase: Duration.Duration
  /** How far back a notification's transfer is looked for in BIND's list to confirm it. */
  readonly confirmWindow: Duration.Duration
  /** The optional shared secret BIND's notifications carry; `None`: not checked. */
  readonly webhookSecret: Option.Option<Redacted.Redacted>
  /** The header that carries it (lower case). */
  readonly webhookSecretHeader: string
  /** Calls go over mTLS with this client certificate (the host's `HttpClient` presents it). */
  readonly mtls: Option.Option<MtlsFiles>
}

const environment: Config.Config<Environment> = Config.withDefault(
  Config.literal("staging", "production")("COBRO_BIND_ENVIRONMENT"),
  "staging"
)

const mtls: Config.Config<Option.Option<MtlsFiles>> = Config.option(
  Config.all({
    cert: Config.string("COBRO_BIND_TLS_CERT"),
    key: Config.string("COBRO_BIND_TLS_KEY"),
    ca: Config.option(Config.string("COBRO_BIND_TLS_CA"))
  })
)

const webhookSecret = Config.option(Config.redacted("COBRO_BIND_WEBHOOK_SECRET"))
const webhookSecretHeader = Config.withDefault(
  Config.string("COBRO_BIND_WEBHOOK_SECRET_HEADER").pipe(Config.map((h) => h.toLowerCase())),
  "x-bind-webhook-secret"
)

/**
 * `COBRO_BIND_*`: CLIENT_ID, CLIENT_SECRET and CUIT are required; ENVIRONMENT (staging or
 * production) gives BASE_URL, TOKEN_URL and SCOPE their documented defaults.
 */
export const config: Config.Config<BindSettings> = Config.all({
  environment,
  mtls,
  baseUrl: Config.option(Config.string("COBRO_BIND_BASE_URL")),
  tokenUrl: Config.option(Config.string("COBRO_BIND_TOKEN_URL")),
  scope: Config.option(Config.string("COBRO_BIND_SCOPE")),
  clientId: Config.string("COBRO_BIND_CLIENT_ID"),
  clientSecret: Config.redacted("COBRO_BIND_CLIENT_SECRET"),
  cuit: Config.string("COBRO_BIND_CUIT"),
  name: Config.option(Config.string("COBRO_BIND_NAME")),
  timeout: Config.withDefault(Config.duration("COBRO_BIND_TIMEOUT"), Duration.seconds(10)),
  refreshBefore: Config.withDefault(Config.duration("COBRO_BIND_TOKEN_REFRESH_BEFORE"), Duration.minutes(5)),
  retries: Config.withDefault(
    Config.integer("COBRO_BIND_RETRIES").pipe(
      Config.validate({ message: "must be between 0 and 10", validation: (n) => n >= 0 && n <= 10 })
    ),
    3
  ),
  retryBase: Config.withDefault(Config.duration("COBRO_BIND_RETRY_BASE"), Duration.millis(200)),
  confirmWindow: Config.withDefault(Config.duration("COBRO_BIND_CONFIRM_WINDOW"), Duration.days(7)),
  webhookSecret,
  webhookSecretHeader
}).pipe(
  Config.mapOrFail(({ environment: env, baseUrl, tokenUrl, scope, ...rest }) => {
    const documented = environments[env]
    const lane = Option.isSome(rest.mtls) ? documented.mtlsBaseUrl : documented.baseUrl
    const base = Option.getOrElse(baseUrl, () => lane)
    return base === undefined
      ? Either.left(
          ConfigError.MissingData(
            ["COBRO_BIND_BASE_URL"],
            `BIND documents no mTLS gateway for ${env}: set COBRO_BIND_BASE_URL to the one BIND gives you`
          )
        )
      : Either.right({
          ...rest,
          baseUrl: base,
          tokenUrl: Option.getOrElse(tokenUrl, () => documented.tokenUrl),
          scope: Option.getOrElse(scope, () => documented.scope)
        })
  })
)

/** What the notification route checks: the optional shared secret, and where requests may come from. */
export interface IngressSettings extends Pick<BindSettings, "webhookSecret" | "webhookSecretHeader"> {
  /** Addresses and CIDR blocks BIND notifies from; empty: any source. */
  readonly allow: ReadonlyArray<string>
  /**
   * The request must come over TLS with a client certificate the server verified (cobro
   * terminating TLS with `COBRO_TLS_CLIENT_CA`), or with the header a verifying proxy sets.
   */
  readonly clientCertificate: Option.Option<ClientCertificateCheck>
}

/** How BIND's client certificate is checked on the notification route. */
export type ClientCertificateCheck =
  /** cobro terminates TLS and verified the certificate against its CA (`socket.authorized`). */
  | { readonly _tag: "Tls" }
  /** A reverse proxy verified it and says so in `header` with `value` (e.g. nginx's `$ssl_client_verify`). */
  | { readonly _tag: "Proxy"; readonly header: string; readonly value: string }

/**
 * `COBRO_BIND_WEBHOOK_SECRET`, `…_SECRET_HEADER`, `COBRO_BIND_WEBHOOK_ALLOW` (comma-separated)
 * and `COBRO_BIND_WEBHOOK_CLIENT_CERT` (`tls`, or `header:<name>=<value>` for a verifying proxy).
 */
export const ingressConfig: Config.Config<IngressSettings> = Config.all({
  webhookSecret,
  webhookSecretHeader,
  allow: Config.withDefault(
    Config.string("COBRO_BIND_WEBHOOK_ALLOW").pipe(
      Config.mapOrFail((text) =>
        Either.mapLeft(parseAllowList(text), (message) => ConfigError.InvalidData([], message))
      )
    ),
    []
  ),
  clientCertificate: Config.option(
    Config.string("COBRO_BIND_WEBHOOK_CLIENT_CERT").pipe(
      Config.mapOrFail((text): Either.Either<ClientCertificateCheck, ConfigError.ConfigError> => {
        if (text === "tls") return Either.right({ _tag: "Tls" })
        const proxy = /^header:([A-Za-z0-9-]+)=(.+)$/.exec(text)
        return proxy === null
          ? Either.left(
              ConfigError.InvalidData(
                [],
                `must be "tls" or "header:<name>=<value>" (e.g. header:x-ssl-client-verify=SUCCESS), got "${text}"`
              )
            )
          : Either.right({ _tag: "Proxy", header: proxy[1]!.toLowerCase(), value: proxy[2]! })
      })
    )
  )
})
