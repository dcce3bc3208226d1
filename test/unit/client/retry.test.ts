import { describe, expect, it } from "vitest"
import { isIdempotent, retryAfterSeconds, retryDelayMs } from "../../../src/client/retry"

const first = { attempt: 0, method: "POST", hasIdempotencyKey: false, retryAfter: undefined }

describe("the clients' retry policy", () => {
  it("waits out Retry-After on a 429 for any call, since nothing was done", () => {
    expect(retryDelayMs({ ...first, status: 429, retryAfter: "2" })).toBe(2000)
    expect(retryDelayMs({ ...first, method: "GET", status: 429, retryAfter: "0" })).toBe(0)
  })

  it("gives a 429 back when Retry-After is longer than the client waits, or the tries are spent", () => {
    expect(retryDelayMs({ ...first, status: 429, retryAfter: "120" })).toBeUndefined()
    expect(retryDelayMs({ ...first, status: 429, retryAfter: "120" }, { maxRetryAfterSeconds: 300 })).toBe(
      120_000
    )
    expect(retryDelayMs({ ...first, attempt: 3, status: 429, retryAfter: "1" })).toBeUndefined()
    expect(
      retryDelayMs({ ...first, attempt: 1, status: 429, retryAfter: "1" }, { maxRetries: 1 })
    ).toBeUndefined()
  })

  it("tries network errors and 503 again only for idempotent calls", () => {
    expect(retryDelayMs({ ...first, status: undefined })).toBeUndefined()
    expect(retryDelayMs({ ...first, status: 503 })).toBeUndefined()
    expect(retryDelayMs({ ...first, hasIdempotencyKey: true, status: undefined })).toBe(250)
    expect(retryDelayMs({ ...first, method: "GET", attempt: 2, status: undefined })).toBe(1000)
    expect(retryDelayMs({ ...first, method: "GET", status: 503, retryAfter: "3" })).toBe(3000)
  })

  it("never tries other answers again", () => {
    for (const status of [200, 201, 400, 401, 404, 409, 500])
      expect(retryDelayMs({ ...first, method: "GET", hasIdempotencyKey: true, status })).toBeUndefined()
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
