import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PAY_MODES } from "./History"
import { type ChaosRun, runChaos, summaryOf } from "./Run"

/**
 * Issue 39: a short seeded chaos run (two instances, its own PostgreSQL, a three-node JetStream cluster, the local
 * chain behind the fault proxy, HTTPS receivers) with every fault kind at least once, checked over the whole history;
 * then each planted fault, simulated by the runner as a buggy service would have acted, named by the checker.
 */
const SEED = 39
let run: ChaosRun | undefined

beforeAll(async () => {
  run = await runChaos({ seconds: 45, seed: SEED, instances: 2, settleWithinMs: 120_000 })
}, 300_000)
afterAll(async () => {
  await run?.stop()
}, 60_000)

describe("a seeded chaos run", () => {
  it("settles with zero violations after every kind of fault under every kind of payment", async () => {
    const violations = await run!.check()
    const { figures } = run!
    console.log(summaryOf(figures, violations, run!.history.notes))
    expect(violations).toEqual([])
    expect(Object.keys(figures.requestsByMode).sort()).toEqual([...PAY_MODES].sort())
    expect(Object.keys(figures.faultsByKind).sort()).toEqual(
      [
        "instance-sigkill",
        "instance-sigterm",
        "nats-node-kill",
        "nats-node-wipe",
        "postgres-restart",
        "reorg",
        "rpc",
        "treasury-gas"
      ].sort()
    )
    expect(figures.settleAfterLastFaultMs).toBeDefined()
    expect(figures.deliveries2xx).toBeGreaterThan(0)
  }, 120_000)
})

describe("the checker over planted faults", () => {
  it("names a payout sent twice", async () => {
    const id = await run!.plant("double-payout")
    const violations = await run!.check()
    expect(violations.filter((v) => v.rule === "payout-count" && v.detail.includes(id))).toHaveLength(1)
  }, 120_000)

  it("names an event delivered again with other bytes under the same id", async () => {
    const eventId = await run!.plant("changed-bytes")
    const violations = await run!.check()
    expect(violations.some((v) => v.rule === "changed-bytes" && v.detail.includes(eventId))).toBe(true)
  }, 120_000)

  it("names a recovery left out of the ledger", async () => {
    const id = await run!.plant("ledger-gap")
    const violations = await run!.check()
    expect(violations.some((v) => v.rule === "ledger-gap" && v.detail.includes(id))).toBe(true)
  }, 120_000)
})
