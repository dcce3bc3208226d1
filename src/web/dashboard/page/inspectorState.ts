import type { LifecycleMachine, MachineTransition, StateValue, StepTransition } from "./inspectorTypes"

/** The paths a state value is in: `"ready"` → ready; `{ a: "one" }` → a, a.one. */
export const activePaths = (value: StateValue | null | undefined, prefix = ""): Array<string> => {
  if (value === null || value === undefined) return []
  if (typeof value === "string") return [prefix + value]
  return Object.entries(value).flatMap(([k, v]) => [prefix + k, ...activePaths(v, `${prefix}${k}.`)])
}

/** A state reference as a path below the machine: `#m.a.b`, `m.a.b` and `a.b` all name `a.b`. */
const pathOf = (machineId: string, ref: string) => {
  const bare = ref.startsWith("#") ? ref.slice(1) : ref
  return bare.startsWith(`${machineId}.`) ? bare.slice(machineId.length + 1) : bare
}

/** The drawn transitions a step took: same source, event and guard (and targets, when it names them). */
export const takenTransitions = (
  machine: LifecycleMachine,
  taken: StepTransition | null | undefined
): ReadonlyArray<MachineTransition> => {
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
