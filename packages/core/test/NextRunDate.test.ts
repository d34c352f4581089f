import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, TestClock } from "effect"
import { Schedule } from "../src/index.js"

const next = (frequency: Schedule.PayoutFrequency, nowIso: string) =>
  DateTime.formatIso(Schedule.nextRunDate(frequency, DateTime.unsafeMake(nowIso)))

describe("nextRunDate (Buenos Aires, UTC−03:00)", () => {
  it("daily runs at the next Buenos Aires midnight, across month, year and leap-day ends", () => {
    expect(next("daily", "2026-01-31T15:00:00Z")).toBe("2026-02-01T03:00:00.000Z")
    expect(next("daily", "2025-12-31T20:00:00Z")).toBe("2026-01-01T03:00:00.000Z")
    expect(next("daily", "2024-02-28T13:00:00Z")).toBe("2024-02-29T03:00:00.000Z")
    expect(next("daily", "2024-02-29T13:00:00Z")).toBe("2024-03-01T03:00:00.000Z")
    expect(next("daily", "2025-02-28T13:00:00Z")).toBe("2025-03-01T03:00:00.000Z")
  })

  it("uses Buenos Aires days: 02:59 UTC is still the previous day there", () => {
    // 2026-03-01T02:59Z is 2026-02-28 23:59 in Buenos Aires: the next midnight is a minute away.
    expect(next("daily", "2026-03-01T02:59:00Z")).toBe("2026-03-01T03:00:00.000Z")
    expect(next("monthly", "2026-03-01T02:59:00Z")).toBe("2026-03-01T03:00:00.000Z")
    // One minute later it is March 1st there, so the next daily run is March 2nd.
    expect(next("daily", "2026-03-01T03:01:00Z")).toBe("2026-03-02T03:00:00.000Z")
    expect(next("monthly", "2026-03-01T03:01:00Z")).toBe("2026-04-01T03:00:00.000Z")
  })

  it("is strictly after now: a run instant itself schedules the following one", () => {
    expect(next("daily", "2026-03-01T03:00:00Z")).toBe("2026-03-02T03:00:00.000Z")
    expect(next("bi_daily", "2026-03-01T03:00:00Z")).toBe("2026-03-01T15:00:00.000Z")
    expect(next("bi_daily", "2026-03-01T15:00:00Z")).toBe("2026-03-02T03:00:00.000Z")
    expect(next("weekly", "2026-11-23T03:00:00Z")).toBe("2026-11-30T03:00:00.000Z")
    expect(next("monthly", "2026-02-01T03:00:00Z")).toBe("2026-03-01T03:00:00.000Z")
  })

  it("bi_daily runs at 00:00 and 12:00 Buenos Aires time", () => {
    expect(next("bi_daily", "2026-01-31T14:59:00Z")).toBe("2026-01-31T15:00:00.000Z")
    expect(next("bi_daily", "2026-01-31T15:01:00Z")).toBe("2026-02-01T03:00:00.000Z")
    expect(next("bi_daily", "2025-12-31T23:00:00Z")).toBe("2026-01-01T03:00:00.000Z")
    expect(next("bi_daily", "2024-02-29T02:00:00Z")).toBe("2024-02-29T03:00:00.000Z")
  })

  it("weekly runs on Mondays at 00:00 Buenos Aires time", () => {
    // Friday 2026-11-20 → Monday 2026-11-23.
    expect(next("weekly", "2026-11-20T12:00:00Z")).toBe("2026-11-23T03:00:00.000Z")
    // Monday 02:00 UTC is Sunday 23:00 in Buenos Aires: the run is an hour later.
    expect(next("weekly", "2026-11-23T02:00:00Z")).toBe("2026-11-23T03:00:00.000Z")
    // Across the year end: Wednesday 2025-12-31 → Monday 2026-01-05.
    expect(next("weekly", "2025-12-31T12:00:00Z")).toBe("2026-01-05T03:00:00.000Z")
    // Across a leap day: Thursday 2024-02-29 → Monday 2024-03-04.
    expect(next("weekly", "2024-02-29T12:00:00Z")).toBe("2024-03-04T03:00:00.000Z")
  })

  it("monthly runs on the 1st at 00:00 Buenos Aires time", () => {
    expect(next("monthly", "2026-01-31T15:00:00Z")).toBe("2026-02-01T03:00:00.000Z")
    expect(next("monthly", "2025-12-15T12:00:00Z")).toBe("2026-01-01T03:00:00.000Z")
    expect(next("monthly", "2024-02-29T12:00:00Z")).toBe("2024-03-01T03:00:00.000Z")
    expect(next("monthly", "2024-01-31T12:00:00Z")).toBe("2024-02-01T03:00:00.000Z")
  })

  it("every result over a year is the first slot strictly after now", () => {
    const periodHours = { bi_daily: 12, daily: 24, weekly: 24 * 7, monthly: 24 * 31 } as const
    const period = {
      bi_daily: { hours: 12 },
      daily: { days: 1 },
      weekly: { weeks: 1 },
      monthly: { months: 1 }
    } as const
    const start = DateTime.toEpochMillis(DateTime.unsafeMake("2024-01-01T00:00:00Z"))
    for (let h = 0; h < 24 * 366; h += 7) {
      const now = DateTime.unsafeMake(start + h * 3_600_000 + 17 * 60_000)
      for (const frequency of Schedule.PayoutFrequency.literals) {
        const at = Schedule.nextRunDate(frequency, now)
        const ms = DateTime.toEpochMillis(at) - DateTime.toEpochMillis(now)
        expect(ms).toBeGreaterThan(0)
        expect(ms).toBeLessThanOrEqual(periodHours[frequency] * 3_600_000)
        const local = DateTime.toParts(DateTime.setZone(at, Schedule.buenosAires))
        expect(local.minutes + local.seconds + local.millis).toBe(0)
        expect(frequency === "bi_daily" ? [0, 12] : [0]).toContain(local.hours)
        if (frequency === "weekly") expect(local.weekDay).toBe(1)
        if (frequency === "monthly") expect(local.day).toBe(1)
        // The slot before it is not after now: no run instant was skipped.
        const previous = DateTime.subtract(DateTime.setZone(at, Schedule.buenosAires), period[frequency])
        expect(DateTime.lessThanOrEqualTo(previous, now)).toBe(true)
      }
    }
  })

  it.effect("follows the TestClock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2024, 1, 29, 2, 59))
      const now = yield* DateTime.now
      expect(DateTime.formatIso(Schedule.nextRunDate("daily", now))).toBe("2024-02-29T03:00:00.000Z")
      yield* TestClock.adjust("2 minutes")
      expect(DateTime.formatIso(Schedule.nextRunDate("daily", yield* DateTime.now))).toBe(
        "2024-03-01T03:00:00.000Z"
      )
    })
  )
})
