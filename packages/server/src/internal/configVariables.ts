/** The server's environment variables: their names, and each one's default and meaning. */
import { DEFAULT_DATABASE_URL } from "./database.js"
import * as SmtpMailer from "../SmtpMailer.js"
import * as OtelConfig from "./otelConfig.js"

/** The variables, for messages and docs. */
export const variables = {
  port: "PORT",
  mode: "COBRO_MODE",
  bank: "COBRO_BANK",
  reconcileInterval: "COBRO_RECONCILE_INTERVAL",
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
  tokenLifetime: "COBRO_TOKEN_LIFETIME",
  ...SmtpMailer.variables,
  ...OtelConfig.variables
} as const

/** Each variable's default and meaning, for `cobro serve --help` (a new variable needs one). */
export const variableHelp: {
  readonly [K in keyof typeof variables]: readonly [fallback: string, meaning: string]
} = {
  port: ["3000", "TCP port of the HTTP server; 0 picks a free one"],
  mode: ["sandbox", "sandbox or production"],
  bank: ["sandbox", "sandbox or bind (BIND PSP, settings COBRO_BIND_*); production needs bind"],
  reconcileInterval: ["5 minutes", "how often the bank's statement is read for transfers not notified"],
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
  tokenLifetime: ["1 hour", "lifetime of a user token (POST /users/{id}/tokens), at least 1 second"],
  ...SmtpMailer.variableHelp,
  ...OtelConfig.variableHelp
}
