/**
 * The server's configuration, read from the environment with Effect `Config` (tests pass a
 * `ConfigProvider.fromMap`). Every variable has a default that runs a sandbox on this machine,
 * except the secret key of production mode. A missing or bad value fails with a message naming
 * the variable and what it expects; all problems are reported at once.
 *
 * A new setting: its variable's name and help in `internal/configVariables.ts`, a reader below
 * built from `internal/configReaders.ts` (or a module of its own beside the rate limits', the
 * metrics' and the key's), a field of `ServerConfig` and an entry of `config`.
 */
import { Cors, type HttpConfig } from "@cobro/http"
import { Config, ConfigError, Duration, Effect, Either, LogLevel, Option, Redacted, Schema } from "effect"
import {
  type Database,
  DEFAULT_DATABASE_URL,
  defaultDatabase,
  parseDatabaseUrl
} from "./internal/database.js"
import { atLeastOneSecond, backgroundInterval, explained, flag, invalid } from "./internal/configReaders.js"
import { type DashboardSessions, dashboardSessions } from "./internal/dashboardConfig.js"
import { variables } from "./internal/configVariables.js"
import { type ListenAddress, metricsAddress, metricsToken } from "./internal/metricsConfig.js"
import { limits, redisUrl } from "./internal/rateLimitConfig.js"
import { resolveKey } from "./internal/secretKey.js"
import * as OtelConfig from "./internal/otelConfig.js"

export { variableHelp, variables } from "./internal/configVariables.js"
export { type ListenAddress, parseListenAddress } from "./internal/metricsConfig.js"
export {
  type Database,
  DEFAULT_DATABASE_URL,
  defaultDatabase,
  describeDatabase,
  parseDatabaseUrl,
  sqlitePath
} from "./internal/database.js"

/** OTLP/HTTP trace export, from the standard `OTEL_*` variables (see `internal/otelConfig.ts`). */
export type Tracing = OtelConfig.Tracing

export type Mode = "sandbox" | "production"

/** The banks the server can run on: the simulated sandbox bank, or BIND PSP (`COBRO_BIND_*`). */
export const banks = ["sandbox", "bind"] as const

export type Bank = (typeof banks)[number]

export interface ServerConfig {
  /** `sandbox`: faucet, test clock, loopback webhooks, demo merchant. `production`: none of them. */
  readonly mode: Mode
  /** The bank behind the engine; production mode refuses to start on the sandbox bank. */
  readonly bank: Bank
  /** How often the bank's statement is reconciled (`Reconciliation.run`) on a real bank. */
  readonly reconcileInterval: Duration.Duration
  /** TCP port of the HTTP server; 0 picks a free one. */
  readonly port: number
  readonly database: Database
  /** The key client secrets are sealed under; sandbox without a key uses the public sandbox key. */
  readonly secretKey: Redacted.Redacted<Uint8Array>
  /** Whether `secretKey` is the publicly known sandbox key. */
  readonly sandboxKey: boolean
  /** Base of `payment_url` and of the URLs the server prints, without a trailing slash. */
  readonly publicUrl: string
  /** How often `Jobs.runDue` runs (expiries, payout schedules, split payouts). */
  readonly jobInterval: Duration.Duration
  /** Behind one trusted reverse proxy: the client address is the last `X-Forwarded-For` entry. */
  readonly trustProxy: boolean
  /**
   * Whether the HTTP API applies its own per-address and per-merchant rate limits (off when a
   * proxy in front limits, and in benchmarks).
   */
  readonly rateLimits: boolean
  /** The API's rate limits (`COBRO_RATE_LIMIT_*`), when `rateLimits` is on. */
  readonly limits: HttpConfig.RateLimits
  /**
   * A Redis server the rate limits count in, shared by every instance (`COBRO_REDIS_URL`). None:
   * they count in Postgres when the database is Postgres, in this process on SQLite.
   */
  readonly redisUrl: Option.Option<Redacted.Redacted<URL>>
  readonly logLevel: LogLevel.LogLevel
  /** How log lines are written: `logfmt` (the default), `json` (one object a line) or `pretty`. */
  readonly logFormat: LogFormat
  /**
   * How long a shutdown keeps the port open after `/readyz` turns 503, so that a balancer polling
   * it stops sending traffic before the listener closes.
   */
  readonly shutdownDelay: Duration.Duration
  /** Where spans are exported (OTLP/HTTP); none: tracing is off and spans cost nothing. */
  readonly tracing: Option.Option<OtelConfig.Tracing>
  /**
   * The bearer token `GET /metrics` requires. Without it and without `metricsAddress`, `/metrics`
   * is open in sandbox mode and not served at all in production (`metricsExposure`).
   */
  readonly metricsToken: Option.Option<Redacted.Redacted>
  /** Where `GET /metrics` listens instead of the API's port (its own listener, e.g. a private interface). */
  readonly metricsAddress: Option.Option<ListenAddress>
  /**
   * Lifetime of a user token from `POST /users/{id}/tokens` (`expires_in`). Short lifetimes let a
   * client's tests see its token refresh; tokens minted before a change keep their expiry.
   */
  readonly tokenLifetime: Duration.Duration
  /**
   * The lease of a request holding an `Idempotency-Key` (`EngineConfig.idempotencyLease`): a live
   * request renews it, so this is how soon the key of a request whose process died is free again.
   */
  readonly idempotencyLease: Duration.Duration
  /** How long a dashboard session lives (real time). */
  readonly dashboard: DashboardSessions
  /**
   * The origins whose pages may call the routes a browser may call (POST /payments/ and
   * GET /payments/{id}/public; `@cobro/http`'s `Cors`), exact; none by default.
   */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * How long a send owns an outgoing transfer before the settle job asks the bank about it, and
   * how often a pending one is asked again (`EngineConfig.transferCheckInterval`). Longer than a
   * bank call can take.
   */
  readonly transferCheckInterval: Duration.Duration
  /** How often the server looks for webhook deliveries that are due (`WebhooksConfig.pollInterval`). */
  readonly webhookPollInterval: Duration.Duration
  /**
   * Set when `COBRO_DATABASE_URL` is unset: the directory the search for `.cobro/cobro.db` started
   * from (see `defaultDatabase`), for a message saying where the database was looked for.
   */
  readonly searchedFrom?: string
}

const mode = explained(
  variables.mode,
  Config.literal("sandbox", "production")(variables.mode),
  (value) => `must be "sandbox" or "production", got "${value}"`
).pipe(Config.withDefault("sandbox" as const))

const bank = explained(
  variables.bank,
  Config.literal(...banks)(variables.bank),
  (value) => `must be ${banks.map((b) => `"${b}"`).join(" or ")}, got "${value}"`
).pipe(Config.withDefault("sandbox" as const))

const reconcileInterval = explained(
  variables.reconcileInterval,
  Config.duration(variables.reconcileInterval).pipe(
    Config.validate({
      message: "",
      validation: (d) => Duration.isFinite(d) && Duration.greaterThanOrEqualTo(d, Duration.seconds(1))
    })
  ),
  (value) => `must be a duration of at least 1 second such as "5 minutes", got "${value}"`
).pipe(Config.withDefault(Duration.minutes(5)))

/** Effect's `Config.port` (1 to 65535), and 0: a free port. */
const port = explained(
  variables.port,
  Config.orElse(Config.literal(0)(variables.port), () => Config.port(variables.port)),
  (value) => `must be a TCP port (an integer from 0 to 65535), got "${value}"`
).pipe(Config.withDefault(3000))

const database = Config.string(variables.database).pipe(
  Config.withDefault(DEFAULT_DATABASE_URL),
  Config.mapOrFail((value) => Either.mapLeft(parseDatabaseUrl(value), (m) => invalid(variables.database, m)))
)

const secretKeyText = Config.option(Config.redacted(variables.secretKey))

const isHttpBase = (url: URL) =>
  (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === ""

const publicUrlText = Config.option(
  explained(
    variables.publicUrl,
    Config.url(variables.publicUrl).pipe(Config.validate({ message: "", validation: isHttpBase })),
    (value) =>
      Either.match(
        Either.try(() => new URL(value)),
        {
          onLeft: () => `must be an absolute http(s) URL such as https://pay.example.com, got "${value}"`,
          onRight: (url) =>
            url.protocol !== "http:" && url.protocol !== "https:"
              ? `must be an http or https URL, got "${value}"`
              : "must not have a query or a fragment"
        }
      )
  )
)

const jobInterval = backgroundInterval(variables.jobInterval, Duration.seconds(5))

const webhookPollInterval = backgroundInterval(variables.webhookPollInterval, Duration.seconds(1))

const trustProxy = flag(variables.trustProxy, false)

const rateLimits = flag(variables.rateLimits, true)

/** Effect's `Config.logLevel` (its labels, any case: `warn`, `off`), or a level's tag (`warning`, `none`). */
const logLevel = explained(
  variables.logLevel,
  Config.orElse(Config.logLevel(variables.logLevel), () =>
    Config.string(variables.logLevel).pipe(
      Config.mapOrFail((value) =>
        Either.fromOption(
          Option.fromNullable(LogLevel.allLevels.find((l) => l._tag.toLowerCase() === value.toLowerCase())),
          () => invalid(variables.logLevel, "is not a log level")
        )
      )
    )
  ),
  (value) =>
    `must be one of ${LogLevel.allLevels.map((l) => l.label.toLowerCase()).join(", ")}, got "${value}"`
).pipe(Config.withDefault(LogLevel.Info))

export const logFormats = ["logfmt", "json", "pretty"] as const

export type LogFormat = (typeof logFormats)[number]

const logFormat = explained(
  variables.logFormat,
  Config.literal(...logFormats)(variables.logFormat),
  (value) => `must be logfmt, json or pretty, got "${value}"`
).pipe(Config.withDefault("logfmt" as const))

const shutdownDelay = explained(
  variables.shutdownDelay,
  Config.duration(variables.shutdownDelay).pipe(
    Config.validate({ message: "", validation: Duration.isFinite })
  ),
  (value) => `must be a finite duration such as "10 seconds" (0 closes the port at once), got "${value}"`
).pipe(Config.withDefault(Duration.zero))

const tokenLifetime = atLeastOneSecond(variables.tokenLifetime, '"1 hour" or "15 minutes"', Duration.hours(1))

const idempotencyLease = atLeastOneSecond(variables.idempotencyLease, '"5 seconds"', Duration.seconds(5))

const transferCheckInterval = atLeastOneSecond(
  variables.transferCheckInterval,
  '"1 minute" or "30 seconds"',
  Duration.minutes(1)
)

/** The key: required in production; the public sandbox key in a sandbox without one. */
const secretKey = Config.all({ mode, text: secretKeyText }).pipe(
  Config.mapOrFail(({ mode, text }) => resolveKey(mode, text))
)

const publicUrl = Config.all({ port, url: publicUrlText }).pipe(
  Config.map(({ port, url }) =>
    Option.match(url, {
      onNone: () => `http://localhost:${port === 0 ? 3000 : port}`,
      onSome: (url) => url.toString().replace(/\/+$/, "")
    })
  )
)

/** How `GET /metrics` is served: what the start banner says and what the server mounts. */
export type MetricsExposure =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Token" }
  | { readonly _tag: "Address"; readonly address: ListenAddress; readonly token: boolean }
  | { readonly _tag: "Off" }

/**
 * On its own address when `COBRO_METRICS_ADDR` is set (behind the token too when there is one);
 * else on the API's port behind the token; else open in sandbox mode, and not served in
 * production (metrics are not for anyone who finds the API).
 */
export const metricsExposure = (config: ServerConfig): MetricsExposure =>
  Option.isSome(config.metricsAddress)
    ? { _tag: "Address", address: config.metricsAddress.value, token: Option.isSome(config.metricsToken) }
    : Option.isSome(config.metricsToken)
      ? { _tag: "Token" }
      : config.mode === "sandbox"
        ? { _tag: "Open" }
        : { _tag: "Off" }

/** `COBRO_CORS_ORIGINS`: origins separated by commas, each `scheme://host[:port]` and nothing more. */
const corsOrigins = Config.string(variables.corsOrigins).pipe(
  Config.withDefault(""),
  Config.mapOrFail((text) => {
    const origins = text
      .split(",")
      .map((origin) => origin.trim())
      .filter((origin) => origin !== "")
    const bad = origins.find((origin) => !Cors.isOrigin(origin))
    return bad === undefined
      ? Either.right(origins)
      : Either.left(
          invalid(
            variables.corsOrigins,
            `must list origins such as https://shop.example.com (scheme, host and port only, no path or trailing slash), separated by commas; got "${bad}"`
          )
        )
  })
)

/** The whole configuration. */
export const config: Config.Config<ServerConfig> = Config.all({
  mode,
  bank,
  reconcileInterval,
  port,
  database,
  secretKey,
  publicUrl,
  jobInterval,
  trustProxy,
  rateLimits,
  limits,
  redisUrl,
  logLevel,
  logFormat,
  shutdownDelay,
  tracing: OtelConfig.tracing,
  metricsToken,
  metricsAddress,
  tokenLifetime,
  idempotencyLease,
  dashboard: dashboardSessions,
  corsOrigins,
  transferCheckInterval,
  webhookPollInterval
}).pipe(
  Config.map(({ secretKey, ...rest }) => ({
    ...rest,
    secretKey: secretKey.key,
    sandboxKey: secretKey.sandbox
  }))
)

/**
 * Why the server must not start with `config`: production mode on the sandbox bank, which moves
 * no money (a payment would be "paid" by nothing). None when it may.
 */
export const startProblem = (config: ServerConfig): Option.Option<string> =>
  config.mode === "production" && config.bank === "sandbox"
    ? Option.some(
        `${variables.bank} must name a real bank in production mode: the sandbox bank moves no money. Set ${variables.bank}=bind and the COBRO_BIND_* settings (docs/operations.md, "Going live with BIND")`
      )
    : Option.none()

/** A configuration that cannot be used, with one line per problem (`VARIABLE: what is wrong`). */
export class ServerConfigError extends Schema.TaggedError<ServerConfigError>()("ServerConfigError", {
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `invalid configuration:\n${this.problems.map((p) => `  ${p}`).join("\n")}`
  }
}

/** Each leaf of a `ConfigError` as `NAME: message`. */
export const problemsOf = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
      return [...problemsOf(error.left), ...problemsOf(error.right)]
    case "Or":
      // Both alternatives refused the value: the last one (`explained`'s) says why in our words.
      return problemsOf(error.right)
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported": {
      const name = error.path.join("_")
      const message =
        error._op === "MissingData" && /^Expected .* to exist/.test(error.message)
          ? "is required"
          : error.message
      return [name === "" ? message : `${name} ${message}`]
    }
  }
}

const uniqueProblems = (error: ConfigError.ConfigError): ReadonlyArray<string> => [
  ...new Set(problemsOf(error))
]

/**
 * Reads the configuration from the current `ConfigProvider` (the environment by default). The
 * server and every CLI command read it here: they resolve the database the same way.
 */
export const load: Effect.Effect<ServerConfig, ServerConfigError> = Effect.gen(function* () {
  const loaded = yield* Effect.mapError(
    config,
    (error) => new ServerConfigError({ problems: uniqueProblems(error) })
  )
  const explicit = yield* Effect.orElseSucceed(Config.option(Config.string(variables.database)), () =>
    Option.none<string>()
  )
  if (Option.isSome(explicit)) return loaded
  const cwd = process.cwd()
  return { ...loaded, database: defaultDatabase(cwd), searchedFrom: cwd }
})
