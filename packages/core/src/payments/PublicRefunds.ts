/**
 * What the payer's page says of a payment's refunds. Refunds sit above payments (a refund locks
 * and reads its payment), so `Payments` reads them through this port, which `refunds/` provides
 * (`Refunds.layerPublicRefunds`) and the engine assembles.
 */
import { Context, type Effect } from "effect"
import type { Payment, PublicRefund } from "./Payment.js"

export class PublicRefunds extends Context.Tag("@cobro/core/PublicRefunds")<
  PublicRefunds,
  {
    /** The refunds that count (PENDING and SUCCESS) summed up; null when there are none. */
    readonly of: (payment: Payment) => Effect.Effect<PublicRefund | null>
  }
>() {}
