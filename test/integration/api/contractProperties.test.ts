import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { errorTable } from "../../../src/http/Errors"
import { merchantClient } from "../../support/Api"
import { countRows } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

let service: RunningService
let merchant: Merchant
let refs: { issuerId: string; payoutAddressId: string }
const documented = new Set(errorTable.map((e) => `${e.status} ${e.code}`))

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 100_000 } })
  merchant = await createMerchant(service.databaseUrl)
  refs = await merchantClient(service, merchant).setup()
})
afterAll(async () => {
  await service?.stop()
})

/** Every refusal is a documented 4xx with the envelope; never a 500. */
const expectTableError = async (res: Response) => {
  expect(res.status).toBeGreaterThanOrEqual(400)
  expect(res.status).toBeLessThan(500)
  const body = (await res.json()) as { error: { code: string; message: string }; request_id: string }
  expect(documented.has(`${res.status} ${body.error.code}`)).toBe(true)
  expect(body.request_id).toBe(res.headers.get("x-request-id"))
}

// Bodies that can never be a valid create: missing the required fields, or not an object at all.
const malformedBody = fc.oneof(
  fc.string(),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string(), fc.jsonValue()).map((o) => JSON.stringify({ ...o, amount: undefined })),
  fc
    .record({
      amount: fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constant(null)),
      extra: fc.jsonValue()
    })
    .map((o) => JSON.stringify({ ...o, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId }))
)

describe("random malformed input", () => {
  it("gets a 4xx from the table and writes no row", async () => {
    const before = await countRows(service.databaseUrl)
    await fc.assert(
      fc.asyncProperty(malformedBody, fc.string({ minLength: 1, maxLength: 40 }), async (body, key) => {
        const res = await service.request("/v1/deposit-requests", {
          method: "POST",
          headers: merchant.headers("api_key", {
            "content-type": "application/json",
            "idempotency-key": `p-${key}`
          }),
          body
        })
        await expectTableError(res)
      }),
      { numRuns: 150 }
    )
    expect(await countRows(service.databaseUrl)).toEqual(before)
  })

  it("answers any path id that is not a canonical dr_ id with 404 deposit_request_not_found", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uuid(),
          fc.string({ minLength: 1 }),
          fc.uuid().map((u) => `cus_${u}`),
          fc.uuid().map((u) => `dr_${u.toUpperCase()}`)
        ),
        async (raw) => {
          const res = await service.request(`/v1/deposit-requests/${encodeURIComponent(raw)}`, {
            headers: merchant.headers()
          })
          if (res.status === 404) {
            const body = (await res.json()) as { error: { code: string } }
            expect(["deposit_request_not_found", "route_not_found"]).toContain(body.error.code)
          } else await expectTableError(res)
        }
      ),
      { numRuns: 150 }
    )
  })

  it("never fails on random header values", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        fc.string({ maxLength: 60 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        async (requestId, authorization) => {
          const res = await service.request("/v1/deposit-requests", {
            headers: { "x-request-id": requestId, authorization }
          })
          const echoed = res.headers.get("x-request-id")
          expect(echoed).toBeTruthy()
          if (requestId.length >= 1 && requestId.length <= 128 && requestId.trim() === requestId) {
            expect(echoed).toBe(requestId)
          }
          await expectTableError(res)
        }
      ),
      { numRuns: 150 }
    )
  })
})
