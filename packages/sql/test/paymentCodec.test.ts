/**
 * The stored payment's trusted codec (the domain's schema compiled without checks, core's
 * `TrustedCodec`, in `internal/documents/payment.ts`) reads and writes what
 * the domain's validating codec does, for payments of every kind of content: nothing optional,
 * everything optional, transactions with commission and taxes, motive changes, another currency,
 * documents written before versions (null optional fields, no `v`).
 */
import { Payment as P } from "@cobro/core"
import { describe, expect, it } from "@effect/vitest"
import { BigDecimal, DateTime, Schema } from "effect"
import * as Documents from "../src/internal/documents/payment.js"
import { documents } from "./paymentDocuments.js"

const trusted = {
  decode: Schema.decodeUnknownSync(Documents.Payment),
  encode: Schema.encodeSync(Documents.Payment)
}
const validated = {
  decode: Schema.decodeUnknownSync(Documents.Payment.validated),
  encode: Schema.encodeSync(Documents.Payment.validated)
}

describe("the stored payment's trusted codec", () => {
  for (const [name, document] of Object.entries(documents)) {
    it(`reads and writes as the validating codec does: ${name}`, () => {
      const read = trusted.decode(document)
      const expected = validated.decode(document)
      expect(read).toBeInstanceOf(P.Payment)
      expect(read).toEqual(expected)
      expect(validated.encode(read)).toEqual(validated.encode(expected))
      expect(trusted.encode(expected)).toEqual(validated.encode(expected))
      // Compared by their encoding: a BigDecimal caches its normalized form once encoded.
      expect(validated.encode(trusted.decode(trusted.encode(read)))).toEqual(validated.encode(expected))
    })
  }

  it("builds the domain's values: Money, BigDecimal rates, DateTime, classes", () => {
    const paid = trusted.decode(documents["paid twice with commission, taxes and the totals"])
    const first = paid.transactions[0]!
    expect(first).toBeInstanceOf(P.Transaction)
    expect(first.credited_amount.minor).toBe(148185n)
    expect(BigDecimal.equals(first.commission, BigDecimal.unsafeFromString("0.01"))).toBe(true)
    expect(first.commission_taxes[0]).toBeInstanceOf(P.Tax)
    expect(first.commission_taxes[0]!.tax_amount.minor).toBe(315n)
    expect(DateTime.formatIso(first.creation_timestamp)).toBe("2026-11-25T04:42:26.935Z")
    const usdt = trusted.decode(documents["every optional field, motive changes, another currency"])
    expect(usdt.price).toMatchObject({ minor: 12345678n, currency: "USDT" })
    expect(usdt.metadata.motive[0]!.previous).toBeNull()
  })

  it("refuses a document of a version it does not know", () => {
    expect(() => trusted.decode({ ...documents["pending, nothing optional"], v: 2 })).toThrow(
      /version 1, not 2/
    )
  })
})
