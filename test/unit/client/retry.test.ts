import { describe, expect, it } from "vitest"
import { backoffCeilingMs, isIdempotent, retryAfterSeconds, retryDelayMs } from "../../../src/client/retry"

const keyed = { attempt: 0, method: "POST", hasIdempotencyKey: true, retryAfter: undefined }
const top = { random: () => 0.999_999 }
const bottom = { random: () => 0 }

describe("the clients' retry policy", () => {
  it("waits out Retry-After on a 429 and adds a jitter draw to it, never takes one from it", () => {
    expect(retryDelayMs({ ...keyed, status: 429, retryAfter: "2" }, bottom)).toBe(2000)
    expect(retryDelayMs({ ...keyed, status: 429, retryAfter: "2" }, top)).toBe(2249)
    expect(retryDelayMs({ ...keyed, method: "GET", status: 429, retryAfter: "0" }, bottom)).toBe(0)
  })

  it("gives a 429 back when Retry-After is longer than the client waits, or the tries are spent", () => {
    expect(retryDelayMs({ ...keyed, status: 429, retryAfter: "120" })).toBeUndefined()
    expect(
      retryDelayMs({ ...keyed, status: 429, retryAfter: "120" }, { maxRetryAfterSeconds: 300, ...bottom })
    ).toBe(120_000)
    expect(retryDelayMs({ ...keyed, attempt: 3, status: 429, retryAfter: "1" })).toBeUndefined()
    expect(
      retryDelayMs({ ...keyed, attempt: 1, status: 429, retryAfter: "1" }, { maxRetries: 1 })
    ).toBeUndefined()
  })

  it("never tries a POST, PATCH or DELETE without an Idempotency-Key again, whatever the answer", () => {
    for (const method of ["POST", "PATCH", "DELETE"])
      for (const status of [undefined, 429, 502, 503, 504])
        expect(
          retryDelayMs({ ...keyed, method, hasIdempotencyKey: false, status, retryAfter: "1" })
        ).toBeUndefined()
  })

  it("draws each wait uniformly below a ceiling that doubles up to its cap (full jitter)", () => {
    expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffCeilingMs(attempt))).toEqual([
      250, 500, 1000, 2000, 4000, 4000
    ])
    for (const attempt of [0, 1, 2]) {
      expect(retryDelayMs({ ...keyed, attempt, status: undefined }, bottom)).toBe(0)
      expect(retryDelayMs({ ...keyed, attempt, status: 503 }, top)).toBe(backoffCeilingMs(attempt) - 1)
    }
    expect(retryDelayMs({ ...keyed, method: "GET", status: 503, retryAfter: "3" }, bottom)).toBe(3000)
    // A thousand clients refused together spread over the whole window rather than coming back together.
    const draws = Array.from(
      { length: 1000 },
      () => retryDelayMs({ ...keyed, attempt: 2, status: 502 }) ?? -1
    )
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...draws)).toBeLessThan(1000)
    expect(new Set(draws.map((d) => Math.floor(d / 100))).size).toBe(10)
  })

  it("never tries other answers again", () => {
    for (const status of [200, 201, 400, 401, 404, 409, 500])
      expect(retryDelayMs({ ...keyed, method: "GET", status })).toBeUndefined()
  })

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-26T10:00:00Z")
    expect(retryAfterSeconds("5", now)).toBe(5)
    expect(retryAfterSeconds("Thu, 26 Nov 2026 10:00:07 GMT", now)).toBe(7)
    expect(retryAfterSeconds("soon", now)).toBeUndefined()
    expect(retryAfterSeconds(null, now)).toBeUndefined()
    expect(isIdempotent("get", false)).toBe(true)
    expect(isIdempotent("PATCH", false)).toBe(false)
  })
})
