import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { LifecycleType } from "../../../machines/DepositRequest"
import type { LifecycleEvent, Step } from "../../../machines/step"
import {
  type DepositRequestRow,
  lifecycleBodiesOf
} from "../../../services/depositRequests/DepositRequestWire"
import { Event } from "../../../src/http/Events/Api"

/**
 * Issue 35, item 4: `Event` in the OpenAPI is the union of what the emitter really sends. Bodies are built by the
 * code that builds every lifecycle webhook (`lifecycleBodiesOf`, the actor host's), one per type, and decoded with
 * `Event` refusing unknown fields; encoding gives back the very same JSON, so the schema neither misses nor drops.
 */
const row: DepositRequestRow = {
  id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b",
  account_id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a70",
  status: "awaiting_payer",
  version: "7",
  machine_version: 1,
  snapshot: {},
  amount_base_units: "25000000",
  received_base_units: "0",
  heading: "Order #4711",
  reference: "order-4711",
  metadata: { order_id: "4711" },
  customer_id: null,
  issuer_id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a71",
  payout_address_id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a72",
  payer_policy_mode: "none",
  expected_email: null,
  payer_reference: null,
  return_url: null,
  deposit_index: 3,
  deposit_address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  expires_at: new Date("2026-11-27T08:00:00Z"),
  created_at: new Date("2026-11-26T08:00:00Z"),
  updated_at: new Date("2026-11-26T08:05:00Z")
} as DepositRequestRow

const context = {
  received_base_units: "30000000",
  verification_completed_at: "2026-11-26T08:01:00.000Z",
  likely_unsolicited_at: null,
  payer_wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  wallet_bound_at: "2026-11-26T08:01:30.000Z",
  payout_address: "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
  amount_base_units: "25000000",
  settlement: { tx_hash: `0x${"ab".repeat(32)}`, block_number: "120", settled_at: "2026-11-26T08:04:00.000Z" }
}

const cases: ReadonlyArray<readonly [LifecycleType, Step["status"]]> = [
  ["deposit_request.ready", "ready"],
  ["verification.approved", "awaiting_payer"],
  ["deposit_request.deposited", "deposited"],
  ["deposit_request.settled", "settled"],
  ["deposit_request.expired", "expired"],
  ["deposit_request.returned", "returned"],
  ["deposit_request.recovered_funds", "settled"],
  ["deposit_request.likely_unsolicited", "partially_deposited"],
  ["deposit_request.needs_attention", "needs_attention"]
]

const decode = Schema.decodeUnknownSync(Event, { onExcessProperty: "error" })

describe("the Event union", () => {
  it.each(cases)(
    "decodes the body the emitter builds for %s, and encodes it back unchanged",
    (type, status) => {
      const paused = {
        attention: {
          code: "transfer_reverted",
          message: "The settlement transaction reverted.",
          since: Date.parse("2026-11-26T08:04:00Z"),
          resolution: "Check the deposit address's balance, then resume the request."
        }
      }
      const step = {
        snapshot: {},
        status,
        context: status === "needs_attention" ? { ...context, ...paused } : context,
        emitted: []
      } as unknown as Step
      const event = {
        kind: "lifecycle",
        type,
        dedupe: type,
        ...(type === "deposit_request.recovered_funds"
          ? {
              recovery: {
                id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a73",
                amount_base_units: "5000000",
                reason: "overpayment",
                transaction_hash: `0x${"cd".repeat(32)}`,
                block_number: "121",
                recovered_at: "2026-11-26T08:04:30.000Z"
              }
            }
          : {})
      } as LifecycleEvent
      const body = lifecycleBodiesOf(10143, "http://127.0.0.1:8080")(row, step)(
        "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a74",
        event,
        new Date("2026-11-26T08:05:00Z")
      )
      const json = JSON.parse(body) as unknown
      const decoded = decode(json)
      expect(decoded.type).toBe(type)
      expect(Schema.encodeSync(Event)(decoded)).toEqual(json)
      if (decoded.type === "deposit_request.recovered_funds")
        expect(decoded.data.recovery.reason).toBe("overpayment")
      // The spec: the pause's payload carries the same attention object the API shows.
      if (decoded.type === "deposit_request.needs_attention")
        expect(decoded.data.attention).toEqual({
          code: "transfer_reverted",
          message: "The settlement transaction reverted.",
          since: "2026-11-26T08:04:00Z",
          resolution: "Check the deposit address's balance, then resume the request."
        })
    }
  )

  it("refuses a body whose data does not fit its type", () => {
    const body = {
      id: "evt_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a74",
      type: "deposit_request.settled",
      occurred_at: "2026-11-26T08:05:00Z",
      data: { webhook_id: "wh_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b" }
    }
    expect(() => decode(body)).toThrow()
    expect(() => decode({ ...body, type: "webhook.test" })).not.toThrow()
    expect(() => decode({ ...body, type: "deposit_request.unknown" })).toThrow()
  })
})
