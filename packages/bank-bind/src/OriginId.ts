/**
 * BIND deduplicates outgoing transfers on `origin_id`, which it documents as at most 15
 * characters. Our references are longer, so the `origin_id` is derived from them: the first 72
 * bits of SHA-256 of a namespaced reference, in base 36, left-padded to 15 characters. The same
 * reference always gives the same `origin_id`, so a retry after a timeout or a restart asks BIND
 * for the transfer it already has instead of sending a second one.
 */
import { createHash } from "node:crypto"

/** BIND's documented maximum length of `origin_id`. */
export const MAX_LENGTH = 15

const derive = (namespace: string, value: string): string => {
  const digest = createHash("sha256").update(`${namespace}:${value}`, "utf8").digest()
  return BigInt(`0x${digest.subarray(0, 9).toString("hex")}`)
    .toString(36)
    .padStart(MAX_LENGTH, "0")
}

/** The `origin_id` of an outgoing transfer with our `reference` (payout or refund id). */
export const forReference = (reference: string): string => derive("cobro", reference)

/** The `origin_id` of the return of the received transfer `bankTransactionId`. */
export const forReturn = (bankTransactionId: string): string => derive("return", bankTransactionId)
