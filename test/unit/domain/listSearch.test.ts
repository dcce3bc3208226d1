import fc from "fast-check"
import { assert, describe, it } from "@effect/vitest"
import { parseInstant } from "../../../services/domain/Instant"
import { recogniseSearch } from "../../../services/domain/ListSearch"

const UUID = "01a21733-49e2-72e0-b061-5bcc55d5997f"

describe("parseInstant", () => {
  it("reads every RFC 3339 spelling of one instant as that instant", () => {
    const at = Date.parse("2026-11-28T08:00:00Z")
    for (const s of [
      "2026-11-28T08:00:00Z",
      "2026-11-28T08:00:00.000Z",
      "2026-11-28T08:00:00.000000000Z",
      "2026-11-28t08:00:00z",
      "2026-11-28T00:00:00-08:00",
      "2026-11-28T13:30:00+05:30",
      // A query string's unescaped `+`.
      "2026-11-28T09:00:00 01:00"
    ]) {
      assert.strictEqual(parseInstant(s)?.getTime(), at, s)
    }
  })

  it("rounds digits beyond the millisecond up, and refuses what names no instant", () => {
    assert.strictEqual(parseInstant("2026-11-28T08:00:00.0001Z")?.toISOString(), "2026-11-28T08:00:00.001Z")
    assert.strictEqual(parseInstant("2026-11-28T08:00:00.1239Z")?.toISOString(), "2026-11-28T08:00:00.124Z")
    assert.strictEqual(parseInstant("2024-02-29T00:00:00Z")?.toISOString(), "2024-02-29T00:00:00.000Z")
    for (const s of [
      "2026-11-28",
      "2026-11-28T08:00Z",
      "2026-11-28T08:00:00",
      "2026-02-29T00:00:00Z",
      "2026-11-31T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-11-28T24:00:00Z",
      "2026-11-28T08:60:00Z",
      "2026-11-28T08:00:60Z",
      "2026-11-28T08:00:00+24:00",
      "2026-11-28T08:00:00.Z",
      "2026-11-28T08:00:00.1234567890Z",
      "1764316800",
      "yesterday"
    ]) {
      assert.isUndefined(parseInstant(s), s)
    }
  })

  it("agrees with Date on toISOString's output for any millisecond", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), (ms) => {
        const d = new Date(ms)
        assert.strictEqual(parseInstant(d.toISOString())?.getTime(), ms)
      })
    ))
})

describe("recogniseSearch", () => {
  it("tells each kind apart", () => {
    assert.deepStrictEqual(recogniseSearch(`dr_${UUID}`), { kind: "id", prefix: "dr", uuid: UUID })
    assert.deepStrictEqual(recogniseSearch(`PA_${UUID.toUpperCase()}`), {
      kind: "id",
      prefix: "pa",
      uuid: UUID
    })
    for (const prefix of ["cus", "iss", "att", "va", "evt", "whd"]) {
      assert.deepInclude(recogniseSearch(`${prefix}_${UUID}`) as object, { kind: "id", prefix })
    }
    assert.deepStrictEqual(recogniseSearch(`0x${"AB".repeat(32)}`), {
      kind: "transaction_hash",
      lower: `0x${"ab".repeat(32)}`
    })
    assert.deepStrictEqual(recogniseSearch("0x52908400098527886E0F7030069857D2E4169EE7"), {
      kind: "address",
      lower: "0x52908400098527886e0f7030069857d2e4169ee7"
    })
    assert.deepStrictEqual(recogniseSearch("Ada@Example.com"), { kind: "email", text: "Ada@Example.com" })
    assert.deepStrictEqual(recogniseSearch("order-4711"), { kind: "reference", text: "order-4711" })
    // A bare UUID, or a malformed id, is text: a reference may be one.
    assert.deepStrictEqual(recogniseSearch(UUID), { kind: "reference", text: UUID })
    assert.deepStrictEqual(recogniseSearch("dr_123"), { kind: "reference", text: "dr_123" })
  })

  it("refuses an id that leads to no request, and a mistyped checksum", () => {
    for (const q of [`wh_${UUID}`, `rec_${UUID}`, `acct_${UUID}`, `ses_${UUID}`]) {
      assert.isString(recogniseSearch(q), q)
    }
    assert.isString(recogniseSearch("0x52908400098527886E0F7030069857D2E4169Ee7"))
  })
})
