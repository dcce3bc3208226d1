import { describe, expect, it } from "vitest"
import { depositRequestMachine, MACHINE_VERSION } from "../../../machines/DepositRequest"
import { explainStep, start } from "../../../machines/step"
import { activePaths, takenTransitions } from "../../../src/web/dashboard/page/inspectorState"
import { layoutMachine } from "../../../src/http/Machine/MachineGraph"

describe("the inspector's reading of a step", () => {
  it("names the paths a state value is in, nested ones with their parents", () => {
    expect(activePaths("ready")).toEqual(["ready"])
    expect(activePaths({ a: { b: "c" } })).toEqual(["a", "a.b", "a.b.c"])
    expect(activePaths(null)).toEqual([])
  })

  it("finds each drawn transition from the step's transition, and only it", async () => {
    const graph = await layoutMachine(depositRequestMachine, MACHINE_VERSION)
    for (const t of graph.transitions) {
      const taken = {
        source: t.source,
        targets: t.targetless ? [] : [t.target],
        event: t.event,
        guard: t.guard
      }
      expect(takenTransitions(graph, taken).map((x) => x.id)).toEqual([t.id])
    }
    expect(takenTransitions(graph, null)).toEqual([])
  })

  it("matches what the machine itself says a step took", async () => {
    const graph = await layoutMachine(depositRequestMachine, MACHINE_VERSION)
    const first = start({
      id: "4f8a3c1e-0000-4000-8000-000000000001",
      amount_base_units: "3000000",
      payout_address: "0x52908400098527886E0F7030069857D2E4169EE7",
      payer_policy_mode: "none",
      expires_at: "2026-11-27T12:00:00Z",
      created_at: "2026-11-26T12:00:00Z"
    })
    const attested = explainStep(first.snapshot, {
      type: "payer.wallet_attested",
      at: "2026-11-26T12:01:00Z",
      wallet: "0x0000000000000000000000000000000000000001",
      address: "0x0000000000000000000000000000000000000002"
    })
    expect(takenTransitions(graph, attested.transition).map((t) => t.id)).toEqual([
      "awaiting_payer:payer.wallet_attested:0:0"
    ])
    const credited = explainStep(attested.step.snapshot, {
      type: "deposit.credited",
      at: "2026-11-26T12:02:00Z",
      credit_id: "c1",
      amount_base_units: "1000000",
      from: "0x0000000000000000000000000000000000000001"
    })
    // The third candidate of ready on a credit (after the deadline, funding in full, in part).
    expect(takenTransitions(graph, credited.transition).map((t) => t.id)).toEqual([
      "ready:deposit.credited:2:0"
    ])
  })
})
