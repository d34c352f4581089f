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
  redisUrl: "COBRO_REDIS_URL",
  limitPublicPerAddress: "COBRO_RATE_LIMIT_PUBLIC_PER_ADDRESS",
  limitPaymentsPerUser: "COBRO_RATE_LIMIT_PAYMENTS_PER_USER",
  limitTokensPerUser: "COBRO_RATE_LIMIT_TOKENS_PER_USER",
  limitFailuresPerClient: "COBRO_RATE_LIMIT_FAILURES_PER_CLIENT",
  limitFailuresPerAddress: "COBRO_RATE_LIMIT_FAILURES_PER_ADDRESS",
  limitReplaysPerUser: "COBRO_RATE_LIMIT_REPLAYS_PER_USER",
  logLevel: "COBRO_LOG_LEVEL",
  logFormat: "COBRO_LOG_FORMAT",
  shutdownDelay: "COBRO_SHUTDOWN_DELAY",
  metricsToken: "COBRO_METRICS_TOKEN",
  metricsAddress: "COBRO_METRICS_ADDR",
  tokenLifetime: "COBRO_TOKEN_LIFETIME",
  idempotencyLease: "COBRO_IDEMPOTENCY_LEASE",
  corsOrigins: "COBRO_CORS_ORIGINS",
  transferCheckInterval: "COBRO_TRANSFER_CHECK_INTERVAL",
  dashboardIdleTimeout: "COBRO_DASHBOARD_IDLE_TIMEOUT",
  dashboardSessionLifetime: "COBRO_DASHBOARD_SESSION_LIFETIME",
  webhookPollInterval: "COBRO_WEBHOOK_POLL_INTERVAL",
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
  rateLimits: ["true", "the API's own rate limits and brute-force guard"],
  redisUrl: [
    "none: Postgres holds the limits (SQLite: this process)",
    "redis://…: the rate limits count in Redis, shared by every instance"
  ],
  limitPublicPerAddress: ["300 per 1 minute", "public routes and pages, every request, per client address"],
  limitPaymentsPerUser: ["1200 per 1 minute", "POST /payments/ per merchant"],
  limitTokensPerUser: ["1200 per 1 minute", "token requests per user or partner client, successful or not"],
  limitFailuresPerClient: [
    "10 per 1 minute",
    "wrong secrets per user id, client id or e-mail; then refused until the window ends"
  ],
  limitFailuresPerAddress: ["30 per 1 minute", "wrong secrets per client address; then refused alike"],
  limitReplaysPerUser: ["30 per 1 minute", "webhook replays per account"],
  logLevel: ["info", "trace, debug, info, warning, error, fatal or none"],
  logFormat: ["logfmt", "logfmt, json or pretty"],
  shutdownDelay: ["0", "how long the port stays open after /readyz turns 503 on shutdown"],
  metricsToken: [
    "none",
    "the bearer token GET /metrics requires; without it or COBRO_METRICS_ADDR, /metrics is open in sandbox mode and not served in production"
  ],
  metricsAddress: [
    "none: /metrics is on the API's port",
    "host:port where GET /metrics listens instead of the API's port (e.g. 127.0.0.1:9464)"
  ],
  tokenLifetime: ["1 hour", "lifetime of a user token (POST /users/{id}/tokens), at least 1 second"],
  idempotencyLease: [
    "5 seconds",
    "how soon an Idempotency-Key held by a process that died is free again, at least 1 second"
  ],
  corsOrigins: [
    "none",
    "comma-separated origins (https://shop.example.com) whose pages may create payments and read their public state"
  ],
  dashboardIdleTimeout: [
    "30 minutes",
    "a dashboard session ends after this long without a request (real time), at least 1 second"
  ],
  dashboardSessionLifetime: [
    "12 hours",
    "a dashboard session ends this long after sign-in, used or not (real time), at least 1 second"
  ],
  transferCheckInterval: [
    "1 minute",
    "how soon the bank is asked about an outgoing transfer in flight, and again; longer than a bank call, at least 1 second"
  ],
  webhookPollInterval: ["1 second", "how often webhook deliveries that are due are looked for and sent"],
  ...SmtpMailer.variableHelp,
  ...OtelConfig.variableHelp
}
