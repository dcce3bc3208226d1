import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChaosRun, runChaos, summaryOf } from "./Run"

/**
 * Issue 47: the restore drill's short form. A seeded chaos run on two instances with a `pg_dump` of the service's
 * database taken mid-run; payments, settlements, returns and webhooks carry on under faults; then every instance is
 * stopped, the dump restored under the same name and the service started again on the same chain and NATS. The
 * usual checker (nothing paid twice, reconciliation at zero, every event delivered) and the drill's own (every
 * payout and return after the backup recognised from the chain, every credit found again, every event raised again
 * under its first id) hold with zero violations.
 */
const SEED = 47
let run: ChaosRun | undefined

beforeAll(async () => {
  run = await runChaos({ seconds: 45, seed: SEED, instances: 2, settleWithinMs: 150_000, restoreDrill: true })
}, 600_000)
afterAll(async () => {
  await run?.stop()
}, 60_000)

describe("a restore from a backup taken mid-run", () => {
  it("pays nothing twice, finds every credit again and keeps every event's id", async () => {
    const violations = await run!.check()
    const { figures } = run!
    console.log(summaryOf(figures, violations, run!.history.notes))
    expect(violations).toEqual([])
    const drill = figures.restore!
    expect(drill.requestsKept).toBeGreaterThan(0)
    // Money moved after the backup, and the restored service recognised it rather than sending it again.
    expect(drill.payoutsAfterBackup + drill.returnsAfterBackup).toBeGreaterThan(0)
    expect(drill.transfersRecognised).toBeGreaterThan(0)
    expect(drill.eventsBeforeRestore).toBeGreaterThan(0)
    expect(figures.settleAfterLastFaultMs).toBeDefined()
  }, 180_000)
})
