/**
 * Settings of the engine that are not per-merchant. Hosts provide them with `layer`; the
 * defaults suit tests and the sandbox.
 */
import { Context, Duration, Layer } from "effect"

export interface EngineSettings {
  /** Base of `payment_url`: the hosted payment page is `${paymentPageBaseUrl}/pay/{id}`. */
  readonly paymentPageBaseUrl: string
  /** Lifetime of a one-off payment when the account sets none (SPEC: about 5 days). */
  readonly defaultPaymentLifetime: Duration.Duration
  /** How many due items `Jobs.runDue` takes per batch. */
  readonly jobBatchSize: number
}

export const defaults: EngineSettings = {
  paymentPageBaseUrl: "http://localhost:3000",
  defaultPaymentLifetime: Duration.days(5),
  jobBatchSize: 100
}

export class EngineConfig extends Context.Tag("@cobro/core/EngineConfig")<EngineConfig, EngineSettings>() {}

export const layer = (settings: Partial<EngineSettings> = {}): Layer.Layer<EngineConfig> =>
  Layer.succeed(EngineConfig, { ...defaults, ...settings })
