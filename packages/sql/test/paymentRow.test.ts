/**
 * A payment's row is encoded by its schema compiled without checks (`internal/paymentRow.ts`'s
 * `encodedRow`, core's `TrustedCodec`): it must be what the
 * row's schema encodes, column by column and the document's JSON text byte for byte, for payments
 * of every kind of content (the documents of `paymentCodec.test.ts`, read as payments).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Documents from "../src/internal/documents/payment.js"
import { encodedRow, PaymentRow, row } from "../src/internal/paymentRow.js"
import { documents } from "./paymentDocuments.js"

const read = Schema.decodeUnknownSync(Documents.Payment)
const schemaRow = (payment: Parameters<typeof row>[0]) => Schema.encodeSync(PaymentRow)(row(payment))

describe("a payment's row written by hand", () => {
  for (const [name, document] of Object.entries(documents)) {
    it(`is the row's schema encoding: ${name}`, () => {
      const payment = read(document)
      expect(encodedRow(payment)).toStrictEqual(schemaRow(payment))
      expect(encodedRow(payment).doc).toBe(schemaRow(payment).doc)
    })
  }
})
