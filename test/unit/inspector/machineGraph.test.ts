import { describe, expect, it } from "vitest"
import { type AnyStateNode, createMachine } from "xstate"
import { depositRequestMachine, MACHINE_VERSION } from "../../../machines/DepositRequest"
import { transitionTable } from "../../../machines/step"
import { layoutMachine, machineDefinition, machineGraph } from "../../../src/http/Machine/MachineGraph"

/** Every state node below the root, read from the machine itself. */
const allStates = (node: AnyStateNode): Array<AnyStateNode> =>
  Object.values(node.states).flatMap((s) => [s, ...allStates(s)])

const guardName = (g: unknown) =>
  g === undefined ? null : typeof g === "string" ? g : (g as { type: string }).type

/** Every transition as (source, event, guard, target), targetless ones staying in their source. */
const allTransitions = (machine: typeof depositRequestMachine) =>
  allStates(machine.root).flatMap((s) =>
    [...s.transitions].flatMap(([event, ts]) =>
      ts.flatMap((t) =>
        (t.target ?? [s]).map((target) => ({
          source: s.id,
          event,
          guard: guardName(t.guard),
          target: target.id
        }))
      )
    )
  )

describe("the machine graph", () => {
  it("has every state and every transition of the definition, with guards and initial marks", async () => {
    const graph = await layoutMachine(depositRequestMachine, MACHINE_VERSION)
    const states = allStates(depositRequestMachine.root)
    expect(graph.states.map((s) => s.id).sort()).toEqual(states.map((s) => s.id).sort())
    for (const s of states) {
      const drawn = graph.states.find((g) => g.id === s.id)
      expect(drawn).toMatchObject({ key: s.key, path: s.path.join("."), type: s.type })
    }
    expect(graph.states.filter((s) => s.initial).map((s) => s.key)).toEqual([
      String(depositRequestMachine.config.initial)
    ])
    expect(graph.initial).toHaveLength(1)
    const expected = allTransitions(depositRequestMachine)
    // The README's transition table, read from the same definition another way, counts as many.
    expect(expected.length).toBe(transitionTable().length)
    const drawn = graph.transitions.map(({ source, event, guard, target }) => ({
      source,
      event,
      guard,
      target
    }))
    expect(drawn).toEqual(expected)
    expect(new Set(graph.transitions.map((t) => t.id)).size).toBe(graph.transitions.length)
    expect(graph.machine_version).toBe(MACHINE_VERSION)
  })

  it("lays out finite coordinates, states that do not overlap, and every edge routed with its label", async () => {
    const graph = await layoutMachine(depositRequestMachine, MACHINE_VERSION)
    const finite = (...xs: Array<number>) => xs.every((x) => Number.isFinite(x))
    expect(finite(graph.width, graph.height)).toBe(true)
    for (const s of graph.states) {
      expect(finite(s.x, s.y, s.width, s.height), s.id).toBe(true)
      expect(s.width).toBeGreaterThan(0)
      expect(s.x + s.width).toBeLessThanOrEqual(graph.width)
      expect(s.y + s.height).toBeLessThanOrEqual(graph.height)
    }
    // Siblings never overlap (a child lies inside its parent, which is not an overlap).
    for (const a of graph.states)
      for (const b of graph.states) {
        if (a.id >= b.id || a.parent !== b.parent) continue
        const apart =
          a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y
        expect(apart, `${a.id} overlaps ${b.id}`).toBe(true)
      }
    for (const t of graph.transitions) {
      expect(t.points.length, t.id).toBeGreaterThanOrEqual(2)
      expect(t.points.every((p) => finite(p.x, p.y))).toBe(true)
      expect(finite(t.label.x, t.label.y, t.label.width, t.label.height)).toBe(true)
      expect(t.label.width).toBeGreaterThan(0)
    }
    // A label sits clear of every state, but a transition that stays in its state is a row inside that state, and
    // a grouped one is a row of its group's list (opened over the drawing), whose own label sits clear.
    const apartFromStates = (l: { x: number; y: number; width: number; height: number }, what: string) => {
      for (const s of graph.states) {
        const apart =
          l.x + l.width <= s.x || s.x + s.width <= l.x || l.y + l.height <= s.y || s.y + s.height <= l.y
        expect(apart, `${what}'s label over ${s.id}`).toBe(true)
      }
    }
    for (const g of graph.groups) {
      apartFromStates(g.label, g.id)
      const rows = graph.transitions.filter((t) => t.group === g.id)
      expect(rows.map((t) => t.id)).toEqual(g.members)
      for (const [i, t] of rows.entries()) expect(t.label.y, t.id).toBeCloseTo(rows[0]!.label.y + i * 18, 5)
      expect(rows[0]!.label.y).toBeGreaterThanOrEqual(g.label.y + g.label.height)
    }
    for (const t of graph.transitions.filter((x) => x.group === null))
      for (const s of graph.states) {
        const l = t.label
        if (t.targetless && s.id === t.source) {
          const inside =
            l.x >= s.x && l.x + l.width <= s.x + s.width && l.y >= s.y && l.y + l.height <= s.y + s.height
          expect(inside, `${t.id}'s row inside ${s.id}`).toBe(true)
          continue
        }
        const apart =
          l.x + l.width <= s.x || s.x + s.width <= l.x || l.y + l.height <= s.y || s.y + s.height <= l.y
        expect(apart, `${t.id}'s label over ${s.id}`).toBe(true)
      }
  })

  it("groups the many transitions into needs_attention and out of it on operator.resumed, one edge each", async () => {
    const graph = await layoutMachine(depositRequestMachine, MACHINE_VERSION)
    const attention = `${depositRequestMachine.id}.needs_attention`
    const grouped = (kind: "into" | "out", event: string) =>
      graph.transitions.filter(
        (t) =>
          t.event === event &&
          (kind === "into" ? t.target === attention : t.source === attention) &&
          !t.targetless
      )
    expect(
      graph.groups.map((g) => ({
        kind: g.kind,
        event: g.event,
        state: g.state,
        members: [...g.members].sort()
      }))
    ).toEqual([
      {
        kind: "into",
        event: "attention.raised",
        state: attention,
        members: grouped("into", "attention.raised")
          .map((t) => t.id)
          .sort()
      },
      {
        kind: "out",
        event: "operator.resumed",
        state: attention,
        members: grouped("out", "operator.resumed")
          .map((t) => t.id)
          .sort()
      }
    ])
    expect(graph.groups.map((g) => g.members.length)).toEqual([6, 10])
    // Each member still runs from its source to its target, through the group's junction.
    for (const g of graph.groups)
      for (const id of g.members) {
        const t = graph.transitions.find((x) => x.id === id)!
        expect(
          t.points.some((p) => Math.abs(p.x - g.junction.x) <= 4 && Math.abs(p.y - g.junction.y) <= 4),
          id
        ).toBe(true)
      }
    // Far narrower than the drawing of every edge on its own (over 2,500 units), which "fit to width" shrank to 5 px
    // labels; the browser test holds every label at 11 px or more at a desktop's size.
    expect(graph.width).toBeLessThan(1500)
  })

  it("computes the layout once per machine version and definition", async () => {
    const a = machineGraph(depositRequestMachine, MACHINE_VERSION)
    const b = machineGraph(depositRequestMachine, MACHINE_VERSION)
    expect(b).toBe(a)
    expect(machineGraph(depositRequestMachine, MACHINE_VERSION + 1)).not.toBe(a)
    expect((await a).digest).toMatch(/^[0-9a-f]{64}$/)
  })

  it("exports a definition that createMachine rebuilds into the same states and transitions", () => {
    const definition = machineDefinition(depositRequestMachine)
    const text = JSON.stringify(definition)
    expect(text).not.toContain("function")
    const rebuilt = createMachine(JSON.parse(text))
    expect(allStates(rebuilt.root).map((s) => s.id)).toEqual(
      allStates(depositRequestMachine.root).map((s) => s.id)
    )
    expect(allTransitions(rebuilt as unknown as typeof depositRequestMachine)).toEqual(
      allTransitions(depositRequestMachine)
    )
  })

  it("draws nesting and final states of another machine", async () => {
    const nested = createMachine({
      id: "outer",
      initial: "a",
      states: {
        a: {
          initial: "one",
          states: { one: { on: { NEXT: { target: "two", guard: "ok" } } }, two: { type: "final" } },
          onDone: "b"
        },
        b: { on: { BACK: "#outer.a.two" } }
      }
    })
    const graph = await layoutMachine(nested, 1)
    const byId = new Map(graph.states.map((s) => [s.id, s]))
    expect(byId.get("outer.a.one")).toMatchObject({ parent: "outer.a", initial: true, depth: 2 })
    expect(byId.get("outer.a.two")).toMatchObject({ type: "final" })
    expect(byId.get("outer.a")).toMatchObject({ type: "compound", parent: null, initial: true })
    const a = byId.get("outer.a")!
    const one = byId.get("outer.a.one")!
    expect(one.x).toBeGreaterThanOrEqual(a.x)
    expect(one.x + one.width).toBeLessThanOrEqual(a.x + a.width)
    expect(one.y).toBeGreaterThan(a.y)
    expect(graph.initial.map((i) => i.target).sort()).toEqual(["outer.a", "outer.a.one"])
    expect(graph.transitions.find((t) => t.event === "NEXT")).toMatchObject({
      guard: "ok",
      target: "outer.a.two"
    })
    expect(graph.transitions.find((t) => t.event === "BACK")?.target).toBe("outer.a.two")
  })
})
