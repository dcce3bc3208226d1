import { assert, describe, it } from "@effect/vitest"
import { explainStep, start, step } from "../../../machines/step"
import {
  contextChanges,
  type RequestStep,
  STATELY_INSPECT_VERSION,
  statelyEvents
} from "../../../services/depositRequests/StepHistory"

const WALLET = "0x1111111111111111111111111111111111111111"
const first = () =>
  start({
    id: "dr_view",
    amount_base_units: "10",
    payout_address: WALLET,
    payer_policy_mode: "none",
    expires_at: "2030-01-01T00:00:00Z",
    created_at: "2026-01-01T00:00:00Z"
  })

describe("the step history's views", () => {
  it("lists every changed leaf by its dotted path, list entries by identity, absent values as null", () => {
    assert.deepStrictEqual(
      contextChanges(
        { a: "1", same: { x: 1 }, list: ["p"], gone: true, nested: { deep: { n: 1 } } },
        { a: "2", same: { x: 1 }, list: ["p", "q"], nested: { deep: { n: 2 } }, added: [1] }
      ),
      [
        { path: "a", change: "changed", before: "1", after: "2" },
        { path: "list[=q]", change: "added", before: null, after: "q" },
        { path: "gone", change: "removed", before: true, after: null },
        { path: "nested.deep.n", change: "changed", before: 1, after: 2 },
        { path: "added", change: "added", before: null, after: [1] }
      ]
    )
    assert.deepStrictEqual(contextChanges({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), [])
    // Entries without an identity stay paired by position.
    assert.deepStrictEqual(contextChanges({ a: [{ b: 1 }] }, { a: [{ b: 2 }] }), [
      { path: "a.0.b", change: "changed", before: 1, after: 2 }
    ])
  })

  it("pairs a settle confirmed and a return commanded in one step as one removal and one addition", () => {
    const settle = {
      kind: "command",
      type: "settle",
      command_id: "settle:dr_x",
      amount_base_units: "10",
      to: WALLET
    }
    const back = {
      kind: "command",
      type: "return",
      command_id: "return:dr_x:remainder",
      amount_base_units: "2",
      to: WALLET,
      reason: "overpayment"
    }
    assert.deepStrictEqual(contextChanges({ pending: [settle] }, { pending: [back] }), [
      { path: "pending[command_id=settle:dr_x]", change: "removed", before: settle, after: null },
      { path: "pending[command_id=return:dr_x:remainder]", change: "added", before: null, after: back }
    ])
    // An entry kept but changed is named by its identity, whatever its place.
    assert.deepStrictEqual(
      contextChanges({ pending: [settle, back] }, { pending: [{ ...back, to: "0x2" }] }).map((c) => c.path),
      ["pending[command_id=settle:dr_x]", "pending[command_id=return:dr_x:remainder].to"]
    )
  })

  it("explains no transition for an event the state does not take, and the step changes nothing", () => {
    const s = first()
    const event = { type: "settlement.confirmed", at: "x", tx_hash: "0x", block_number: "1" } as const
    const explained = explainStep(s.snapshot, event)
    assert.isNull(explained.transition)
    assert.deepStrictEqual(explained.step.snapshot, step(s.snapshot, event).snapshot)
    assert.deepStrictEqual(explained.step.emitted, [])
  })

  it("explains an unguarded transition with a null guard", () => {
    const explained = explainStep(first().snapshot, { type: "deadline.reached", at: "x" })
    assert.deepStrictEqual(explained.transition, {
      source: "depositRequest.awaiting_payer",
      targets: ["depositRequest.expired"],
      event: "deadline.reached",
      guard: null
    })
    assert.strictEqual(explained.step.status, "expired")
  })

  it("exports nothing for an empty history, and the actor first for any other", () => {
    const history = { deposit_request_id: "dr_x", machine_version: 1, retained_from_version: null, data: [] }
    assert.deepStrictEqual(statelyEvents(history), [])
    const one = {
      version: 1,
      event_id: "create",
      event: { type: "xstate.init" },
      at: "2026-11-26T12:00:00.000Z",
      instance: "a",
      snapshot_after: first().snapshot
    } as unknown as RequestStep
    const [actor] = statelyEvents({ ...history, retained_from_version: 1, data: [one] })
    assert.strictEqual(actor!.type, "@xstate.actor")
    assert.strictEqual(actor!.createdAt, String(Date.parse("2026-11-26T12:00:00.000Z")))
    assert.strictEqual(actor!._version, STATELY_INSPECT_VERSION)
    assert.notProperty(actor!, "parentId")
  })
})
