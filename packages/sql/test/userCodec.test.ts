/**
 * The stored user's trusted codec (the domain's schema compiled without checks, core's
 * `TrustedCodec`, in `internal/documents/account.ts`) reads and writes what the
 * domain's validating codec does, for users of every kind of content: no optional setting, every
 * setting, a payout schedule, a partner, a tolerance with centavos, documents written before
 * versions (no `v`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Documents from "../src/internal/documents/account.js"
import { userDocument } from "./rowFixtures.js"

const base = userDocument

const documents: Record<string, Record<string, unknown>> = {
  "nothing optional": { v: 1, ...base },
  "every setting": {
    v: 1,
    ...base,
    account_status: "SUSPENDED",
    alias_prefix: "tienda",
    cancellation_period: 48,
    cancellation_period_minutes: 90,
    automatic_cancellation: true,
    transfer_tolerance: 12.5,
    payout_schedule: { address: "2850590940090418135201", frequency: "weekly" },
    partner_id: "partner-1"
  },
  "a tolerance with centavos": { v: 1, ...base, transfer_tolerance: 0.07 },
  "written before versions": { ...base, account_status: "PENDING" }
}

const validated = Schema.decodeUnknownSync(Documents.User.validated)
const validatedEncode = Schema.encodeSync(Documents.User.validated)
const trusted = Schema.decodeUnknownSync(Documents.User)
const trustedEncode = Schema.encodeSync(Documents.User)

describe("the stored user's trusted codec", () => {
  for (const [name, doc] of Object.entries(documents)) {
    it(`reads and writes as the validating codec does: ${name}`, () => {
      const fast = trusted(doc)
      const slow = validated(doc)
      expect(fast).toEqual(slow)
      expect(fast.transfer_tolerance.minor).toBe(slow.transfer_tolerance.minor)
      expect(trustedEncode(fast)).toStrictEqual(validatedEncode(slow))
      expect(trustedEncode(fast)).toStrictEqual({ ...doc, v: 1 })
    })
  }

  it("refuses a document of another version", () => {
    expect(() => trusted({ v: 2, ...base })).toThrow(/version 1, not 2/)
  })
})
