/**
 * The server's configuration, read from the environment with Effect `Config` (tests pass a
 * `ConfigProvider.fromMap`). Every variable has a default that runs a sandbox on this machine,
 * except the secret key of production mode. A missing or bad value fails with a message naming
 * the variable and what it expects; all problems are reported at once.
 */
import { Crypto } from "@cobro/core"
import { Config, ConfigError, Duration, Effect, Either, LogLevel, Option, Redacted, Schema } from "effect"
import * as Path from "node:path"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as OtelConfig from "./internal/otelConfig.js"

/** OTLP/HTTP trace export, from the standard `OTEL_*` variables (see `internal/otelConfig.ts`). */
export type Tracing = OtelConfig.Tracing

export type Mode = "sandbox" | "production"

/** Where the data lives: a SQLite file or a Postgres database. */
export type Database =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted }

export interface ServerConfig {
  /** `sandbox`: faucet, test clock, loopback webhooks, demo merchant. `production`: none of them. */
  readonly mode: Mode
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
  /** The bearer token `GET /metrics` requires; none: the route is open (keep it off the internet). */
  readonly metricsToken: Option.Option<Redacted.Redacted>
  /**
   * Set when `COBRO_DATABASE_URL` is unset: the directory the search for `.cobro/cobro.db` started
   * from (see `defaultDatabase`), for a message saying where the database was looked for.
   */
  readonly searchedFrom?: string
}

export const DEFAULT_DATABASE_URL = "file:./.cobro/cobro.db"

/** The variables, for messages and docs. */
export const variables = {
  port: "PORT",
  mode: "COBRO_MODE",
  database: "COBRO_DATABASE_URL",
  secretKey: "COBRO_SECRET_KEY",
  publicUrl: "COBRO_PUBLIC_URL",
  jobInterval: "COBRO_JOB_INTERVAL",
  trustProxy: "COBRO_TRUST_PROXY",
  rateLimits: "COBRO_RATE_LIMITS",
  logLevel: "COBRO_LOG_LEVEL",
  logFormat: "COBRO_LOG_FORMAT",
  shutdownDelay: "COBRO_SHUTDOWN_DELAY",
  metricsToken: "COBRO_METRICS_TOKEN",
  ...OtelConfig.variables
} as const

/** Each variable's default and meaning, for `cobro serve --help` (a new variable needs one). */
export const variableHelp: {
  readonly [K in keyof typeof variables]: readonly [fallback: string, meaning: string]
} = {
  port: ["3000", "TCP port of the HTTP server; 0 picks a free one"],
  mode: ["sandbox", "sandbox or production"],
  database: [
    DEFAULT_DATABASE_URL,
    "postgres://… or a SQLite file; unset: the first .cobro/cobro.db from the working directory up"
  ],
  secretKey: ["the public sandbox key", "32 bytes, base64 or hex; required in production"],
  publicUrl: ["http://localhost:$PORT", "base of payment_url and of the URLs the server prints"],
  jobInterval: ["5 seconds", "how often due work runs (expiries, payouts)"],
  trustProxy: ["false", "behind one reverse proxy: the client is the last X-Forwarded-For entry"],
  rateLimits: ["true", "the API's own per-address and per-merchant rate limits"],
  logLevel: ["info", "trace, debug, info, warning, error, fatal or none"],
  logFormat: ["logfmt", "logfmt, json or pretty"],
  shutdownDelay: ["0", "how long the port stays open after /readyz turns 503 on shutdown"],
  metricsToken: ["none: /metrics is open", "the bearer token GET /metrics requires"],
  ...OtelConfig.variableHelp
}

/**
 * A database URL: `postgres://…` or `postgresql://…` is Postgres; `file:PATH`, `sqlite:PATH`,
 * `file:///absolute/path` or a plain path is a SQLite file (relative to the working directory).
 */
export const parseDatabaseUrl = (text: string): Either.Either<Database, string> => {
  const value = text.trim()
  if (value === "") return Either.left("must not be empty")
  if (/^postgres(?:ql)?:\/\//i.test(value)) {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return Either.left("is not a valid postgres:// URL")
    }
    if (url.hostname === "" && !url.searchParams.has("host")) {
      return Either.left("a postgres:// URL needs a host, e.g. postgres://user:password@localhost:5432/cobro")
    }
    return Either.right({ _tag: "Postgres", url: Redacted.make(value) })
  }
  if (/^file:\/\//i.test(value)) {
    try {
      return Either.right({ _tag: "Sqlite", filename: fileURLToPath(value) })
    } catch {
      return Either.left("is not a valid file:// URL")
    }
  }
  const prefixed = /^(?:file|sqlite):(.*)$/i.exec(value)
  if (prefixed !== null) {
    const path = prefixed[1]!.replace(/^\/\//, "")
    return path === "" ? Either.left("names no file") : Either.right({ _tag: "Sqlite", filename: path })
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)
  if (scheme !== null) {
    return Either.left(
      `uses the unsupported scheme "${scheme[1]}:"; use postgres://…, file:PATH or a plain path to a SQLite file`
    )
  }
  return Either.right({ _tag: "Sqlite", filename: value })
}

/** The database for logs: the SQLite path, or the Postgres URL without its password. */
export const describeDatabase = (database: Database): string => {
  if (database._tag === "Sqlite") return `SQLite ${database.filename}`
  try {
    const url = new URL(Redacted.value(database.url))
    if (url.password !== "") url.password = "***"
    return `Postgres ${url.toString()}`
  } catch {
    return "Postgres"
  }
}

/** The absolute path of a SQLite database, for messages. */
export const sqlitePath = (filename: string): string =>
  filename === ":memory:" ? filename : Path.resolve(filename)

const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

const mode = Config.string(variables.mode).pipe(
  Config.withDefault("sandbox"),
  Config.mapOrFail((value) => {
    const v = value.trim().toLowerCase()
    return v === "sandbox" || v === "production"
      ? Either.right(v as Mode)
      : Either.left(invalid(variables.mode, `must be "sandbox" or "production", got "${value}"`))
  })
)

const port = Config.string(variables.port).pipe(
  Config.withDefault("3000"),
  Config.mapOrFail((value) => {
    const n = Number(value.trim())
    return /^\d+$/.test(value.trim()) && n >= 0 && n <= 65535
      ? Either.right(n)
      : Either.left(
          invalid(variables.port, `must be a TCP port (an integer from 0 to 65535), got "${value}"`)
        )
  })
)

const database = Config.string(variables.database).pipe(
  Config.withDefault(DEFAULT_DATABASE_URL),
  Config.mapOrFail((value) => Either.mapLeft(parseDatabaseUrl(value), (m) => invalid(variables.database, m)))
)

const secretKeyText = Config.option(Config.redacted(variables.secretKey))

const publicUrlText = Config.option(Config.string(variables.publicUrl))

const parsePublicUrl = (value: string): Either.Either<string, string> => {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return Either.left(`must be an absolute http(s) URL such as https://pay.example.com, got "${value}"`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(`must be an http or https URL, got "${value}"`)
  }
  if (url.search !== "" || url.hash !== "") return Either.left("must not have a query or a fragment")
  return Either.right(url.toString().replace(/\/+$/, ""))
}

const jobInterval = Config.string(variables.jobInterval).pipe(
  Config.withDefault("5 seconds"),
  Config.mapOrFail((value) =>
    Option.match(Duration.decodeUnknown(value.trim()), {
      onNone: () =>
        Either.left(
          invalid(
            variables.jobInterval,
            `must be a duration such as "5 seconds" or "500 millis", got "${value}"`
          )
        ),
      onSome: (d) =>
        Duration.isFinite(d) && Duration.greaterThanOrEqualTo(d, Duration.millis(100))
          ? Either.right(d)
          : Either.left(
              invalid(variables.jobInterval, `must be at least 100 millis and finite, got "${value}"`)
            )
    })
  )
)

/** A yes/no variable: true/1/yes/on or false/0/no/off. */
const flag = (name: string, fallback: boolean) =>
  Config.string(name).pipe(
    Config.withDefault(String(fallback)),
    Config.mapOrFail((value) => {
      const v = value.trim().toLowerCase()
      if (["true", "1", "yes", "on"].includes(v)) return Either.right(true)
      if (["false", "0", "no", "off", ""].includes(v)) return Either.right(false)
      return Either.left(invalid(name, `must be true or false (on or off), got "${value}"`))
    })
  )

const trustProxy = flag(variables.trustProxy, false)

const rateLimits = flag(variables.rateLimits, true)

const logLevel = Config.string(variables.logLevel).pipe(
  Config.withDefault("info"),
  Config.mapOrFail((value) => {
    const v = value.trim().toLowerCase()
    const found = LogLevel.allLevels.find((l) => l.label.toLowerCase() === v || l._tag.toLowerCase() === v)
    return found === undefined
      ? Either.left(
          invalid(
            variables.logLevel,
            `must be one of ${LogLevel.allLevels.map((l) => l.label.toLowerCase()).join(", ")}, got "${value}"`
          )
        )
      : Either.right(found)
  })
)

export const logFormats = ["logfmt", "json", "pretty"] as const

export type LogFormat = (typeof logFormats)[number]

const logFormat = Config.literal(...logFormats)(variables.logFormat).pipe(
  Config.withDefault("logfmt" as const)
)

const shutdownDelay = Config.duration(variables.shutdownDelay).pipe(
  Config.withDefault(Duration.zero),
  Config.validate({
    message: 'must be a finite duration such as "10 seconds" (0 closes the port at once)',
    validation: Duration.isFinite
  })
)

/** The key: required in production; the public sandbox key in a sandbox without one. */
const secretKey = Config.all({ mode, text: secretKeyText }).pipe(
  Config.mapOrFail(({ mode, text }) => resolveKey(mode, text))
)

const publicUrl = Config.all({ port, text: publicUrlText }).pipe(
  Config.mapOrFail(({ port, text }) =>
    Option.match(text, {
      onNone: () => Either.right(`http://localhost:${port === 0 ? 3000 : port}`),
      onSome: (value) => Either.mapLeft(parsePublicUrl(value), (m) => invalid(variables.publicUrl, m))
    })
  )
)

/** A bearer token for `/metrics`: printable, without spaces (it goes in an `Authorization` header). */
const metricsToken = Config.option(Config.redacted(variables.metricsToken)).pipe(
  Config.mapOrFail((text) => {
    if (Option.isNone(text)) return Either.right(Option.none())
    const value = Redacted.value(text.value).trim()
    if (value === "") return Either.right(Option.none())
    return /^[\x21-\x7e]+$/.test(value)
      ? Either.right(Option.some(Redacted.make(value)))
      : Either.left(
          invalid(variables.metricsToken, "must be printable ASCII without spaces (a bearer token)")
        )
  })
)

/** The whole configuration. */
export const config: Config.Config<ServerConfig> = Config.all({
  mode,
  port,
  database,
  secretKey,
  publicUrl,
  jobInterval,
  trustProxy,
  rateLimits,
  logLevel,
  logFormat,
  shutdownDelay,
  tracing: OtelConfig.tracing,
  metricsToken
}).pipe(
  Config.map(({ secretKey, ...rest }) => ({
    ...rest,
    secretKey: secretKey.key,
    sandboxKey: secretKey.sandbox
  }))
)

const resolveKey = (
  mode: Mode,
  text: Option.Option<Redacted.Redacted<string>>
): Either.Either<
  { readonly key: Redacted.Redacted<Uint8Array>; readonly sandbox: boolean },
  ConfigError.ConfigError
> => {
  if (Option.isNone(text) || Redacted.value(text.value).trim() === "") {
    return mode === "production"
      ? Either.left(
          ConfigError.MissingData(
            [variables.secretKey],
            "is required in production mode: 32 random bytes as base64 or 64 hex digits (e.g. `openssl rand -base64 32`)"
          )
        )
      : Either.right({ key: Crypto.sandboxKey, sandbox: true })
  }
  return Either.match(Crypto.decodeKey(Redacted.value(text.value)), {
    onLeft: (message) =>
      Either.left(
        invalid(variables.secretKey, `${message.replace(/^the server key /, "")} (32 bytes, base64 or hex)`)
      ),
    onRight: (bytes) => {
      const sandbox = Crypto.sandboxKey.pipe(Redacted.value, (k) => Crypto.timingSafeEqual(k, bytes))
      return mode === "production" && sandbox
        ? Either.left(
            invalid(variables.secretKey, "is the public sandbox key; production needs a secret one")
          )
        : Either.right({ key: Redacted.make(bytes), sandbox })
    }
  })
}

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
    case "Or":
      return [...problemsOf(error.left), ...problemsOf(error.right)]
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

const DEFAULT_FILE = Path.join(".cobro", "cobro.db")

/**
 * The database when `COBRO_DATABASE_URL` is unset, found as git finds `.git`: the first
 * `.cobro/cobro.db` in `cwd` or a directory above it, so that `npx cobro …` in a subfolder (say
 * `examples/`) acts on the database `npm start` made at the root; none: `./.cobro/cobro.db` in
 * `cwd`, created by the commands that may create one.
 */
export const defaultDatabase = (cwd: string, exists: (file: string) => boolean = Fs.existsSync): Database => {
  const start = Path.resolve(cwd)
  for (let dir = start; ; dir = Path.dirname(dir)) {
    const file = Path.join(dir, DEFAULT_FILE)
    if (exists(file)) return { _tag: "Sqlite", filename: dir === start ? `./${DEFAULT_FILE}` : file }
    if (Path.dirname(dir) === dir) return { _tag: "Sqlite", filename: `./${DEFAULT_FILE}` }
  }
}

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
