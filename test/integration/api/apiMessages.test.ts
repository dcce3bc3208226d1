import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nearestField } from "../../../src/http/edge/ErrorEnvelope"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/** Issue 35, item 7: the answers a developer reads first say what to fix, in plain words, naming the right thing. */
let service: RunningService
let merchant: Merchant
beforeAll(async () => {
  service = await startService()
  merchant = await createMerchant(service.databaseUrl)
})
afterAll(async () => {
  await service?.stop()
})

const send = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await service.request(path, {
    method: "POST",
    headers: merchant.headers("api_key", { "content-type": "application/json", ...headers }),
    body: JSON.stringify(body)
  })
  expect(res.status).toBe(400)
  const { error } = (await res.json()) as {
    error: { code: string; message: string; param?: string; doc_url: string }
  }
  expect(error.code).toBe("invalid_request")
  return error
}

const zeros = "00000000-0000-0000-0000-000000000000"
const wellFormedCreate = { amount: "12.500000", issuer_id: `iss_${zeros}`, payout_address_id: `pa_${zeros}` }

describe("API messages", () => {
  it("names a missing header as a header, in the case people write it", async () => {
    expect(await send("/v1/deposit-requests", wellFormedCreate)).toEqual({
      code: "invalid_request",
      message: "missing required header 'Idempotency-Key'",
      param: "Idempotency-Key",
      doc_url: `${service.baseUrl}/docs/errors#invalid_request`
    })
  })

  it("names a malformed header as a header", async () => {
    const error = await send("/v1/deposit-requests", wellFormedCreate, { "idempotency-key": "x".repeat(256) })
    expect(error.param).toBe("Idempotency-Key")
    expect(error.message).toBe("the Idempotency-Key header must be 1 to 255 bytes")
  })

  it("puts the right article before an id prefix", async () => {
    const error = await send(
      "/v1/deposit-requests",
      { ...wellFormedCreate, issuer_id: "iss_1" },
      { "idempotency-key": "k-1" }
    )
    expect(error.message).toBe("'issuer_id': must be an iss_ id (the iss_ prefix and a canonical UUID)")
    const payout = await send(
      "/v1/deposit-requests",
      { ...wellFormedCreate, payout_address_id: "1" },
      { "idempotency-key": "k-1" }
    )
    expect(payout.message).toBe("'payout_address_id': must be a pa_ id (the pa_ prefix and a canonical UUID)")
  })

  it("says what a URL or an email must be, not Effect's `Expected …, actual …`", async () => {
    const url = await send("/v1/issuers", { display_name: "Acme", support_url: "http://acme.example" })
    expect(url).toEqual({
      code: "invalid_request",
      message: "'support_url': must be an https:// URL, such as https://example.com/help",
      param: "support_url",
      doc_url: `${service.baseUrl}/docs/errors#invalid_request`
    })
    const email = await send("/v1/customers", { name: "Ada", email: "ada" })
    expect(email.message).toBe("'email': must be an email address, such as ops@example.com")
  })

  it("rephrases a wrong type as a sentence with what was sent", async () => {
    const error = await send("/v1/customers", { name: 5 })
    expect(error.message).toBe("'name': must be a string (got 5)")
    expect(error.message).not.toMatch(/Expected|actual/)
  })

  it("keeps the article Effect's own description already has (never 'must be an a string')", async () => {
    const error = await send("/v1/customers", { name: "x".repeat(300) })
    expect(error.message).toMatch(/^'name': must be a string at most \d+ character\(s\) long \(got "x+/)
    expect(error.message).not.toMatch(/\ban a\b/)
  })

  it("names the field a near miss meant", async () => {
    expect(await send("/v1/issuers", { name: "Acme" })).toEqual({
      code: "invalid_request",
      message: "unknown field 'name'; did you mean 'display_name'?",
      param: "name",
      doc_url: `${service.baseUrl}/docs/errors#invalid_request`
    })
    expect((await send("/v1/payout-addresses", { adress: "0x12" })).message).toBe(
      "unknown field 'adress'; did you mean 'address'?"
    )
    expect(
      (
        await send(
          "/v1/deposit-requests",
          { ...wellFormedCreate, expiresAt: "x" },
          { "idempotency-key": "k" }
        )
      ).message
    ).toBe("unknown field 'expiresAt'; did you mean 'expires_at'?")
  })

  it("names no field when nothing is near", async () => {
    const error = await send("/v1/issuers", { display_name: "Acme", colour: "red" })
    expect(error.message).toBe("unknown field 'colour'")
  })
})

describe("nearestField", () => {
  const issuer = ["display_name", "legal_name", "support_email", "support_url", "metadata"]
  it("prefers the same name spelled otherwise, then a qualified form, then a slip", () => {
    expect(nearestField("displayName", issuer)).toBe("display_name")
    expect(nearestField("email", issuer)).toBe("support_email")
    expect(nearestField("metdata", issuer)).toBe("metadata")
    expect(nearestField("x", issuer)).toBeUndefined()
    expect(nearestField("", issuer)).toBeUndefined()
  })
})
