/**
 * A canonical text of what a create request asked for: its wire form with sorted keys, without
 * the external id. It is stored with the payment (`creation_request`) to tell a repeated request
 * from a different one with the same external id, so it must stay the same text for the same
 * request across versions.
 */
import * as Money from "../Money.js"
import type { CreatePaymentRequest } from "./PaymentRequest.js"

/** `v` with the keys of every object sorted (arrays keep their order). */
export const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])])
        )
      : v

/**
 * The request's fields are already their wire values but for the price (a `Money`, on the wire
 * `{ amount, currency }`), so the wire form is written here rather than encoded by the request's
 * schema, which checked every field again (an http(s) URL is parsed twice) on every creation.
 * `fingerprint.test.ts` holds it to the schema's encoding.
 */
export const fingerprint = (request: CreatePaymentRequest): string => {
  const { external_id: _, price, ...wire } = request
  return JSON.stringify(
    canonical({ ...wire, price: { amount: Money.toNumber(price), currency: price.currency } })
  )
}
