import { useEffect, useRef } from "preact/hooks"
import type { LifecycleMachine, MachineTransition, Point } from "./inspectorTypes"

const line = (points: ReadonlyArray<Point>) =>
  points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x} ${p.y}`).join(" ")

/**
 * The machine as SVG: states (nested boxes, a double border for final ones), every transition as a routed arrow
 * with its event and guard, and a dot into each initial state. `active` marks where the request is, `taken` the
 * transition its step took. Laid out by the service; drawn here as it comes.
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
  const svg = useRef<SVGSVGElement>(null)
  // The marked state scrolled into the scrolling region's view (the drawing is wider than most screens).
  const activeKey = active.join("|")
  useEffect(() => {
    if (fit) return
    const node = svg.current?.querySelector(".state[data-active='true'] rect")
    const region = svg.current?.parentElement
    if (!(node instanceof SVGGraphicsElement) || region === null || region === undefined) return
    const box = node.getBBox()
    region.scrollLeft = Math.max(0, box.x + box.width / 2 - region.clientWidth / 2)
  }, [activeKey, fit])
  const ordered = [...machine.states].sort((a, b) => a.depth - b.depth)
  return (
    <svg
      ref={svg}
      class="machine"
      viewBox={`0 0 ${machine.width} ${machine.height}`}
      width={fit ? "100%" : machine.width}
      height={fit ? undefined : machine.height}
      role="img"
      aria-label={label}
      id="machine"
      data-status={active[0]}
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
            <rect class="inner" x={s.x + 4} y={s.y + 4} width={s.width - 8} height={s.height - 8} rx={5} />
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
      {machine.transitions.map((t) => {
        const isTaken = takenSet.has(t.id)
        const source = machine.states.find((s) => s.id === t.source)
        const target = machine.states.find((s) => s.id === t.target)
        return (
          <g
            key={t.id}
            class={`transition${isTaken ? " taken" : ""}`}
            data-transition={t.id}
            data-source={source?.path}
            data-target={target?.path}
            data-event={t.event}
            data-guard={t.guard ?? ""}
            data-taken={isTaken ? "true" : "false"}
          >
            <path d={line(t.points)} marker-end={isTaken ? "url(#arrow-taken)" : "url(#arrow)"} />
            <rect
              class="label"
              x={t.label.x}
              y={t.label.y}
              width={t.label.width}
              height={t.label.height}
              rx={3}
            />
            <text x={t.label.x + 4} y={t.label.y + 4}>
              {t.label.lines.map((l, i) => (
                <tspan key={l} x={t.label.x + 4} dy={i === 0 ? 11 : 14.3} class={i === 0 ? "event" : "guard"}>
                  {l}
                </tspan>
              ))}
            </text>
          </g>
        )
      })}
    </svg>
  )
}
