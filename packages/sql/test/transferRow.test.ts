/**
 * A transfer's row is written by hand (`SqlTransferRepository`'s `encodedTransfer`): it must be
 * what the row's schema encodes, column by column, for a credit and a bounce, and read back it
 * must be the record.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids, Money } from "@cobro/core"
import { TransferRepository as T } from "@cobro/core/ports"
import { DateTime, Schema } from "effect"
import { encodedTransfer, TransferRowIn } from "../src/SqlTransferRepository.js"

const record = (fields: Partial<ConstructorParameters<typeof T.TransferRecord>[0]>) =>
  new T.TransferRecord({
    bank_transaction_id: Ids.BankTransactionId.make("SBX-0000002a0123456789abcdefdeadbeef"),
    cvu: BankAccount.makeCvu("0000003", "1234567890123"),
    amount: Money.make(150050n, "ARS"),
    target: "payment",
    target_id: "VAR-demo-order-1",
    received_at: DateTime.unsafeMake("2026-11-27T13:05:09.123Z"),
    ...fields
  })

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
