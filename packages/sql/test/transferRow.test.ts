/**
 * A transfer's row is encoded by its schema compiled without checks (`SqlTransferRepository`'s
 * `encodedTransfer`, core's `TrustedCodec`): it must be
 * what the row's schema encodes, column by column, for a credit and a bounce, and read back it
 * must be the record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Money } from "@cobro/core"
import { TransferRepository as T } from "@cobro/core/ports"
import { DateTime, Schema } from "effect"
import { encodedTransfer, TransferRowIn } from "../src/SqlTransferRepository.js"
import { record } from "./rowFixtures.js"

const records: Record<string, T.TransferRecord> = {
  "credited to a payment": record({}),
  "bounced, without a target": record({ target: "bounced", target_id: null }),
  "a large amount at a whole second": record({
    amount: Money.make(9_007_199_254_740_993n, "ARS"),
    received_at: DateTime.unsafeMake("2026-01-01T00:00:00.000Z")
  })
}

describe("a transfer's row written by hand", () => {
  for (const [name, t] of Object.entries(records)) {
    it(`is the row's schema encoding: ${name}`, () => {
      expect(encodedTransfer(t)).toStrictEqual(Schema.encodeSync(TransferRowIn)(t))
      expect(Schema.decodeUnknownSync(TransferRowIn)(encodedTransfer(t))).toEqual(t)
    })
  }
})
