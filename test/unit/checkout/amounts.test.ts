import fc from "fast-check"
import { describe, expect, it } from "@effect/vitest"
import { formatMoney, networkName, usdc } from "../../../src/web/checkout/page/amounts"
import { favicon } from "../../../src/web/checkout/Favicon"

/** Issue 35: the checkout shows money the way people read it, and never rounds a digit away. */
describe("checkout amounts", () => {
  it("groups thousands, always shows cents, and keeps every digit that is not zero", () => {
    expect(formatMoney(4_250_000n)).toBe("4.25")
    expect(formatMoney(3_000_000n)).toBe("3.00")
    expect(formatMoney(1n)).toBe("0.000001")
    expect(formatMoney(0n)).toBe("0.00")
    expect(formatMoney(1_234_567_891_234n)).toBe("1,234,567.891234")
    expect(formatMoney(1_000_000_000n)).toBe("1,000.00")
    expect(formatMoney(-1_500_000n)).toBe("-1.50")
    expect(usdc("12500000")).toBe("12.50 USDC")
  })

  it("reads back to the exact base units it came from", () =>
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), (units) => {
        const [whole = "", fraction = ""] = formatMoney(units).replaceAll(",", "").split(".")
        expect(BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"))).toBe(units)
        expect(fraction.length).toBeGreaterThanOrEqual(2)
      })
    ))

  it("names the network of each chain, and the sandbox's as a test network", () => {
    expect(networkName(143, false)).toBe("Monad (chain 143)")
    expect(networkName(10143, false)).toBe("Monad Testnet (chain 10143)")
    expect(networkName(10143, true)).toBe("the sandbox test network (chain 10143)")
    expect(networkName(1, false)).toBe("chain 1")
  })

  it("draws a 32×32 icon in a well-formed ICO", () => {
    const ico = favicon()
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([0, 1, 1])
    expect([ico.readUInt8(6), ico.readUInt8(7)]).toEqual([32, 32])
    expect(ico.readUInt32LE(18) + ico.readUInt32LE(14)).toBe(ico.length)
  })
})
