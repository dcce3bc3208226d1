import { createHash } from "node:crypto"
import { toDirectedGraph } from "@xstate/graph"
import ELK from "elkjs"
import type { ElkExtendedEdge, ElkLabel, ElkNode } from "elkjs"
import type { AnyStateMachine } from "xstate"

/**
 * A lifecycle machine drawn from its own definition: every state (with its nesting, initial and final marks) and
 * every transition (event, guard, target, actions), laid out by ELK's layered algorithm with routed edges and
 * placed labels. The page only draws what this returns, so the layout engine never reaches the browser.
 * Coordinates are absolute, in SVG user units, with text measured for the page's monospace font.
 */

export type StateType = "atomic" | "compound" | "parallel" | "final" | "history"

export interface Point {
  readonly x: number
  readonly y: number
}

export interface Box extends Point {
  readonly width: number
  readonly height: number
}

export interface GraphState extends Box {
  /** The state node's id (`depositRequest.ready`). */
  readonly id: string
  /** Its path below the machine, dot-separated (`ready`): what a snapshot's value names. */
  readonly path: string
  readonly key: string
  /** The containing state's id; null for the machine's own top-level states. */
  readonly parent: string | null
  readonly type: StateType
  /** The state its parent enters first. */
  readonly initial: boolean
  readonly depth: number
  readonly description: string | null
}

export interface GraphTransition {
  /** `<source path>:<event>:<index among the event's transitions>:<target index>`, stable for a definition. */
  readonly id: string
  readonly source: string
  readonly target: string
  readonly event: string
  /** The named guard (combinators as text); null when it has none. */
  readonly guard: string | null
  readonly actions: ReadonlyArray<string>
  /** Its place among the source's transitions for this event: guards are tried in this order. */
  readonly order: number
  /** A transition with no target stays in its state (its actions still run): drawn as a loop. */
  readonly targetless: boolean
  readonly label: Box & { readonly lines: ReadonlyArray<string> }
  /** Start, bends and end of the routed edge. */
  readonly points: ReadonlyArray<Point>
  /** The group it is drawn in (its label a row of the group's list), or null when drawn on its own. */
  readonly group: string | null
}

/**
 * Many transitions on one event into one state (`attention.raised` → needs_attention from every state), or out of
 * one state (`operator.resumed` to wherever the pause began), drawn as one edge through a junction with one label
 * and a count; the members' own labels are a list under it that the page opens.
 */
export interface TransitionGroup {
  readonly id: string
  readonly event: string
  /** `into`: every member has this target; `out`: every member has this source. */
  readonly kind: "into" | "out"
  /** The shared target (into) or source (out). */
  readonly state: string
  readonly members: ReadonlyArray<string>
  readonly label: Box & { readonly lines: ReadonlyArray<string> }
  readonly junction: Point
  /** The shared part of the edge: junction → target (into) or source → junction (out). */
  readonly points: ReadonlyArray<Point>
}

/** The arrow into a compound state's (or the machine's) initial state, from a dot. */
export interface InitialArrow {
  /** The compound state's id, or the machine's id for the top level. */
  readonly parent: string
  readonly target: string
  readonly dot: Point
  readonly points: ReadonlyArray<Point>
}

export interface MachineGraph {
  readonly machine_id: string
  readonly machine_version: number
  /** SHA-256 of the definition's JSON: changes whenever the drawing may. */
  readonly digest: string
  readonly width: number
  readonly height: number
  readonly states: ReadonlyArray<GraphState>
  readonly transitions: ReadonlyArray<GraphTransition>
  readonly groups: ReadonlyArray<TransitionGroup>
  readonly initial: ReadonlyArray<InitialArrow>
}

/** A group needs at least this many members: fewer edges read well on their own. */
export const GROUP_MIN = 4

/** Text metrics of the page's drawing: monospace, so a width is characters × advance. */
export const FONT = { state: 13, label: 11, advance: 0.62, line: 1.3 } as const
const STATE_HEIGHT = 40
const STATE_PAD_X = 16
/** A transition that stays in its state is a row inside the state's box (a loop on its edge points to it). */
const ROW_HEIGHT = 18
const LOOP = 10
const LABEL_PAD = 4
const INITIAL_DOT = 10
const JUNCTION = 8

const textWidth = (text: string, size: number) => Math.ceil(text.length * size * FONT.advance)

// Guards and actions are named in `setup()`, so the definition holds their names; combinators render as text.
const nameOf = (g: unknown): string | null => {
  if (g === undefined || g === null) return null
  if (typeof g === "string") return g
  if (typeof g === "function") return g.name === "" ? "(inline)" : g.name
  const o = g as { type?: string; guards?: ReadonlyArray<unknown> }
  if (o.type === "xstate.and" && o.guards) return o.guards.map(nameOf).join(" and ")
  if (o.type === "xstate.or" && o.guards) return o.guards.map(nameOf).join(" or ")
  if (o.type === "xstate.not" && o.guards) return `not ${nameOf(o.guards[0])}`
  return o.type ?? null
}

type DirectedNode = ReturnType<typeof toDirectedGraph>

interface StateNodeLike {
  readonly id: string
  readonly key: string
  readonly path: ReadonlyArray<string>
  readonly type: StateType
  readonly description?: string | undefined
  readonly parent?: StateNodeLike | undefined
  readonly config: { readonly initial?: unknown }
  readonly initial?: { readonly target: ReadonlyArray<{ readonly id: string }> } | undefined
}

/** Every state below the root, in document order (parents before children). */
const walk = (node: DirectedNode, out: Array<DirectedNode> = []): Array<DirectedNode> => {
  for (const child of node.children) {
    out.push(child)
    walk(child, out)
  }
  return out
}

const round = (n: number) => Math.round(n * 10) / 10
const pt = (p: { x: number; y: number }): Point => ({ x: round(p.x), y: round(p.y) })

/** The definition's fingerprint: its JSON with implementations left as their names. */
export const definitionDigest = (machine: AnyStateMachine) =>
  createHash("sha256").update(JSON.stringify(machine.toJSON())).digest("hex")

export const layoutMachine = async (machine: AnyStateMachine, version: number): Promise<MachineGraph> => {
  const root = toDirectedGraph(machine)
  const nodes = walk(root)
  const rootNode = root.stateNode as unknown as StateNodeLike
  const initialOf = (n: StateNodeLike) => n.initial?.target[0]?.id

  // One ELK node per state, nested as the states are; compound states get room for their name at the top.
  const elkNodes = new Map<string, ElkNode>()
  const elkRoot: ElkNode = {
    id: root.id,
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.edgeLabels.placement": "CENTER",
      "elk.layered.spacing.nodeNodeBetweenLayers": "48",
      "elk.layered.spacing.edgeNodeBetweenLayers": "20",
      "elk.layered.spacing.edgeEdgeBetweenLayers": "12",
      "elk.spacing.nodeNode": "40",
      "elk.spacing.edgeEdge": "12",
      "elk.spacing.edgeNode": "16",
      "elk.spacing.edgeLabel": "4",
      "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
      "elk.layered.crossingMinimization.semiInteractive": "false",
      "elk.json.shapeCoords": "ROOT",
      "elk.json.edgeCoords": "ROOT",
      "elk.padding": "[top=16,left=16,bottom=16,right=16]"
    },
    children: [],
    edges: []
  }
  elkNodes.set(root.id, elkRoot)
  const internalRows = new Map<string, Array<string>>()
  for (const n of nodes) {
    const s = n.stateNode as unknown as StateNodeLike & {
      transitions: Map<string, ReadonlyArray<{ guard?: unknown; target?: ReadonlyArray<unknown> }>>
    }
    for (const [event, ts] of s.transitions)
      for (const t of ts)
        if (t.target === undefined || t.target.length === 0) {
          const guard = nameOf(t.guard)
          const rows = internalRows.get(s.id) ?? []
          rows.push(guard === null ? event : `${event} [${guard}]`)
          internalRows.set(s.id, rows)
        }
  }
  for (const n of nodes) {
    const s = n.stateNode as unknown as StateNodeLike
    const compound = n.children.length > 0
    const rows = internalRows.get(s.id) ?? []
    const elk: ElkNode = compound
      ? {
          id: n.id,
          labels: [{ text: s.key, width: textWidth(s.key, FONT.state), height: FONT.state * FONT.line }],
          layoutOptions: {
            "elk.padding": `[top=${Math.ceil(FONT.state * FONT.line) + 20},left=16,bottom=16,right=16]`,
            "elk.nodeLabels.placement": "INSIDE H_LEFT V_TOP"
          },
          children: [],
          edges: []
        }
      : {
          id: n.id,
          width: Math.max(
            textWidth(s.key, FONT.state) + 2 * STATE_PAD_X,
            ...rows.map((r) => textWidth(r, FONT.label) + 2 * LABEL_PAD + 2 * STATE_PAD_X)
          ),
          height: STATE_HEIGHT + rows.length * ROW_HEIGHT + (rows.length > 0 ? 6 : 0)
        }
    elkNodes.set(n.id, elk)
    const parent = elkNodes.get(s.parent?.id ?? root.id)
    parent?.children?.push(elk)
  }

  // Each initial state gets a dot in its container with an arrow into it, laid out as a node and an edge.
  const containers = [rootNode, ...nodes.map((n) => n.stateNode as unknown as StateNodeLike)]
  const initialEdges: Array<{ parent: string; target: string; dotId: string; edgeId: string }> = []
  for (const c of containers) {
    const target = initialOf(c)
    if (target === undefined) continue
    const container = elkNodes.get(c.id)
    if (container === undefined) continue
    const dotId = `${c.id}::initial`
    const edgeId = `${dotId}::edge`
    container.children?.push({ id: dotId, width: INITIAL_DOT, height: INITIAL_DOT })
    container.edges?.push({ id: edgeId, sources: [dotId], targets: [target] })
    initialEdges.push({ parent: c.id, target, dotId, edgeId })
  }

  // Every transition, one edge per target; labels sized for the event and the guard on a second line.
  interface Pending {
    readonly id: string
    readonly source: string
    readonly target: string
    readonly event: string
    readonly guard: string | null
    readonly actions: ReadonlyArray<string>
    readonly order: number
    readonly targetless: boolean
    readonly lines: ReadonlyArray<string>
  }
  const pending: Array<Pending> = []
  for (const n of nodes) {
    const s = n.stateNode as unknown as StateNodeLike & {
      transitions: Map<
        string,
        ReadonlyArray<{
          guard?: unknown
          actions: ReadonlyArray<unknown>
          target?: ReadonlyArray<{ id: string }>
        }>
      >
    }
    for (const [event, transitions] of s.transitions) {
      transitions.forEach((t, order) => {
        const guard = nameOf(t.guard)
        const actions = t.actions.map(nameOf).filter((a): a is string => a !== null)
        const targets = t.target === undefined || t.target.length === 0 ? [s.id] : t.target.map((x) => x.id)
        targets.forEach((target, i) => {
          const stays = t.target === undefined || t.target.length === 0
          const lines = guard === null ? [event] : stays ? [`${event} [${guard}]`] : [event, `[${guard}]`]
          pending.push({
            id: `${s.path.join(".")}:${event}:${order}:${i}`,
            source: s.id,
            target,
            event,
            guard,
            actions,
            order,
            targetless: t.target === undefined || t.target.length === 0,
            lines
          })
        })
      })
    }
  }
  // An edge belongs to the lowest container holding both ends (ELK routes it there).
  const ancestors = (id: string): Array<string> => {
    const out: Array<string> = []
    let cur = machine.getStateNodeById(id) as unknown as StateNodeLike | undefined
    while (cur !== undefined) {
      out.push(cur.id)
      cur = cur.parent
    }
    return out
  }
  const containerOf = (a: string, b: string) => {
    const up = new Set(ancestors(a).slice(1))
    return ancestors(b).find((id) => up.has(id) && elkNodes.get(id)?.children !== undefined) ?? root.id
  }
  // Groups: transitions on one event into one state from many, or out of one state to many (a member in one only).
  const groupOf = new Map<string, string>()
  const groups: Array<{
    id: string
    event: string
    kind: "into" | "out"
    state: string
    members: Array<Pending>
  }> = []
  const gather = (kind: "into" | "out") => {
    const by = new Map<string, Array<Pending>>()
    for (const p of pending) {
      if (p.targetless || groupOf.has(p.id)) continue
      const key = `${kind === "into" ? p.target : p.source}|${p.event}`
      by.set(key, [...(by.get(key) ?? []), p])
    }
    for (const [key, members] of by) {
      const ends = new Set(members.map((m) => (kind === "into" ? m.source : m.target)))
      if (members.length < GROUP_MIN || ends.size < 2) continue
      const [state, event] = key.split("|") as [string, string]
      const id = `group:${kind}:${state}:${event}`
      groups.push({ id, event, kind, state, members })
      for (const m of members) groupOf.set(m.id, id)
    }
  }
  gather("into")
  gather("out")
  const groupLines = (g: (typeof groups)[number]) => [
    `${g.event} ×${g.members.length}`,
    g.kind === "into" ? `from ${new Set(g.members.map((m) => m.source)).size} states ▸` : "by guard ▸"
  ]
  for (const g of groups) {
    const held = [...new Set(g.members.map((m) => containerOf(m.source, m.target)))]
    const holder = (held.length === 1 ? elkNodes.get(held[0]!) : undefined) ?? elkRoot
    const junction = `${g.id}::junction`
    holder.children?.push({ id: junction, width: JUNCTION, height: JUNCTION })
    const lines = groupLines(g)
    const label: ElkLabel = {
      id: `${g.id}::label`,
      text: lines.join("\n"),
      width: Math.max(...lines.map((l) => textWidth(l, FONT.label))) + 2 * LABEL_PAD,
      height: Math.ceil(lines.length * FONT.label * FONT.line) + 2 * LABEL_PAD
    }
    const shared: ElkExtendedEdge =
      g.kind === "into"
        ? { id: `${g.id}::shared`, sources: [junction], targets: [g.state], labels: [label] }
        : { id: `${g.id}::shared`, sources: [g.state], targets: [junction], labels: [label] }
    holder.edges?.push(shared)
    const ends = [...new Set(g.members.map((m) => (g.kind === "into" ? m.source : m.target)))]
    for (const end of ends)
      holder.edges?.push(
        g.kind === "into"
          ? { id: `${g.id}::from:${end}`, sources: [end], targets: [junction] }
          : { id: `${g.id}::to:${end}`, sources: [junction], targets: [end] }
      )
  }
  for (const p of pending) {
    if (p.targetless || groupOf.has(p.id)) continue
    const width = Math.max(...p.lines.map((l) => textWidth(l, FONT.label))) + 2 * LABEL_PAD
    const height = Math.ceil(p.lines.length * FONT.label * FONT.line) + 2 * LABEL_PAD
    const label: ElkLabel = { id: `${p.id}::label`, text: p.lines.join("\n"), width, height }
    const edge: ElkExtendedEdge = { id: p.id, sources: [p.source], targets: [p.target], labels: [label] }
    elkNodes.get(containerOf(p.source, p.target))?.edges?.push(edge)
  }

  const laid = await new ELK().layout(elkRoot)

  // Read back every node and edge (coordinates are the root's, as asked by `elk.json.*Coords`).
  const boxes = new Map<string, Box>()
  const edges = new Map<string, ElkExtendedEdge>()
  const collect = (n: ElkNode) => {
    boxes.set(n.id, { x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 })
    for (const e of n.edges ?? []) edges.set(e.id, e)
    for (const c of n.children ?? []) collect(c)
  }
  collect(laid as ElkNode)

  const pointsOf = (id: string): Array<Point> => {
    const section = edges.get(id)?.sections?.[0]
    if (section === undefined) return []
    return [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map(pt)
  }
  const box = (id: string): Box => {
    const b = boxes.get(id) ?? { x: 0, y: 0, width: 0, height: 0 }
    return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
  }

  const states: Array<GraphState> = nodes.map((n) => {
    const s = n.stateNode as unknown as StateNodeLike
    const parent = s.parent === undefined || s.parent.id === root.id ? null : s.parent.id
    return {
      id: s.id,
      path: s.path.join("."),
      key: s.key,
      parent,
      type: s.type,
      initial: s.parent !== undefined && initialOf(s.parent) === s.id,
      depth: s.path.length,
      description: s.description ?? null,
      ...box(s.id)
    }
  })
  // Rows inside the state, in the definition's order, each with a small loop on the state's left edge.
  const rowIndex = new Map<string, number>()
  const internal = (p: Pending) => {
    const state = box(p.source)
    const i = rowIndex.get(p.source) ?? 0
    rowIndex.set(p.source, i + 1)
    const width = textWidth(p.lines[0] ?? "", FONT.label) + 2 * LABEL_PAD
    const y = state.y + STATE_HEIGHT - 4 + i * ROW_HEIGHT
    const mid = y + ROW_HEIGHT / 2
    return {
      label: { x: round(state.x + STATE_PAD_X), y: round(y + 1), width, height: ROW_HEIGHT - 2 },
      points: [
        { x: state.x, y: round(mid - 4) },
        { x: round(state.x - LOOP), y: round(mid - 4) },
        { x: round(state.x - LOOP), y: round(mid + 4) },
        { x: state.x, y: round(mid + 4) }
      ]
    }
  }
  const transitions: Array<GraphTransition> = pending.map((p) => {
    if (p.targetless) {
      const { label, points } = internal(p)
      return {
        id: p.id,
        source: p.source,
        target: p.target,
        event: p.event,
        guard: p.guard,
        actions: p.actions,
        order: p.order,
        targetless: true,
        label: { lines: p.lines, ...label },
        points,
        group: null
      }
    }
    const group = groupOf.get(p.id)
    if (group !== undefined) {
      const g = groups.find((x) => x.id === group)!
      const shared = edges.get(`${group}::shared`)?.labels?.[0]
      const row = g.members.indexOf(p)
      const text =
        g.kind === "into"
          ? `${states.find((x) => x.id === p.source)?.path ?? p.source}${p.guard === null ? "" : ` [${p.guard}]`}`
          : `${p.guard === null ? "" : `[${p.guard}] `}→ ${states.find((x) => x.id === p.target)?.path ?? p.target}`
      const rowsTop = round((shared?.y ?? 0) + (shared?.height ?? 0) + 2)
      return {
        id: p.id,
        source: p.source,
        target: p.target,
        event: p.event,
        guard: p.guard,
        actions: p.actions,
        order: p.order,
        targetless: false,
        label: {
          lines: [text],
          x: round(shared?.x ?? 0),
          y: round(rowsTop + row * ROW_HEIGHT),
          width: textWidth(text, FONT.label) + 2 * LABEL_PAD,
          height: ROW_HEIGHT - 2
        },
        points:
          g.kind === "into"
            ? [...pointsOf(`${group}::from:${p.source}`), ...pointsOf(`${group}::shared`).slice(1)]
            : [...pointsOf(`${group}::shared`), ...pointsOf(`${group}::to:${p.target}`).slice(1)],
        group
      }
    }
    const l = edges.get(p.id)?.labels?.[0]
    return {
      id: p.id,
      source: p.source,
      target: p.target,
      event: p.event,
      guard: p.guard,
      actions: p.actions,
      order: p.order,
      targetless: p.targetless,
      label: {
        lines: p.lines,
        x: round(l?.x ?? 0),
        y: round(l?.y ?? 0),
        width: round(l?.width ?? 0),
        height: round(l?.height ?? 0)
      },
      points: pointsOf(p.id),
      group: null
    }
  })
  const transitionGroups: Array<TransitionGroup> = groups.map((g) => {
    const l = edges.get(`${g.id}::shared`)?.labels?.[0]
    const j = box(`${g.id}::junction`)
    return {
      id: g.id,
      event: g.event,
      kind: g.kind,
      state: g.state,
      members: g.members.map((m) => m.id),
      label: {
        lines: groupLines(g),
        x: round(l?.x ?? 0),
        y: round(l?.y ?? 0),
        width: round(l?.width ?? 0),
        height: round(l?.height ?? 0)
      },
      junction: { x: round(j.x + j.width / 2), y: round(j.y + j.height / 2) },
      points: pointsOf(`${g.id}::shared`)
    }
  })
  const initial: Array<InitialArrow> = initialEdges.map((i) => {
    const dot = box(i.dotId)
    return {
      parent: i.parent,
      target: i.target,
      dot: { x: round(dot.x + dot.width / 2), y: round(dot.y + dot.height / 2) },
      points: pointsOf(i.edgeId)
    }
  })
  const whole = box(root.id)
  return {
    machine_id: root.id,
    machine_version: version,
    digest: definitionDigest(machine),
    width: whole.width,
    height: whole.height,
    states,
    transitions,
    groups: transitionGroups,
    initial
  }
}

const cache = new Map<string, Promise<MachineGraph>>()

/**
 * The laid-out graph, computed once per machine, version and definition and then shared: a layout takes ELK a
 * few hundred milliseconds of one core, a read of the cached one nothing.
 */
export const machineGraph = (machine: AnyStateMachine, version: number): Promise<MachineGraph> => {
  const key = `${machine.id}@${version}:${definitionDigest(machine)}`
  let found = cache.get(key)
  if (found === undefined) {
    found = layoutMachine(machine, version)
    cache.set(key, found)
    found.catch(() => cache.delete(key))
  }
  return found
}

/**
 * The machine's definition as Stately's tools take it: the configuration `createMachine` was given (guards and
 * actions by name, implementations left out), which is also what the Stately inspector receives as an actor's
 * `definition`. `createMachine(definition)` rebuilds the same states and transitions.
 */
export const machineDefinition = (machine: AnyStateMachine): unknown =>
  JSON.parse(JSON.stringify(machine.config, (_k, v: unknown) => (typeof v === "function" ? undefined : v)))
