import type {
  LifecycleMachine,
  MachineState,
  MachineTransition,
  StateValue,
  StepTransition
} from "./inspectorTypes"

/** The paths a state value is in: `"ready"` → ready; `{ a: "one" }` → a, a.one. */
export const activePaths = (value: StateValue | null | undefined, prefix = ""): Array<string> => {
  if (value === null || value === undefined) return []
  if (typeof value === "string") return [prefix + value]
  // The contract types a child's value as unknown (JSON Schema cannot name the recursion): it is a state value.
  return Object.entries(value).flatMap(([k, v]) => [
    prefix + k,
    ...activePaths(v as StateValue, `${prefix}${k}.`)
  ])
}

/** A state reference as a path below the machine: `#m.a.b`, `m.a.b` and `a.b` all name `a.b`. */
const pathOf = (machineId: string, ref: string) => {
  const bare = ref.startsWith("#") ? ref.slice(1) : ref
  return bare.startsWith(`${machineId}.`) ? bare.slice(machineId.length + 1) : bare
}

/** What finding a step's transitions reads, read-only: the service's own layout and step can be passed too. */
type Matched = Pick<MachineTransition, "source" | "target" | "event" | "guard" | "targetless">
type Taken = Omit<StepTransition, "targets"> & { readonly targets: ReadonlyArray<string> }

/** The drawn transitions a step took: same source, event and guard (and targets, when it names them). */
export const takenTransitions = <T extends Matched>(
  machine: Pick<LifecycleMachine, "machine_id"> & {
    readonly states: ReadonlyArray<Pick<MachineState, "id" | "path">>
    readonly transitions: ReadonlyArray<T>
  },
  taken: Taken | null | undefined
): ReadonlyArray<T> => {
  if (taken === null || taken === undefined) return []
  const byId = new Map(machine.states.map((s) => [s.id, s.path]))
  const source = pathOf(machine.machine_id, taken.source)
  const targets = new Set(taken.targets.map((t) => pathOf(machine.machine_id, t)))
  return machine.transitions.filter(
    (t) =>
      byId.get(t.source) === source &&
      t.event === taken.event &&
      (t.guard ?? null) === (taken.guard ?? null) &&
      (targets.size === 0 ? t.targetless : targets.has(byId.get(t.target) ?? ""))
  )
}
