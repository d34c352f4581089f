import { expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { runExpiryExample } from "../src/expiry.js"

// `it.effect` runs on `TestClock`: time moves only when the test adjusts it.
it.effect("an unpaid payment is still PENDING four days later", () =>
  Effect.map(runExpiryExample(TestClock.adjust("4 days")), (result) => {
    expect(result).toMatchObject({ statusBefore: "PENDING", statusAfter: "PENDING", expiredByJobs: 0 })
    // Created at the TestClock's epoch, with the default lifetime of five days.
    expect(result.expiresAt).toBe("1970-01-06T00:00:00.000Z")
  })
)

it.effect("an unpaid payment expires after its five days, when the due work runs", () =>
  Effect.map(runExpiryExample(TestClock.adjust("5 days")), (result) =>
    expect(result).toMatchObject({ statusBefore: "PENDING", statusAfter: "EXPIRED", expiredByJobs: 1 })
  )
)
