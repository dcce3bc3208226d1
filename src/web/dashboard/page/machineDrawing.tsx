import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import type { LifecycleMachine, MachineTransition, Point, TransitionGroup } from "./inspectorTypes"

const line = (points: ReadonlyArray<Point>) =>
  points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x} ${p.y}`).join(" ")

/** The drawing's window on the page (CSS pixels): the view moves and scales inside it. */
export const DRAWING_HEIGHT = 520
const MIN_ZOOM = 0.2
const MAX_ZOOM = 4
/** One press of an arrow key pans this many screen pixels; one zoom step scales by this factor. */
const PAN_STEP = 80
const ZOOM_STEP = 1.25

/** What part of the drawing is shown: its top left in drawing units, and how many screen pixels one unit takes. */
export interface View {
  readonly x: number
  readonly y: number
  readonly zoom: number
}

/** SVG attribute names are case-sensitive: a focusable SVG element needs `tabindex`, not the DOM's `tabIndex`. */
export const focusable = (inOrder: boolean) => ({ tabindex: inOrder ? "0" : "-1" }) as Record<string, string>

const clampZoom = (z: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z))

/** The view scaled by `factor` about a point of the window (CSS pixels from its top left). */
const zoomAbout = (v: View, factor: number, px: number, py: number): View => {
  const zoom = clampZoom(v.zoom * factor)
  return { zoom, x: v.x + px / v.zoom - px / zoom, y: v.y + py / v.zoom - py / zoom }
}

/** The whole machine's width in the window (never larger than its own size: labels stay at their size or less). */
export const fitView = (machine: LifecycleMachine, width: number): View => {
  const zoom = clampZoom(Math.min(1, width / machine.width, DRAWING_HEIGHT / machine.height))
  return { zoom, x: 0, y: 0 }
}

/**
 * The machine as SVG in a window that pans (drag, arrow keys, buttons) and zooms (wheel, +/−, buttons): states
 * (nested boxes, a double border for final ones), every transition as a routed arrow with its event and guard, the
 * many alike (into needs_attention, out of it on `operator.resumed`) as one edge with a count whose list opens,
 * and a dot into each initial state. Pointing at (or focusing) an edge brings it and its label forward and marks
 * them. `active` marks where the request is, `taken` the transition its step took. Laid out by the service; the
 * default view is the drawing at its own size (labels at their 11 px), on the marked state.
 */
export const MachineDrawing = ({
  machine,
  active,
  previous,
  taken,
  fit,
  label
}: {
  machine: LifecycleMachine
  active: ReadonlyArray<string>
  /** Where the step came from, when it moved: outlined, dashed. */
  previous: ReadonlyArray<string>
  taken: ReadonlyArray<MachineTransition>
  fit: boolean
  label: string
}) => {
  const activeSet = new Set(active)
  const previousSet = new Set(previous.filter((p) => !activeSet.has(p)))
  const takenSet = new Set(taken.map((t) => t.id))
  const region = useRef<HTMLElement>(null)
  const [width, setWidth] = useState(0)
  const [view, setView] = useState<View>({ x: 0, y: 0, zoom: 1 })
  const [hot, setHot] = useState<string | null>(null)
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set())
  const drag = useRef<{ id: number; x: number; y: number } | null>(null)

  useLayoutEffect(() => {
    const node = region.current
    if (node === null) return
    const measure = () => setWidth(node.clientWidth)
    measure()
    const observer = new ResizeObserver(measure)
    observer.observe(node)
    return () => observer.disconnect()
  }, [])

  // The default view: the drawing at its own size on the marked state, or the whole machine when asked.
  const activeKey = active.join("|")
  useEffect(() => {
    if (width === 0) return
    if (fit) {
      setView(fitView(machine, width))
      return
    }
    const marked = machine.states.find((s) => s.path === active[0])
    setView(
      marked === undefined
        ? { x: 0, y: 0, zoom: 1 }
        : {
            zoom: 1,
            x: Math.max(0, Math.min(machine.width - width, marked.x + marked.width / 2 - width / 2)),
            y: Math.max(0, Math.min(machine.height - DRAWING_HEIGHT, marked.y - DRAWING_HEIGHT / 3))
          }
    )
  }, [activeKey, fit, width, machine.digest])

  // The wheel zooms about the pointer; registered by hand, as a listener that may cancel the page's scroll.
  useEffect(() => {
    const node = region.current
    if (node === null) return
    const wheel = (e: WheelEvent) => {
      e.preventDefault()
      const box = node.getBoundingClientRect()
      const factor = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.002))
      setView((v) => zoomAbout(v, factor, e.clientX - box.left, e.clientY - box.top))
    }
    node.addEventListener("wheel", wheel, { passive: false })
    return () => node.removeEventListener("wheel", wheel)
  }, [])

  const zoomBy = (factor: number) => setView((v) => zoomAbout(v, factor, width / 2, DRAWING_HEIGHT / 2))
  const panBy = (dx: number, dy: number) =>
    setView((v) => ({ ...v, x: v.x + dx / v.zoom, y: v.y + dy / v.zoom }))

  const onKey = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return
    const moves: Record<string, () => void> = {
      ArrowLeft: () => panBy(-PAN_STEP, 0),
      ArrowRight: () => panBy(PAN_STEP, 0),
      ArrowUp: () => panBy(0, -PAN_STEP),
      ArrowDown: () => panBy(0, PAN_STEP),
      "+": () => zoomBy(ZOOM_STEP),
      "=": () => zoomBy(ZOOM_STEP),
      "-": () => zoomBy(1 / ZOOM_STEP),
      "0": () => setView((v) => ({ ...v, zoom: 1 }))
    }
    const move = moves[e.key]
    if (move === undefined) return
    e.preventDefault()
    move()
  }

  const states = new Map(machine.states.map((s) => [s.id, s]))
  const ordered = [...machine.states].sort((a, b) => a.depth - b.depth)
  const groupOf = new Map(machine.groups.map((g) => [g.id, g]))
  // The edge pointed at (or taken) is drawn last, over the others, its label readable.
  const transitions = [...machine.transitions].sort(
    (a, b) =>
      Number(a.id === hot || takenSet.has(a.id)) - Number(b.id === hot || takenSet.has(b.id)) ||
      Number(a.group !== null) - Number(b.group !== null)
  )
  const hotGroup =
    hot === null
      ? undefined
      : (groupOf.get(hot) ?? groupOf.get(machine.transitions.find((t) => t.id === hot)?.group ?? ""))
  const toggle = (g: TransitionGroup) =>
    setOpen((o) => {
      const next = new Set(o)
      if (next.has(g.id)) next.delete(g.id)
      else next.add(g.id)
      return next
    })
  const point = (id: string) => ({
    onMouseEnter: () => setHot(id),
    onMouseLeave: () => setHot((h) => (h === id ? null : h)),
    onFocus: () => setHot(id),
    onBlur: () => setHot((h) => (h === id ? null : h))
  })
  const shownWidth = Math.max(1, width) / view.zoom
  const shownHeight = DRAWING_HEIGHT / view.zoom

  return (
    <>
      <fieldset class="row drawing-controls">
        <legend class="visually-hidden">Zoom and pan</legend>
        <button
          type="button"
          class="secondary"
          id="zoom-in"
          aria-label="Zoom in"
          onClick={() => zoomBy(ZOOM_STEP)}
        >
          +
        </button>
        <button
          type="button"
          class="secondary"
          id="zoom-out"
          aria-label="Zoom out"
          onClick={() => zoomBy(1 / ZOOM_STEP)}
        >
          −
        </button>
        <button
          type="button"
          class="secondary"
          id="zoom-reset"
          onClick={() => setView((v) => ({ ...v, zoom: 1 }))}
        >
          Actual size
        </button>
        <span class="hint" id="zoom-level" aria-live="polite">
          {Math.round(view.zoom * 100)} %
        </span>
      </fieldset>
      <section
        ref={region}
        class="scroll drawing"
        aria-label="The lifecycle machine"
        aria-describedby="drawing-keys"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the drawing's window pans and zooms by keyboard
        tabIndex={0}
        onKeyDown={onKey}
        onPointerDown={(e) => {
          if (e.button !== 0 || (e.target as Element).closest(".group-label") !== null) return
          drag.current = { id: e.pointerId, x: e.clientX, y: e.clientY }
          region.current?.setPointerCapture(e.pointerId)
        }}
        onPointerMove={(e) => {
          const d = drag.current
          if (d === null || d.id !== e.pointerId) return
          panBy(d.x - e.clientX, d.y - e.clientY)
          drag.current = { id: d.id, x: e.clientX, y: e.clientY }
        }}
        onPointerUp={() => {
          drag.current = null
        }}
        onPointerCancel={() => {
          drag.current = null
        }}
      >
        <svg
          class="machine"
          viewBox={`${view.x} ${view.y} ${shownWidth} ${shownHeight}`}
          width="100%"
          height={DRAWING_HEIGHT}
          aria-label={label}
          id="machine"
          data-status={active[0]}
          data-zoom={view.zoom}
        >
          <defs>
            <marker
              id="arrow"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="9"
              markerUnits="userSpaceOnUse"
              markerHeight="9"
              orient="auto"
            >
              <path d="M0 0 L10 5 L0 10 z" class="arrowhead" />
            </marker>
            <marker
              id="arrow-taken"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="9"
              markerUnits="userSpaceOnUse"
              markerHeight="9"
              orient="auto"
            >
              <path d="M0 0 L10 5 L0 10 z" class="arrowhead taken" />
            </marker>
          </defs>
          {ordered.map((s) => (
            <g
              key={s.id}
              class={`state ${s.type}${activeSet.has(s.path) ? " active" : ""}${previousSet.has(s.path) ? " previous" : ""}`}
              data-state={s.path}
              data-type={s.type}
              data-initial={s.initial ? "true" : "false"}
              data-active={activeSet.has(s.path) ? "true" : "false"}
            >
              <rect x={s.x} y={s.y} width={s.width} height={s.height} rx={8} />
              {s.type === "final" ? (
                <rect
                  class="inner"
                  x={s.x + 4}
                  y={s.y + 4}
                  width={s.width - 8}
                  height={s.height - 8}
                  rx={5}
                />
              ) : null}
              <text
                x={s.type === "compound" || s.type === "parallel" ? s.x + 12 : s.x + s.width / 2}
                y={s.type === "compound" || s.type === "parallel" ? s.y + 22 : s.y + 25}
                text-anchor={s.type === "compound" || s.type === "parallel" ? "start" : "middle"}
              >
                {s.key}
              </text>
            </g>
          ))}
          {machine.initial.map((i) => (
            <g key={`${i.parent}-initial`} class="initial" data-initial-of={i.target}>
              <circle cx={i.dot.x} cy={i.dot.y} r={5} />
              <path d={line(i.points)} marker-end="url(#arrow)" />
            </g>
          ))}
          {machine.groups.map((g) => {
            const isTaken = g.members.some((m) => takenSet.has(m))
            const isOpen = open.has(g.id)
            return (
              <g
                key={g.id}
                class={`group${isTaken ? " taken" : ""}${hotGroup?.id === g.id ? " hot" : ""}`}
                data-group={g.id}
                data-members={g.members.length}
                data-open={isOpen ? "true" : "false"}
                {...point(g.id)}
              >
                <path
                  d={line(g.points)}
                  marker-end={g.kind === "into" ? (isTaken ? "url(#arrow-taken)" : "url(#arrow)") : undefined}
                />
                <circle class="junction" cx={g.junction.x} cy={g.junction.y} r={4} />
                {/* biome-ignore lint/a11y/useSemanticElements: no <button> inside SVG; it takes Enter and Space */}
                <g
                  class="group-label"
                  role="button"
                  {...focusable(true)}
                  aria-expanded={isOpen}
                  onClick={() => toggle(g)}
                  onKeyDown={(e) => {
                    if (e.key !== "Enter" && e.key !== " ") return
                    e.preventDefault()
                    e.stopPropagation()
                    toggle(g)
                  }}
                >
                  <LabelBox label={g.label} shown={(l) => (isOpen ? l.replace("▸", "▾") : l)} />
                </g>
              </g>
            )
          })}
          {transitions.map((t) => {
            const isTaken = takenSet.has(t.id)
            const member = t.group === null ? undefined : groupOf.get(t.group)
            const listed = member === undefined || open.has(member.id)
            const isHot = hot === t.id || (member !== undefined && hot === member.id)
            return (
              // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: focusable only to bring it forward
              <g
                key={t.id}
                class={`transition${isTaken ? " taken" : ""}${isHot ? " hot" : ""}${member === undefined ? "" : " member"}`}
                data-transition={t.id}
                data-source={states.get(t.source)?.path}
                data-target={states.get(t.target)?.path}
                data-event={t.event}
                data-guard={t.guard ?? ""}
                data-group={t.group ?? ""}
                data-taken={isTaken ? "true" : "false"}
                role="img"
                aria-label={`${states.get(t.source)?.path} to ${t.targetless ? "itself" : states.get(t.target)?.path} on ${t.event}${t.guard === null ? "" : ` if ${t.guard}`}`}
                {...focusable(listed)}
                {...point(t.id)}
              >
                <path
                  d={line(t.points)}
                  marker-end={
                    member !== undefined && !isTaken && !isHot
                      ? undefined
                      : isTaken || isHot
                        ? "url(#arrow-taken)"
                        : "url(#arrow)"
                  }
                />
                <g class="edge-label" visibility={listed || isTaken || isHot ? "visible" : "hidden"}>
                  <LabelBox label={t.label} shown={(l) => l} />
                </g>
              </g>
            )
          })}
        </svg>
      </section>
      <p class="hint" id="drawing-keys">
        Drag or use the arrow keys to move the drawing; the wheel, + and − zoom, 0 shows it at its own size.
        Point at an arrow to bring it and its label forward; open a count to list the transitions it stands
        for.
      </p>
    </>
  )
}

/** An edge's label: its box, the event on the first line and the guard (or a group's members) below. */
const LabelBox = (props: {
  readonly label: {
    readonly x: number
    readonly y: number
    readonly width: number
    readonly height: number
    readonly lines: ReadonlyArray<string>
  }
  readonly shown: (line: string) => string
}) => (
  <>
    <rect
      class="label"
      x={props.label.x}
      y={props.label.y}
      width={props.label.width}
      height={props.label.height}
      rx={3}
    />
    <text x={props.label.x + 4} y={props.label.y + 4}>
      {props.label.lines.map((l, i) => (
        <tspan key={l} x={props.label.x + 4} dy={i === 0 ? 11 : 14.3} class={i === 0 ? "event" : "guard"}>
          {props.shown(l)}
        </tspan>
      ))}
    </text>
  </>
)
