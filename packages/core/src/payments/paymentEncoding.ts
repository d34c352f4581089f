/**
 * A payment in its encoded form (`Payment.Encoded`: what the API answers, and the stored
 * document's version 1 while the two are equal): the schema's encoding compiled without its
 * checks (`TrustedCodec`), for a value the domain built and validated. The same conversions and
 * the schema's key order, so the JSON text is the schema's.
 */
import * as TrustedCodec from "../TrustedCodec.js"
import { Payment } from "./Payment.js"

/** `p` encoded; null optional fields are left out. */
export const encode: (p: Payment) => typeof Payment.Encoded = TrustedCodec.encoder(Payment)
