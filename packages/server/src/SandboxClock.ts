/**
 * The sandbox's test clocks in the reference server: core's `SandboxClocks` (one clock per
 * merchant over `TestClockRepository`, as `MerchantClocks` and `RealTime` for everything built on
 * top of it, and the `TestClocks` the routes call), with the webhook service delivering what an
 * advance made due before the advance answers.
 *
 * Credentials, tokens, codes, `Idempotency-Key` retention, rate limits, web forms, webhook leases
 * and `webhook-timestamp`, and transfers at the bank stay on real time.
 */
import { type Jobs, type MerchantClocks, RealTime } from "@cobro/core"
import { type TestClockRepository } from "@cobro/core/ports"
import { SandboxClocks, type TestClocks } from "@cobro/bank-sandbox"
import { Webhooks } from "@cobro/webhooks"
import { Effect, Layer } from "effect"

/**
 * The merchants' clocks (`MerchantClocks` and the cache of offsets) and `RealTime`: the `Clock`
 * this layer is built on (the system's, or a test's), which the offsets are added to.
 */
export const layer: Layer.Layer<
  SandboxClocks.SandboxClocks | MerchantClocks.MerchantClocks | RealTime.RealTime,
  never,
  TestClockRepository.TestClockRepository
> = Layer.merge(
  SandboxClocks.layer,
  Layer.effect(RealTime.RealTime, Effect.map(Effect.clock, RealTime.fromClock))
)

/** `TestClocks` with the webhook service delivering what an advance made due. */
export const testClocks: Layer.Layer<
  TestClocks.TestClocks,
  never,
  SandboxClocks.SandboxClocks | TestClockRepository.TestClockRepository | Jobs.Jobs | Webhooks.Webhooks
> = Layer.unwrapEffect(
  Effect.map(Webhooks.Webhooks, (webhooks) =>
    SandboxClocks.testClocks.pipe(
      Layer.provide(Layer.succeed(SandboxClocks.DueDeliveries, { deliverDueOf: webhooks.deliverDueOf }))
    )
  )
)
