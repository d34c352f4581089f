/**
 * What a host can tune about the HTTP layer. Every field has a default that suits a single
 * server on the public internet.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Duration, Layer, Option, type Redacted } from "effect"

export interface Limit {
  /** Requests (or failures) allowed per window. */
  readonly limit: number
  /** Counted in whole seconds (rounded up; at least one): what every store can keep. */
  readonly window: Duration.DurationInput
}

/**
 * The API's request limits. The public routes count every request; the token routes count wrong
 * secrets (a brute-force guard) and put a ceiling on issuance far above what a fleet of clients
 * asks. Windows are fixed: a key's window starts at its first count and ends `window` later.
 */
export interface RateLimits {
  /**
   * Every request of the public routes and pages per client address: POST /payments/,
   * GET /payments/{id}/public, the payer's page and the onboarding form.
   */
  readonly publicPerAddress: Limit
  /** POST /payments/ per merchant (`user_id` of the body). */
  readonly publicPerUser: Limit
  /**
   * Token requests, successful or not, per user id (POST /users/{id}/tokens) and per client id
   * (POST /auth/tokens): a ceiling on issuance, not a brute-force guard.
   */
  readonly tokensPerUser: Limit
  /**
   * Wrong secrets per user id (POST /users/{id}/tokens), per client id (POST /auth/tokens) and per
   * e-mail (the onboarding form's sign-in). Once reached, that subject is refused, even with the
   * right secret, until its window ends.
   */
  readonly failuresPerClient: Limit
  /** Wrong secrets from one client address, whatever the subject; refused alike once reached. */
  readonly failuresPerAddress: Limit
  /** POST /webhooks/deliveries/{id}/replay per account; `defaultRateLimits`' when absent. */
  readonly replaysPerUser?: Limit
}

/** The merchants' and partners' dashboard at `/dashboard` (`Dashboard.ts`). */
export interface DashboardSettings {
  /**
   * Whether a sign-in needs its second proof: a merchant's code of its enrolled factor (TOTP or
   * e-mail), a partner's client secret. The reference server asks for it in production mode.
   */
  readonly secondFactor: boolean
  /** The session cookie's `Secure` attribute (HTTPS only). The reference server sets it in production. */
  readonly secureCookie: boolean
  /** A session ends after this long without a request (real time). */
  readonly idleTimeout: Duration.DurationInput
  /** A session ends this long after sign-in, used or not (real time). */
  readonly absoluteTimeout: Duration.DurationInput
  /** The API's public base URL, shown on the Developers page; absent: the request's own origin. */
  readonly apiBaseUrl?: string | undefined
  /** Whether the engine runs in sandbox mode (badge, Sandbox pages). */
  readonly sandbox: boolean
}

export const defaultDashboard: DashboardSettings = {
  secondFactor: true,
  secureCookie: true,
  idleTimeout: Duration.minutes(30),
  absoluteTimeout: Duration.hours(12),
  sandbox: false
}

export interface Settings {
  /** Largest request body accepted, in bytes (413 above). */
  readonly maxBodyBytes: number
  /**
   * `false` turns rate limiting off (for a host that limits in front of cobro). Where they count is
   * the `RateLimitStore` the host provides (in this process when it provides none).
   */
  readonly rateLimits: RateLimits | false
  /**
   * The address a request comes from, for per-address limits. The default is the socket's
   * peer; behind a trusted proxy, read its forwarding header here.
   */
  readonly clientAddress: (request: HttpServerRequest.HttpServerRequest) => string
  /** Serve `/openapi.json` and the interactive reference at `/docs`. */
  readonly docs: boolean
  /**
   * Serve the hosted pages: the payment page at `/pay/{id}` (where `payment_url` points) and
   * partner onboarding at `/authorize`.
   */
  readonly pages: boolean
  /**
   * Signs the hosted forms' CSRF tokens (onboarding; the sandbox's simulated transfer on the
   * payment page) (any length; 32 random bytes is plenty). Instances
   * that serve one address must share it, or a form rendered by one is refused by another.
   * Absent: a random key per process (right for a single instance).
   */
  readonly csrfKey?: Redacted.Redacted<Uint8Array>
  /**
   * The origins (`https://shop.example.com`, exact) whose pages may call the routes a browser may
   * call, POST /payments/ and GET /payments/{id}/public, from the browser (`Cors.ts`). None by
   * default: every preflight is refused. No other route answers a browser's cross-origin call.
   */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * Serve the dashboard at `/dashboard` with these settings (it needs the engine's `WebSessions`).
   * Absent: not served.
   */
  readonly dashboard?: DashboardSettings | undefined
}

export const defaultRateLimits: RateLimits = {
  publicPerAddress: { limit: 300, window: Duration.minutes(1) },
  publicPerUser: { limit: 1200, window: Duration.minutes(1) },
  tokensPerUser: { limit: 1200, window: Duration.minutes(1) },
  failuresPerClient: { limit: 10, window: Duration.minutes(1) },
  failuresPerAddress: { limit: 30, window: Duration.minutes(1) },
  replaysPerUser: { limit: 30, window: Duration.minutes(1) }
}

export const defaults: Settings = {
  maxBodyBytes: 1024 * 1024,
  rateLimits: defaultRateLimits,
  clientAddress: (request) => Option.getOrElse(request.remoteAddress, () => "unknown"),
  docs: true,
  pages: true,
  corsOrigins: []
}

export class HttpConfig extends Context.Tag("@cobro/http/HttpConfig")<HttpConfig, Settings>() {
  static layer(settings: Partial<Settings> = {}): Layer.Layer<HttpConfig> {
    return Layer.succeed(HttpConfig, { ...defaults, ...settings })
  }
}
