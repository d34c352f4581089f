/**
 * How a payment is stored in `cobro_payments.doc`.
 */
import { Payment as P } from "@cobro/core"

/** A payment's document. */
export const Payment = P.Payment
