import { type AnyEventObject, type ExecutableActionsFrom, initialTransition, transition } from "xstate"
import {
  type DepositRequestContext,
  type DepositRequestEvent,
  type DepositRequestInput,
  type DepositRequestStatus,
  depositRequestMachine,
  type Emitted
} from "./DepositRequest"

export type {
  DepositRequestContext,
  DepositRequestEvent,
  DepositRequestInput,
  DepositRequestStatus,
  Emitted
} from "./DepositRequest"

/** One step of an actor: the JSON snapshot to persist, where it is, and what it emitted (not yet done). */
export interface Step {
  readonly snapshot: unknown
  readonly status: DepositRequestStatus
  readonly context: DepositRequestContext
  readonly emitted: ReadonlyArray<Emitted>
}

type Snapshot = ReturnType<typeof depositRequestMachine.resolveState>

// The pure `transition()` returns the actions without running them; emitted events are `xstate.emit` actions.
const emittedOf = (
  actions: ReadonlyArray<ExecutableActionsFrom<typeof depositRequestMachine>>
): Array<Emitted> =>
  actions.flatMap((action) => {
    const { type, params } = action as unknown as { type: string; params?: { event?: AnyEventObject } }
    if (type !== "xstate.emit") return []
    return params?.event ? [params.event as unknown as Emitted] : []
  })

const toStep = (
  snapshot: Snapshot,
  actions: ReadonlyArray<ExecutableActionsFrom<typeof depositRequestMachine>>
) => ({
  snapshot: depositRequestMachine.getPersistedSnapshot(snapshot),
  status: snapshot.value as DepositRequestStatus,
  context: snapshot.context,
  emitted: emittedOf(actions)
})

/** The first snapshot of a new request. */
export const start = (input: DepositRequestInput): Step => {
  const [snapshot, actions] = initialTransition(depositRequestMachine, input)
  return toStep(snapshot, actions)
}

/** Restores a persisted snapshot and applies one event. An event the state does not take changes nothing. */
export const step = (persisted: unknown, event: DepositRequestEvent): Step => {
  const restored = depositRequestMachine.resolveState(
    persisted as Parameters<typeof depositRequestMachine.resolveState>[0]
  )
  const [snapshot, actions] = transition(depositRequestMachine, restored, event)
  return toStep(snapshot, actions)
}

/** The status values: the machine's top-level states. */
export const statusValues = Object.keys(
  depositRequestMachine.config.states ?? {}
) as ReadonlyArray<DepositRequestStatus>

/** Every transition of the machine, read from its definition (never written twice). */
export const transitionTable = () => {
  const rows: Array<{ from: string; event: string; to: string; guard?: string }> = []
  for (const [from, node] of Object.entries(depositRequestMachine.root.states)) {
    for (const [event, transitions] of node.transitions) {
      for (const t of transitions) {
        const to = t.target?.[0]?.key ?? from
        const guard = typeof t.guard === "string" ? t.guard : (t.guard as { type?: string } | undefined)?.type
        rows.push(guard === undefined ? { from, event, to } : { from, event, to, guard })
      }
    }
  }
  return rows
}

export const transitionTableMarkdown = () =>
  [
    "| From | Event | Guard | To |",
    "|---|---|---|---|",
    ...transitionTable().map(
      (r) => `| \`${r.from}\` | \`${r.event}\` | ${r.guard ? `\`${r.guard}\`` : ""} | \`${r.to}\` |`
    )
  ].join("\n")

/** The statechart as Mermaid, generated from the machine, for the README and /docs (no internet needed). */
export const statechartMermaid = () => {
  const lines = ["stateDiagram-v2", `  [*] --> ${depositRequestMachine.config.initial as string}`]
  const seen = new Set<string>()
  for (const r of transitionTable()) {
    if (r.from === r.to) continue
    const key = `${r.from}|${r.to}|${r.event}`
    if (seen.has(key)) continue
    seen.add(key)
    lines.push(`  ${r.from} --> ${r.to}: ${r.event}`)
  }
  return lines.join("\n")
}
