import { execFile } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { type DepositRequestEvent, explainStep, start, step } from "../../../machines/step"
import { contextChanges } from "../../../services/depositRequests/StepHistory"
import { type ReplayedStep, stepsAsTest } from "../../../src/web/dashboard/page/stepsAsTest"

/**
 * The inspector's "Copy as a test": the test it writes for a request paid over (a settle, then the return of the
 * excess) is run by vitest in a folder of its own, as an engineer would run it pasted, and passes; the same test
 * with one persisted snapshot changed fails, so it does hold the replay to the history.
 */
const WALLET = "0x1111111111111111111111111111111111111111"
const ADDRESS = "0x2222222222222222222222222222222222222222"
const HASH = `0x${"ab".repeat(32)}`
const run = promisify(execFile)
// As deep under the repository as test/unit/<room>/, so the generated import of machines/step resolves as pasted.
const folder = join(process.cwd(), "test", ".artifacts", `replay-${randomUUID()}`)

afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** A history as the service keeps it: each event through the pure step, with the snapshot before and after. */
const history = (): Array<ReplayedStep> => {
  const created = start({
    id: "dr_replayed",
    amount_base_units: "3000000",
    payout_address: WALLET,
    payer_policy_mode: "none",
    expires_at: "2030-01-01T00:00:00.000Z",
    created_at: "2026-11-28T10:00:00.000Z"
  })
  const events: Array<DepositRequestEvent> = [
    { type: "payer.wallet_attested", at: "2026-11-28T10:01:00.000Z", wallet: WALLET, address: ADDRESS },
    {
      type: "deposit.credited",
      at: "2026-11-28T10:02:00.000Z",
      credit_id: `10143:${HASH}:0`,
      amount_base_units: "4000000",
      from: WALLET
    },
    { type: "settlement.confirmed", at: "2026-11-28T10:03:00.000Z", tx_hash: HASH, block_number: "12" }
  ]
  const out: Array<ReplayedStep> = [
    {
      version: 1,
      event: { type: "xstate.init" },
      status_after: created.status,
      snapshot_before: null,
      snapshot_after: JSON.parse(JSON.stringify(created.snapshot)),
      emitted: { lifecycle: [], commands: [] }
    }
  ]
  let snapshot = out[0]!.snapshot_after
  for (const [i, event] of events.entries()) {
    const next = explainStep(snapshot, event).step
    const after = JSON.parse(JSON.stringify(step(snapshot, event).snapshot)) as unknown
    out.push({
      version: i + 2,
      event,
      status_after: next.status,
      snapshot_before: snapshot,
      snapshot_after: after,
      emitted: {
        lifecycle: next.emitted.filter((e) => e.kind === "lifecycle").map((e) => e.type),
        commands: next.emitted.filter((e) => e.kind === "command").map((e) => e.type)
      }
    })
    snapshot = after
  }
  return out
}

const runGenerated = async (name: string, source: string) => {
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, `${name}.test.ts`), source)
  // A configuration of its own: the repository's would only include test/unit/… and the like.
  writeFileSync(join(folder, "vitest.config.mjs"), 'export default { test: { include: ["*.test.ts"] } }\n')
  try {
    const { stdout } = await run(
      "npx",
      ["vitest", "run", "--config", "vitest.config.mjs", `${name}.test.ts`],
      {
        cwd: folder,
        env: { ...process.env, NO_COLOR: "1", CI: "1" }
      }
    )
    return { ok: true, output: stdout }
  } catch (e) {
    const failed = e as { stdout?: string; stderr?: string }
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` }
  }
}

describe("copy as a test", () => {
  it("writes an @effect/vitest test that replays the steps through the machine, and it passes", async () => {
    const steps = history()
    // The history is the one the inspector shows: a settle confirmed and the excess's return in one step.
    const settled = steps[3]!
    expect(settled.emitted.commands).toEqual(["return"])
    expect(
      contextChanges(
        (steps[2]!.snapshot_after as { context: unknown }).context,
        (settled.snapshot_after as { context: unknown }).context
      )
        .filter((c) => c.path.startsWith("pending"))
        .map((c) => c.change)
    ).toEqual(["removed", "added"])
    const source = stepsAsTest("dr_replayed", steps)
    expect(source).toContain('from "@effect/vitest"')
    expect(source).toContain('it.effect("takes each event to the snapshot the service persisted"')
    const passed = await runGenerated("replay", source)
    expect(passed.ok, passed.output).toBe(true)
    expect(passed.output).toMatch(/Tests\s+1 passed/)
  }, 60_000)

  it("fails when a persisted snapshot is not what the machine makes of the event", async () => {
    const steps = history()
    const changed = steps.map((s) =>
      s.version === 3
        ? {
            ...s,
            snapshot_after: JSON.parse(JSON.stringify(s.snapshot_after).replace('"4000000"', '"4000001"'))
          }
        : s
    )
    const failed = await runGenerated("tampered", stepsAsTest("dr_replayed", changed))
    expect(failed.ok).toBe(false)
    expect(failed.output).toContain("version 3 (deposit.credited)")
  }, 60_000)
})
