/**
 * Settings of the engine that are not per-merchant. Hosts provide them with `layer`; the
 * defaults suit tests and the sandbox.
 */
import { Context, Duration, Layer, type Redacted } from "effect"

/** Which webhook URLs are accepted (`WebhookDestination`): see `EngineSettings.webhookDestinations`. */
export type WebhookDestinationMode = "sandbox" | "production"

export interface EngineSettings {
  /** Base of `payment_url`: the hosted payment page is `${paymentPageBaseUrl}/pay/{id}`. */
  readonly paymentPageBaseUrl: string
  /** Lifetime of a one-off payment when the account sets none (SPEC: about 5 days). */
  readonly defaultPaymentLifetime: Duration.Duration
  /** How many due items `Jobs.runDue` takes per batch. */
  readonly jobBatchSize: number
  /** Lifetime of a user token from POST /users/{id}/tokens (1 hour by default). */
  readonly userTokenLifetime: Duration.Duration
  /**
   * Lifetime of a partner (`PAR-`) token. Infinite by default: SPEC has no refresh flow, and a
   * partner acts for its user long after onboarding; the token is revocable instead.
   */
  readonly partnerTokenLifetime: Duration.Duration
  /**
   * The 32-byte server key `Engine.layerMemory` gives the WebCrypto adapter (client secrets are
   * sealed under it). Absent: the publicly known `Crypto.sandboxKey`. Services never read it.
   */
  readonly secretKey?: Redacted.Redacted<Uint8Array>
  /**
   * The lease of a request holding an `Idempotency-Key` (5 seconds by default): renewed every
   * quarter of it while the request runs, so a live request keeps its key however long it takes;
   * once it lapses (the request's process died) a retry with the same key may run. Longer than a
   * renewal can be late (a busy database).
   */
  readonly idempotencyLease: Duration.Duration
  /**
   * Which webhook URLs are accepted when a payment, customer, split payment or partner is
   * created (`WebhookDestination`): "sandbox" (the default) any http(s) URL; "production" https
   * only, to neither `localhost` nor a non-public IP literal. Set it to the mode of the host's
   * webhook transport, so that no URL is accepted that the transport will never contact.
   */
  readonly webhookDestinations: WebhookDestinationMode
  /**
   * Outgoing transfers in flight (`OutgoingTransfers`): how long a send owns a transfer before
   * the settle job may ask the bank about it, and how often a pending one is asked again.
   * Longer than a bank call can take (1 minute by default).
   */
  readonly transferCheckInterval: Duration.Duration
}

export const defaults: EngineSettings = {
  paymentPageBaseUrl: "http://localhost:3000",
  defaultPaymentLifetime: Duration.days(5),
  jobBatchSize: 100,
  userTokenLifetime: Duration.hours(1),
  partnerTokenLifetime: Duration.infinity,
  idempotencyLease: Duration.seconds(5),
  webhookDestinations: "sandbox",
  transferCheckInterval: Duration.minutes(1)
}

export class EngineConfig extends Context.Tag("@cobro/core/EngineConfig")<EngineConfig, EngineSettings>() {}

export const layer = (settings: Partial<EngineSettings> = {}): Layer.Layer<EngineConfig> =>
  Layer.succeed(EngineConfig, { ...defaults, ...settings })
