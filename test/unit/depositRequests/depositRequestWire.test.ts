import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { statusValues } from "../../../machines/step"
import {
  type DepositRequestRow,
  type LifecycleFacts,
  toWire,
  webhookFields,
  webhookSubset
} from "../../../services/depositRequests/DepositRequestWire"
import { CreatedDepositRequest, DepositRequest } from "../../../src/http/DepositRequests/Api"
import { Metadata } from "../../../src/http/Schemas"

/**
 * The create answer is sent as `toWire` builds it, without the endpoint's schema encoding (a measured cost of every
 * create). That is only right while `toWire` builds exactly the schema's encoded form: encoding it changes nothing
 * (no field dropped, renamed or reformatted) and it decodes, for every row and every lifecycle fact.
 */
const uuid = fc.uuid({ version: 7 })
const baseUnits = fc.bigInt({ min: 0n, max: 10n ** 18n }).map(String)
const date = fc.date({
  min: new Date("2020-01-01T00:00:00Z"),
  max: new Date("2040-01-01T00:00:00Z"),
  noInvalidDate: true
})
const iso = date.map((d) => d.toISOString())
const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: length, maxLength: length })
const address = hex(40).map((h) => `0x${h}`)
const text = fc.string({ maxLength: 40 })

const row: fc.Arbitrary<DepositRequestRow> = fc.record({
  id: uuid,
  account_id: uuid,
  status: fc.constant("awaiting_payer"),
  version: fc.bigInt({ min: 1n, max: 10n ** 6n }).map(String),
  machine_version: fc.constant(1),
  snapshot: fc.constant({}),
  amount_base_units: fc.bigInt({ min: 1n, max: 10n ** 18n }).map(String),
  received_base_units: baseUnits,
  heading: text,
  reference: text,
  // As the API stores it: through the payload's schema (which, for one, drops a `__proto__` key).
  metadata: fc
    .dictionary(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ maxLength: 50 }), { maxKeys: 5 })
    .map((m) => Schema.decodeUnknownSync(Metadata)(m)),
  customer_id: fc.option(uuid, { nil: null }),
  issuer_id: uuid,
  payout_address_id: uuid,
  payer_policy_mode: fc.constantFrom("none" as const, "mailbox" as const, "merchant_session" as const),
  expected_email: fc.option(fc.emailAddress(), { nil: null }),
  payer_reference: fc.option(text, { nil: null }),
  return_url: fc.option(text, { nil: null }),
  deposit_index: fc.option(fc.nat(), { nil: null }),
  deposit_address: fc.option(address, { nil: null }),
  expires_at: date,
  created_at: date,
  updated_at: date
})

const facts: fc.Arbitrary<LifecycleFacts> = fc.record({
  status: fc.constantFrom(...statusValues),
  receivedBaseUnits: baseUnits,
  verificationCompletedAt: fc.option(iso, { nil: null }),
  likelyUnsolicitedAt: fc.option(iso, { nil: null }),
  payerWallet: fc.option(address, { nil: null }),
  address: fc.option(address, { nil: null }),
  walletBoundAt: fc.option(iso, { nil: null }),
  attention: fc.option(fc.record({ code: text, message: text, since: iso, resolution: text }), { nil: null }),
  settlement: fc.option(
    fc.record({
      payoutAddress: address,
      amountBaseUnits: baseUnits,
      transactionHash: fc.option(hex(64), { nil: null }),
      blockNumber: fc.option(fc.nat().map(String), { nil: null }),
      settledAt: fc.option(iso, { nil: null })
    }),
    { nil: null }
  ),
  cancellation: fc.option(fc.record({ at: iso, reason: fc.option(text, { nil: null }) }), { nil: null })
})

describe("the deposit request wire form", () => {
  it("is the answer schemas' encoded form, field for field, for any row and facts", () => {
    const encodeCreated = Schema.encodeSync(CreatedDepositRequest)
    const decodeCreated = Schema.decodeUnknownSync(CreatedDepositRequest)
    const encodeRead = Schema.encodeSync(DepositRequest)
    fc.assert(
      fc.property(row, facts, fc.option(fc.string({ minLength: 10, maxLength: 60 })), (r, f, secret) => {
        const wire = toWire(r, f, 10143, "http://127.0.0.1:8080")
        // The same bytes on the wire, key order included, as the schema's encoding would have sent.
        const bytes = (value: unknown) => JSON.stringify(value)
        expect(bytes(encodeRead(wire))).toBe(bytes(wire))
        const created = secret === null ? wire : { ...wire, merchant_session_secret: secret }
        expect(bytes(encodeCreated(created))).toBe(bytes(created))
        expect(decodeCreated(created)).toEqual(created)
      }),
      { numRuns: 300 }
    )
  })

  it("gives webhooks exactly the listed fields, in the list's order, with the wire's values", () => {
    fc.assert(
      fc.property(row, facts, (r, f) => {
        const wire = toWire(r, f, 10143, "http://127.0.0.1:8080")
        const subset = webhookSubset(wire)
        expect(Object.keys(subset)).toEqual([...webhookFields])
        for (const key of webhookFields) expect(subset[key]).toBe(wire[key])
      }),
      { numRuns: 200 }
    )
  })
})
