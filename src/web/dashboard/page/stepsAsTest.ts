/**
 * "Copy as a test": a request's kept steps as an `@effect/vitest` test that replays them through the machine's
 * pure step (machines/step.ts) from the first kept snapshot, and holds each result to the snapshot the service
 * persisted, with the status and what it emitted. Pasted into test/unit/, it pins a behaviour seen in production.
 */

/** What the generator reads of a step: the API's `RequestStep`, or anything shaped like it. */
export interface ReplayedStep {
  readonly version: number
  readonly event: { readonly type: string } & Record<string, unknown>
  readonly status_after: string
  readonly snapshot_before: unknown
  readonly snapshot_after: unknown
  readonly emitted: { readonly lifecycle: ReadonlyArray<string>; readonly commands: ReadonlyArray<string> }
}

const literal = (v: unknown, indent: string) => JSON.stringify(v, null, 2).replaceAll("\n", `\n${indent}`)

/**
 * The test's source. `machinePath` is where machines/step is from the test's folder (test/unit/<room>/ by
 * default). Steps without the snapshot before them (the create, the first one kept) start the replay and are not
 * replayed themselves.
 */
export const stepsAsTest = (
  requestId: string,
  steps: ReadonlyArray<ReplayedStep>,
  machinePath = "../../../machines/step"
): string => {
  const first = steps.findIndex((s) => s.snapshot_before !== null && s.event.type !== "xstate.init")
  const replayed = first < 0 ? [] : steps.slice(first)
  const start = replayed[0]?.snapshot_before ?? steps[steps.length - 1]?.snapshot_after ?? null
  const rows = replayed.map(
    (s) => `    {
      version: ${s.version},
      event: ${literal(s.event, "      ")} as DepositRequestEvent,
      status: ${JSON.stringify(s.status_after)},
      lifecycle: ${JSON.stringify(s.emitted.lifecycle)},
      commands: ${JSON.stringify(s.emitted.commands)},
      snapshot: ${literal(s.snapshot_after, "      ")}
    }`
  )
  return `import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DepositRequestEvent, step } from "${machinePath}"

// Copied from the inspector: ${requestId}, versions ${replayed.map((s) => s.version).join(", ") || "none"}.
const start: unknown = ${literal(start, "")}

const steps = [
${rows.join(",\n")}
]

describe("${requestId} replayed through the machine", () => {
  it.effect("takes each event to the snapshot the service persisted", () =>
    Effect.sync(() => {
      let snapshot = start
      for (const expected of steps) {
        const next = step(snapshot, expected.event)
        const at = \`version \${expected.version} (\${expected.event.type})\`
        assert.strictEqual(next.status, expected.status, at)
        assert.deepStrictEqual(
          next.emitted.filter((e) => e.kind === "lifecycle").map((e) => e.type),
          expected.lifecycle,
          at
        )
        assert.deepStrictEqual(
          next.emitted.filter((e) => e.kind === "command").map((e) => e.type),
          expected.commands,
          at
        )
        assert.deepStrictEqual(JSON.parse(JSON.stringify(next.snapshot)), expected.snapshot, at)
        snapshot = next.snapshot
      }
    })
  )
})
`
}
