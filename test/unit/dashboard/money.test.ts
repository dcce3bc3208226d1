import { describe, expect, it } from "vitest"
import { idempotencyKey, toApiAmount } from "../../../src/web/dashboard/page/money"

describe("an amount typed in the create form", () => {
  it("becomes the API's six-decimal string without floats", () => {
    expect(toApiAmount("3.25")).toBe("3.250000")
    expect(toApiAmount("1")).toBe("1.000000")
    expect(toApiAmount("1,250.5")).toBe("1250.500000")
    expect(toApiAmount("0.000001")).toBe("0.000001")
    expect(toApiAmount("007.10")).toBe("7.100000")
    expect(toApiAmount("90071992547409931.123456")).toBe("90071992547409931.123456")
  })
  it("refuses what is not an amount, in a sentence", () => {
    for (const bad of ["", "1.1234567", "-1", "1e3", "abc"])
      expect(() => toApiAmount(bad)).toThrow(/at most 6 decimals/)
  })
})

describe("an Idempotency-Key", () => {
  it("is a fresh UUID v4 each time", () => {
    const a = idempotencyKey()
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(idempotencyKey()).not.toBe(a)
  })
})
