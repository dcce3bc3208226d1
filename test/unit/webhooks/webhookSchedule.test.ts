import { describe, expect, it } from "vitest"
import { baseGapMs, gapMs, MAX_ATTEMPTS, MAX_GAP_MS } from "../../../services/webhooks/RetrySchedule"

describe("the webhook retry schedule", () => {
  it("starts at 30 s, doubles, caps at one hour, and ends after 12 attempts about five hours in", () => {
    expect([1, 2, 3, 4].map((n) => baseGapMs(n))).toEqual([30_000, 60_000, 120_000, 240_000])
    expect(baseGapMs(8)).toBe(MAX_GAP_MS)
    expect(MAX_ATTEMPTS).toBe(12)
    const total = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => baseGapMs(i + 1)).reduce(
      (a, b) => a + b,
      0
    )
    expect(total / 3_600_000).toBeGreaterThan(4.5)
    expect(total / 3_600_000).toBeLessThan(6)
  })

  it("jitters each gap by at most 20%", () => {
    for (const r of [0, 0.25, 0.5, 0.999]) {
      const g = gapMs(3, r)
      expect(g).toBeGreaterThanOrEqual(120_000 * 0.8)
      expect(g).toBeLessThanOrEqual(120_000 * 1.2)
    }
    expect(gapMs(3, 0)).toBeLessThan(gapMs(3, 0.999))
  })
})
