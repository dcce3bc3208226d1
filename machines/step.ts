import {
  type AnyActorLogic,
  type AnyEventObject,
  createActor,
  type ExecutableActionsFrom,
  initialTransition,
  type StateValueFrom
} from "xstate"
import { type DepositRequestStatus, depositRequestStatuses } from "../services/domain/Lifecycle"
import {
  type DepositRequestContext,
  type DepositRequestEvent,
  type DepositRequestInput,
  depositRequestMachine,
  type Emitted
} from "./DepositRequest"

export type {
  Command,
  DepositRequestContext,
  DepositRequestEvent,
  DepositRequestInput,
  Emitted,
  LifecycleEvent
} from "./DepositRequest"

/** One step of an actor: the JSON snapshot to persist, where it is, and what it emitted (not yet carried out). */
export interface Step {
  readonly snapshot: unknown
  readonly status: DepositRequestStatus
  readonly context: DepositRequestContext
  readonly emitted: ReadonlyArray<Emitted>
}

type Snapshot = ReturnType<typeof depositRequestMachine.resolveState>
type Actions = ReadonlyArray<ExecutableActionsFrom<typeof depositRequestMachine>>

// The pure `transition()` returns the actions without running them; what the machine emits are `xstate.emit`
// actions carrying the resolved event. Nothing else the machine does has an effect outside its snapshot.
const emittedOf = (actions: Actions): Array<Emitted> => {
  const out: Array<Emitted> = []
  for (const action of actions) {
    const { type, params } = action as unknown as { type: string; params?: { event?: AnyEventObject } }
    if (type === "xstate.emit" && params?.event !== undefined) out.push(params.event as unknown as Emitted)
  }
  return out
}

const hasNoKeys = (o: object) => {
  for (const _ in o) return false
  return true
}

/**
 * XState's `getPersistedSnapshot` drops the snapshot's methods and serializes its children, its history and any
 * actor in its context, through two spreads (slow on our V8: decision 0023). This machine has no children and
 * no history states (so no actor can be in its context): its persisted snapshot is built field by field, sharing
 * the context as XState does when it holds no actor. A snapshot with children or history goes through XState. A
 * test holds every step equal to XState's persisted snapshot.
 */
const persistedOf = (snapshot: Snapshot): unknown =>
  hasNoKeys(snapshot.children) && hasNoKeys(snapshot.historyValue)
    ? {
        status: snapshot.status,
        output: snapshot.output,
        error: snapshot.error,
        value: snapshot.value,
        historyValue: {},
        context: snapshot.context,
        children: {}
      }
    : depositRequestMachine.getPersistedSnapshot(snapshot)

const toStep = (snapshot: Snapshot, actions: Actions): Step => ({
  snapshot: persistedOf(snapshot),
  status: snapshot.value as DepositRequestStatus,
  context: snapshot.context,
  emitted: emittedOf(actions)
})

/** The first snapshot of a new request, as XState computes it. */
export const startByXState = (input: DepositRequestInput): Step => {
  const [snapshot, actions] = initialTransition(depositRequestMachine, input)
  return toStep(snapshot, actions)
}

/**
 * The initial state has no entry actions, so every new request's first snapshot is one shape with its own
 * context. XState's initial transition is taken once; each create then parses that first snapshot's JSON and sets
 * the input's fields, which is cheaper than the transition and gives the context the same hidden classes as the
 * parsed snapshots later steps see (decision 0022). A test holds this equal to `startByXState` for any input;
 * should the initial state ever emit, this falls back to it.
 */
let initialTemplate:
  | { readonly json: string; readonly contextJson: string; readonly status: DepositRequestStatus }
  | undefined
  | null
// Every input field, as `initialContext`'s spread copies them; they are already properties of the parsed
// context, so assigning them adds none (no hidden-class change).
const contextOf = (contextJson: string, input: DepositRequestInput): DepositRequestContext =>
  Object.assign(JSON.parse(contextJson) as DepositRequestContext, input)
export const start = (input: DepositRequestInput): Step => {
  if (initialTemplate === undefined) {
    const probe = startByXState(input)
    const { context, ...shape } = probe.snapshot as { context: unknown }
    initialTemplate =
      probe.emitted.length === 0
        ? { json: JSON.stringify(shape), contextJson: JSON.stringify(context), status: probe.status }
        : null
    return probe
  }
  if (initialTemplate === null) return startByXState(input)
  const context = contextOf(initialTemplate.contextJson, input)
  const snapshot = JSON.parse(initialTemplate.json) as Record<string, unknown>
  snapshot.context = context
  return {
    snapshot,
    status: initialTemplate.status,
    context,
    emitted: []
  }
}

/**
 * XState's pure `transition()` makes an inert actor scope for every call: an actor (which computes an initial
 * snapshot), a system and the scope, then throws them away. The machine spawns and invokes nothing and schedules
 * nothing, so nothing it does is kept in a scope: one made once serves every step, its action executor collecting
 * the step's actions (run by nobody, as `transition()` leaves them). A test holds each step equal to XState's own
 * `transition()`.
 */
const stepActions: Array<ExecutableActionsFrom<typeof depositRequestMachine>> = []
// As XState's own inert scope: an actor made without input, never started.
const inertActor = createActor(depositRequestMachine as unknown as AnyActorLogic)
const inertScope = {
  self: inertActor,
  defer: () => {},
  id: "",
  logger: () => {},
  sessionId: "",
  stopChild: () => {},
  system: inertActor.system,
  emit: () => {},
  actionExecutor: (action: ExecutableActionsFrom<typeof depositRequestMachine>) => {
    stepActions.push(action)
  }
} as unknown as Parameters<typeof depositRequestMachine.transition>[2]

/**
 * Restores a persisted snapshot (as stored: plain JSON) and applies one event. An event the current state does
 * not take, or whose guard fails, changes nothing and emits nothing.
 */
export const step = (persisted: unknown, event: DepositRequestEvent): Step => {
  const restored = depositRequestMachine.resolveState(
    persisted as Parameters<typeof depositRequestMachine.resolveState>[0]
  )
  const snapshot = depositRequestMachine.transition(restored, event, inertScope)
  return toStep(snapshot, stepActions.splice(0))
}

type TopLevel<V> = V extends string ? V : keyof V
type MachineStatus = TopLevel<StateValueFrom<typeof depositRequestMachine>>
// The domain's status list and the machine's top-level states are the same set, or this does not compile.
const sameStatuses: [MachineStatus, DepositRequestStatus] extends [DepositRequestStatus, MachineStatus]
  ? true
  : never = true

/** The status values: the machine's top-level states, in the domain's order. */
export const statusValues: ReadonlyArray<DepositRequestStatus> = sameStatuses ? depositRequestStatuses : []

interface Row {
  readonly from: string
  readonly event: string
  readonly to: string
  readonly guard?: string
  readonly actions: ReadonlyArray<string>
}

// Guards and actions are named in `setup()`, so the definition holds their names; combinators render as text.
const nameOf = (g: unknown): string | undefined => {
  if (g === undefined || g === null) return undefined
  if (typeof g === "string") return g
  const o = g as { type?: string; guards?: ReadonlyArray<unknown> }
  if (o.type === "xstate.and" && o.guards) return o.guards.map(nameOf).join(" and ")
  if (o.type === "xstate.or" && o.guards) return o.guards.map(nameOf).join(" or ")
  if (o.type === "xstate.not" && o.guards) return `not ${nameOf(o.guards[0])}`
  return o.type
}

const rows = (): ReadonlyArray<Row> => {
  const out: Array<Row> = []
  for (const [from, node] of Object.entries(depositRequestMachine.root.states)) {
    for (const [event, transitions] of node.transitions) {
      for (const t of transitions) {
        const guard = nameOf(t.guard)
        const actions = t.actions.map(nameOf).filter((a): a is string => a !== undefined)
        const to = t.target?.[0]?.key ?? from
        out.push(guard === undefined ? { from, event, to, actions } : { from, event, to, guard, actions })
      }
    }
  }
  return out
}

/** Every transition of the machine, read from its definition (never written twice). Guards are tried in order. */
export const transitionTable = (): ReadonlyArray<{
  from: string
  event: string
  to: string
  guard?: string
}> => rows().map(({ actions: _, ...r }) => r)

const code = (s: string) => `\`${s}\``

/** The transition table as Markdown, with the named actions each transition runs. */
export const transitionTableMarkdown = (): string =>
  [
    "| From | Event | Guard | To | Actions |",
    "|---|---|---|---|---|",
    ...rows().map(
      (r) =>
        `| ${code(r.from)} | ${code(r.event)} | ${r.guard ? code(r.guard) : ""} | ${code(r.to)} | ${r.actions.map(code).join(", ")} |`
    )
  ].join("\n")

/** machines/TRANSITIONS.md: the transition table with a title, generated by `npm run docs`. */
export const transitionsDocument = (): string =>
  [
    "# The deposit request's transitions",
    "",
    "Generated from `machines/DepositRequest.ts` by `npm run docs` (a test fails when it drifts). Guards are tried",
    "in the order listed; an event no row of the current state takes changes nothing.",
    "",
    transitionTableMarkdown(),
    ""
  ].join("\n")

/**
 * The statechart as Mermaid `stateDiagram-v2`, generated from the machine, for the README and /docs (no network
 * needed). Transitions that stay in their status are left to the table.
 */
export const statechartMermaid = (): string => {
  const lines = ["stateDiagram-v2", `  [*] --> ${String(depositRequestMachine.config.initial)}`]
  for (const r of rows()) {
    if (r.from === r.to) continue
    lines.push(`  ${r.from} --> ${r.to}: ${r.event}${r.guard ? ` [${r.guard}]` : ""}`)
  }
  return lines.join("\n")
}

/** The transition a step took: its source and target state ids, its event, and the guard that passed. */
export interface TakenTransition {
  readonly source: string
  readonly targets: ReadonlyArray<string>
  readonly event: string
  readonly guard: string | null
}

/**
 * What one event does from a persisted snapshot, explained: the transition XState selects (its own selection:
 * `getTransitionData` tries each candidate's guard in document order, innermost state first), or `null` when no
 * transition is enabled (the event changes nothing), and the step itself. Pure, like `step`.
 */
export const explainStep = (
  persisted: unknown,
  event: DepositRequestEvent
): { readonly transition: TakenTransition | null; readonly step: Step } => {
  const restored = depositRequestMachine.resolveState(
    persisted as Parameters<typeof depositRequestMachine.resolveState>[0]
  )
  // One region at every level (no parallel states), so at most one transition is enabled.
  const [taken] = depositRequestMachine.getTransitionData(restored, event)
  return {
    transition:
      taken === undefined
        ? null
        : {
            source: taken.source.id,
            targets: (taken.target ?? []).map((node) => node.id),
            event: taken.eventType,
            guard: nameOf(taken.guard) ?? null
          },
    step: step(persisted, event)
  }
}
