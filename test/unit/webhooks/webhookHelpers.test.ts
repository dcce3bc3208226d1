import { createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { sign, verify, WebhookVerificationError } from "../../../src/client/webhooks"

// Every comparison of digests must go through WebCrypto's verify, which compares in constant time: spy on it.
const subtleVerify = vi.spyOn(globalThis.crypto.subtle, "verify")

const SECRET = "whsec_current"
const OLD = "whsec_previous"
const NOW = 1_790_000_000
const body = JSON.stringify({
  id: "evt_0192d1f4a8a87c3a9f1f7a1e2b3c4d5e",
  type: "deposit_request.settled",
  occurred_at: "2026-09-21T10:00:00Z",
  data: {
    deposit_request: { id: "dr_0192d1f4a8a87c3a9f1f7a1e2b3c4d5f", status: "settled", metadata: { "10": "a" } }
  }
})

/** The spec's header, computed independently of the helper. */
const specHeader = (secret: string, t: number, raw: string) =>
  `v1,t=${t},sha256=${createHmac("sha256", secret).update(`v1.${t}.${raw}`).digest("hex")}`

const refusal = async (run: () => Promise<unknown>) => {
  try {
    await run()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as WebhookVerificationError).code
  }
  throw new Error("not refused")
}

describe("verify", () => {
  it("returns the event of a delivery signed as the spec says, from Node or Fetch headers, string or bytes", async () => {
    const headers = {
      "Service-Signature": specHeader(SECRET, NOW, body),
      "service-event-id": JSON.parse(body).id
    }
    const event = await verify(body, headers, SECRET, { now: NOW })
    expect(event.type).toBe("deposit_request.settled")
    if (event.type === "deposit_request.settled") expect(event.data.deposit_request.status).toBe("settled")
    expect((await verify(Buffer.from(body), new Headers(headers), SECRET, { now: NOW })).id).toBe(event.id)
    expect((await verify(new TextEncoder().encode(body), headers, [SECRET], { now: NOW })).id).toBe(event.id)
  })

  it("compares digests in constant time, once per secret", async () => {
    const compare = subtleVerify
    compare.mockClear()
    await verify(body, { "service-signature": specHeader(SECRET, NOW, body) }, [SECRET, OLD], { now: NOW })
    expect(compare).toHaveBeenCalledTimes(2)
    compare.mockClear()
    // A digest of the wrong length still costs a constant-time compare.
    expect(
      await refusal(() =>
        verify(body, { "service-signature": `v1,t=${NOW},sha256=abcd` }, SECRET, { now: NOW })
      )
    ).toBe("signature_mismatch")
    expect(compare).toHaveBeenCalledTimes(1)
  })

  it("verifies with [new, old] during a rotation, and refuses the old secret's delivery without it", async () => {
    const byOld = { "service-signature": specHeader(OLD, NOW, body) }
    const byNew = { "service-signature": specHeader(SECRET, NOW, body) }
    expect((await verify(body, byOld, [SECRET, OLD], { now: NOW })).id).toMatch(/^evt_/)
    expect((await verify(body, byNew, [SECRET, OLD], { now: NOW })).id).toMatch(/^evt_/)
    expect(await refusal(() => verify(body, byOld, [SECRET], { now: NOW }))).toBe("signature_mismatch")
  })

  it("accepts a header with several signatures when any one matches, comparing each in constant time", async () => {
    const digestOf = (secret: string) => specHeader(secret, NOW, body).split("sha256=")[1]
    // What a delivery carries during a rotation's grace: one `sha256=` per live secret, newest first.
    const both = { "service-signature": `v1,t=${NOW},sha256=${digestOf(SECRET)},sha256=${digestOf(OLD)}` }
    expect((await verify(body, both, SECRET, { now: NOW })).id).toMatch(/^evt_/)
    expect((await verify(body, both, OLD, { now: NOW })).id).toMatch(/^evt_/)
    expect((await verify(body, both, [SECRET, OLD], { now: NOW })).id).toMatch(/^evt_/)
    expect(await refusal(() => verify(body, both, "whsec_other", { now: NOW }))).toBe("signature_mismatch")
    expect(await refusal(() => verify(`${body} `, both, [SECRET, OLD], { now: NOW }))).not.toBe(undefined)
    // A malformed element beside a valid one does not stop the valid one from passing.
    const withJunk = { "service-signature": `v1,t=${NOW},sha256=zz,sha256=${digestOf(OLD)}` }
    expect((await verify(body, withJunk, OLD, { now: NOW })).id).toMatch(/^evt_/)
    const compare = subtleVerify
    compare.mockClear()
    await verify(body, both, [SECRET, OLD], { now: NOW })
    expect(compare).toHaveBeenCalledTimes(4)
    // The service's signer and `sign` write that header.
    expect((await sign(body, [SECRET, OLD], { timestamp: NOW }))["service-signature"]).toBe(
      both["service-signature"]
    )
  })

  it("refuses a missing or malformed header, and any scheme but v1", async () => {
    expect(await refusal(() => verify(body, {}, SECRET, { now: NOW }))).toBe("missing_header")
    expect(
      await refusal(() => verify(body, { "service-signature": "v1,sha256=00" }, SECRET, { now: NOW }))
    ).toBe("missing_header")
    expect(
      await refusal(() => verify(body, { "service-signature": `v1,t=${NOW}` }, SECRET, { now: NOW }))
    ).toBe("missing_header")
    const v2 = specHeader(SECRET, NOW, body).replace(/^v1/, "v2")
    expect(await refusal(() => verify(body, { "service-signature": v2 }, SECRET, { now: NOW }))).toBe(
      "unsupported_scheme"
    )
  })

  it("refuses a timestamp outside the tolerance, stale or future, and accepts one at its edge", async () => {
    const headers = { "service-signature": specHeader(SECRET, NOW, body) }
    expect((await verify(body, headers, SECRET, { now: NOW + 300 })).id).toMatch(/^evt_/)
    expect((await verify(body, headers, SECRET, { now: NOW - 300 })).id).toMatch(/^evt_/)
    expect(await refusal(() => verify(body, headers, SECRET, { now: NOW + 301 }))).toBe(
      "timestamp_outside_tolerance"
    )
    expect(await refusal(() => verify(body, headers, SECRET, { now: NOW - 301 }))).toBe(
      "timestamp_outside_tolerance"
    )
    expect(await refusal(() => verify(body, headers, SECRET, { now: NOW + 31, tolerance: 30 }))).toBe(
      "timestamp_outside_tolerance"
    )
    // Checked before the signature: a replayed old delivery says it is old, not that it is forged.
    const stale = { "service-signature": specHeader(SECRET, NOW - 3600, body) }
    await expect(verify(body, stale, SECRET, { now: NOW })).rejects.toThrow(/3600 s old/)
  })

  it("refuses a changed body or a wrong secret as signature_mismatch", async () => {
    const headers = { "service-signature": specHeader(SECRET, NOW, body) }
    expect(
      await refusal(() => verify(body.replace("settled", "expired"), headers, SECRET, { now: NOW }))
    ).toBe("signature_mismatch")
    expect(await refusal(() => verify(body, headers, "whsec_other", { now: NOW }))).toBe("signature_mismatch")
  })

  it("refuses a parsed body, a missing one and JSON written out again as body_reserialised", async () => {
    const headers = { "service-signature": specHeader(SECRET, NOW, body) }
    const parsed = JSON.parse(body) as unknown as string
    expect(await refusal(() => verify(parsed, headers, SECRET, { now: NOW }))).toBe("body_reserialised")
    expect(await refusal(() => verify(String(parsed), headers, SECRET, { now: NOW }))).toBe(
      "body_reserialised"
    )
    expect(await refusal(() => verify(undefined as unknown as string, headers, SECRET, { now: NOW }))).toBe(
      "body_reserialised"
    )
    const pretty = JSON.stringify(JSON.parse(body), null, 2)
    expect(await refusal(() => verify(pretty, headers, SECRET, { now: NOW }))).toBe("body_reserialised")
  })

  it("refuses a signed body that is not an event, or whose id differs from the header", async () => {
    const check = (raw: string, extra: Record<string, string> = {}) =>
      refusal(() =>
        verify(raw, { "service-signature": specHeader(SECRET, NOW, raw), ...extra }, SECRET, { now: NOW })
      )
    expect(await check("not json")).toBe("invalid_payload")
    expect(await check(JSON.stringify({ id: "evt_1", type: "webhook.test" }))).toBe("invalid_payload")
    expect(
      await check(
        JSON.stringify({ id: "x", type: "webhook.test", occurred_at: "t", data: { webhook_id: "wh_1" } })
      )
    ).toBe("invalid_payload")
    expect(
      await check(JSON.stringify({ id: "evt_1", type: "deposit_request.ready", occurred_at: "t", data: {} }))
    ).toBe("invalid_payload")
    expect(await check(body, { "service-event-id": "evt_other" })).toBe("invalid_payload")
  })
})

describe("sign", () => {
  it("gives the headers of a delivery, which verify accepts and the spec's check reproduces", async () => {
    const headers = await sign(body, SECRET, { timestamp: NOW })
    expect(headers["service-signature"]).toBe(specHeader(SECRET, NOW, body))
    expect(headers["service-event-id"]).toBe(JSON.parse(body).id)
    expect(headers["service-event-type"]).toBe("deposit_request.settled")
    expect(headers["content-type"]).toBe("application/json")
    expect((await verify(body, headers, SECRET, { now: NOW })).id).toBe(JSON.parse(body).id)
    const now = await sign(body, SECRET)
    expect((await verify(body, now, SECRET)).id).toBe(JSON.parse(body).id)
  })
})
