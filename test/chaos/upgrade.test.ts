import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildRelease, currentBuild, previousRelease } from "./Release"
import { type ChaosRun, runChaos, summaryOf } from "./Run"

/**
 * Issue 47: a short rolling upgrade. Two instances of the previous release (built from git history) start the run and
 * migrate the database; mid-run each is replaced by this checkout, the first new one applying the new migrations, while
 * the workload and the faults go on; the checker then holds the whole history as in any chaos run. The step history
 * names who applied each step, so the test sees snapshots written by one version and read by the other.
 */
const SEED = 47
let run: ChaosRun | undefined
const previous = previousRelease()

beforeAll(async () => {
  run = await runChaos({
    seconds: 60,
    seed: SEED,
    instances: 2,
    settleWithinMs: 120_000,
    upgradeFrom: buildRelease(previous.ref)
  })
}, 600_000)
afterAll(async () => {
  await run?.stop()
}, 60_000)

describe("a rolling upgrade from the previous release", () => {
  it("holds every invariant while both versions serve, and each reads what the other wrote", async () => {
    const violations = await run!.check()
    const { figures } = run!
    console.log(summaryOf(figures, violations, run!.history.notes))
    expect(violations).toEqual([])
    const upgrade = figures.upgrade!
    const [from, to] = [previous.version, currentBuild().version]
    expect(from).not.toBe(to)
    expect([upgrade.from, upgrade.to]).toEqual([from, to])
    expect(upgrade.replacements.map((r) => r.instance)).toEqual([0, 1])
    expect(upgrade.crossings.stepsByVersion[from]).toBeGreaterThan(0)
    expect(upgrade.crossings.stepsByVersion[to]).toBeGreaterThan(0)
    expect(upgrade.crossings.requestsAcrossVersions).toBeGreaterThan(0)
    // Which way a request crosses depends on which instance held the leases when; test/e2e/mixedVersions.test.ts
    // crosses both ways on purpose.
    expect(Object.values(upgrade.crossings.snapshotReads).reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(figures.deliveries2xx).toBeGreaterThan(0)
  }, 120_000)
})
