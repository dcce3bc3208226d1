import { describe, expect, it } from "@effect/vitest"
import type { DepositRequestEvent, Step } from "../../../machines/step"
import { start, step } from "../../../machines/step"
import { createdLine, steppedLine } from "../../../services/actors/LifecycleLog"
import { toId } from "../../../services/domain/PrefixedId"

// The sandbox's lifecycle lines for the paths the spawned test (test/e2e/sandboxStart.test.ts) does not drive:
// underpaid, expired with a balance and returned, paused.

const UUID = "01a216c5-b2ab-77c6-93da-f3676dcedd31"
const ID = toId("dr", UUID)
const WALLET = "0x1111111111111111111111111111111111111111"
const DEPOSIT = "0x4444444444444444444444444444444444444444"
const TX = `0x${"ab".repeat(32)}`

/** Steps the machine through `events` from a new 10 USDC request, returning each step's line. */
const linesOf = (events: ReadonlyArray<DepositRequestEvent>) => {
  let s: Step = start({
    id: UUID,
    amount_base_units: "10000000",
    payout_address: "0x3333333333333333333333333333333333333333",
    payer_policy_mode: "none",
    expires_at: "2026-11-23T12:00:00Z",
    created_at: "2026-11-22T12:00:00Z"
  })
  return events.map((event) => {
    s = step(s.snapshot, event)
    return steppedLine({ id: UUID, event, step: s })
  })
}

const attest: DepositRequestEvent = {
  type: "payer.wallet_attested",
  at: "2026-11-22T12:01:00Z",
  wallet: WALLET,
  address: DEPOSIT
}
const credit = (amount: string, id = "c1"): DepositRequestEvent => ({
  type: "deposit.credited",
  at: "2026-11-22T12:02:00Z",
  credit_id: id,
  amount_base_units: amount,
  from: WALLET
})

describe("the sandbox's lifecycle lines", () => {
  it("a creation names the request, its amount and its first status", () => {
    expect(createdLine({ id: UUID, amount_base_units: "10000000", status: "awaiting_payer" })).toBe(
      `lifecycle ${ID} created 10.000000 USDC → awaiting_payer`
    )
  })

  it("an underpayment says by how much, and the payment that completes it says it is paid exactly", () => {
    const [, partial, rest] = linesOf([attest, credit("4000000"), credit("6000000", "c2")])
    expect(partial).toBe(
      `lifecycle ${ID} deposit.credited 4.000000 USDC from ${WALLET}; received 4.000000 of 10.000000, ` +
        "underpaid by 6.000000 → partially_deposited"
    )
    expect(rest).toBe(
      `lifecycle ${ID} deposit.credited 6.000000 USDC from ${WALLET}; received 10.000000 of 10.000000, ` +
        "paid exactly → deposited; webhook deposit_request.deposited; commands settle 10.000000 USDC"
    )
  })

  it("an expiry with a balance commands its return, and the confirmed return names its amount and reason", () => {
    const lines = linesOf([
      attest,
      credit("4000000"),
      { type: "deadline.reached", at: "2026-11-23T12:00:00Z" },
      {
        type: "return.confirmed",
        at: "2026-11-23T12:01:00Z",
        command_id: `return:${UUID}:expired_balance:balance`,
        tx_hash: TX,
        block_number: "42"
      }
    ])
    expect(lines[2]).toBe(
      `lifecycle ${ID} deadline.reached → expired; webhook deposit_request.expired; ` +
        "commands return 4.000000 USDC (expired_balance)"
    )
    expect(lines[3]).toBe(
      `lifecycle ${ID} return.confirmed 4.000000 USDC (expired_balance), tx ${TX} → returned; ` +
        "webhook deposit_request.recovered_funds, deposit_request.returned"
    )
  })

  it("a pause names its code", () => {
    const [, paused] = linesOf([
      attest,
      {
        type: "attention.raised",
        at: "2026-11-22T12:03:00Z",
        code: "treasury_out_of_gas",
        message: "The treasury has no gas.",
        resolution: "Fund the treasury, then resume."
      }
    ])
    expect(paused).toBe(
      `lifecycle ${ID} attention.raised treasury_out_of_gas (paused) → needs_attention; ` +
        "webhook deposit_request.needs_attention"
    )
  })
})
