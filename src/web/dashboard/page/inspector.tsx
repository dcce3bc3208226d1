import { useEffect, useState } from "preact/hooks"
import { api, query, Refusal, sentence } from "./api"
import type { Feed, FeedStep, LifecycleMachine, Step, StepList, StepLocation } from "./inspectorTypes"
import { activePaths, takenTransitions } from "./inspectorState"
import { focusable, MachineDrawing } from "./machineDrawing"
import { stepsAsTest } from "./stepsAsTest"
import type { Answer } from "./types"
import { Field, Loading, Notice, Refused, Scroll, Status, useAction, useLoad, When } from "./ui"

/**
 * The lifecycle inspector: the machine every request runs, drawn from its definition (laid out by the service);
 * one request followed live, step by step as each commits, and replayed backwards and forwards; the account's
 * actors stepping now. Everything it reads is the public API on this origin.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const words = (s: string | null | undefined) => (s ?? "—").replaceAll("_", " ")
const json = (v: unknown) => JSON.stringify(v, null, 2)

/** A JSON answer of the API saved as a file (the routes need the session's bearer, so not a plain link). */
const download = async (path: string, fileName: string) => {
  const body = await api<unknown>("GET", path)
  const url = URL.createObjectURL(new Blob([json(body)], { type: "application/json" }))
  const a = document.createElement("a")
  a.href = url
  a.download = fileName
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return `Saved ${fileName}.`
}

const useMachine = () => useLoad(() => api<LifecycleMachine>("GET", "/v1/lifecycle/machine"), [])

/** The drawing in its window (panned and zoomed inside), with a toggle between its own size and the whole machine. */
const Drawing = ({
  machine,
  step,
  label
}: {
  machine: LifecycleMachine
  step: Step | undefined
  label: string
}) => {
  const [fit, setFit] = useState(false)
  return (
    <>
      <div class="row">
        <button type="button" class="secondary" aria-pressed={fit} onClick={() => setFit(!fit)} id="fit">
          Whole machine
        </button>
      </div>
      <MachineDrawing
        machine={machine}
        active={activePaths(step?.state_after)}
        previous={activePaths(step?.state_before)}
        taken={takenTransitions(machine, step?.transition)}
        fit={fit}
        label={label}
      />
    </>
  )
}

/** The drawing in words, for a screen reader or a narrow screen: every transition, guards in the order tried. */
const TransitionTable = ({ machine }: { machine: LifecycleMachine }) => {
  const path = new Map(machine.states.map((s) => [s.id, s.path]))
  return (
    <details>
      <summary>The transitions as a table</summary>
      <Scroll label="The machine's transitions">
        <table id="transitions">
          <thead>
            <tr>
              <th>From</th>
              <th>Event</th>
              <th>Guard</th>
              <th>To</th>
            </tr>
          </thead>
          <tbody>
            {machine.transitions.map((t) => (
              <tr key={t.id}>
                <td class="mono">{path.get(t.source)}</td>
                <td class="mono">{t.event}</td>
                <td class="mono">{t.guard ?? ""}</td>
                <td class="mono">{t.targetless ? "(stays)" : path.get(t.target)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
    </details>
  )
}

const ExportMachine = () => {
  const action = useAction()
  return (
    <>
      <button
        type="button"
        class="secondary"
        id="export-machine"
        disabled={action.busy}
        onClick={() =>
          action.run(() => download("/v1/lifecycle/machine/definition", "deposit-request-machine.json"))
        }
      >
        Export the machine for Stately
      </button>
      <Notice text={action.notice} />
      <Refused error={action.error} docUrl={action.docUrl} />
    </>
  )
}

/** `#/inspector/<what>` for the step an id, a hash or a credit leads to. */
const stepRoute = (found: StepLocation) =>
  `#/inspector/${encodeURIComponent(found.deposit_request_id)}/${found.version}`

/**
 * One box for anything an engineer holds: a request, an event or a webhook delivery id, a transaction hash or a
 * credit id; it opens the step it leads to (the service looks it up in the account's own requests).
 */
const FindStep = () => {
  const action = useAction()
  return (
    <form
      class="row"
      id="find-step"
      onSubmit={(e) => {
        e.preventDefault()
        const q = new FormData(e.currentTarget).get("find-q")?.toString().trim() ?? ""
        if (q === "") return
        void action.run(async () => {
          const found = await api<StepLocation>("GET", `/v1/lifecycle/steps/find${query({ q })}`)
          location.hash = stepRoute(found)
          return `Step ${found.version} of ${found.deposit_request_id}.`
        })
      }}
    >
      <Field
        id="find-q"
        label="Find a step"
        hint="A dr_, evt_ or whd_ id, a transaction hash or a credit id (chain:hash:log index)."
      >
        <input id="find-q" name="find-q" class="mono" autoComplete="off" aria-describedby="find-q-hint" />
      </Field>
      <button type="submit" disabled={action.busy}>
        Open
      </button>
      <Notice text={action.notice} />
      <Refused error={action.error} docUrl={action.docUrl} />
    </form>
  )
}

/** `#/inspector/evt_…` (and the like): looks the step up and opens it in place of this address. */
const Resolve = ({ q }: { q: string }) => {
  const [error, setError] = useState<string>()
  useEffect(() => {
    api<StepLocation>("GET", `/v1/lifecycle/steps/find${query({ q })}`).then(
      (found) => location.replace(stepRoute(found)),
      (e) => setError(sentence(e))
    )
  }, [q])
  return (
    <>
      <h1 tabIndex={-1}>Inspector: {q}</h1>
      {error === undefined ? <Loading what="the step" /> : <Refused error={error} />}
      <FindStep />
    </>
  )
}

/** `#/inspector`: the machine, a way to follow one request, and the account's steps as they commit. */
const Overview = ({ machine }: { machine: LifecycleMachine }) => {
  const statuses = machine.states.filter((s) => s.parent === null).map((s) => s.path)
  return (
    <>
      <h1 tabIndex={-1}>Inspector</h1>
      <p>
        The lifecycle every deposit request runs, drawn from the machine's definition. Follow one request to
        see each step as it commits, or replay its history.
      </p>
      <FindStep />
      <section aria-labelledby="machine-title">
        <h2 id="machine-title">The machine</h2>
        <Drawing
          machine={machine}
          step={undefined}
          label={`The deposit request lifecycle: ${machine.states.length} states and ${machine.transitions.length} transitions.`}
        />
        <TransitionTable machine={machine} />
        <ExportMachine />
      </section>
      <AccountFeed statuses={statuses} />
    </>
  )
}

/** The account's actors stepping now: its steps as they commit on any instance, newest first. */
const AccountFeed = ({ statuses }: { statuses: ReadonlyArray<string> }) => {
  const [status, setStatus] = useState("")
  const [rows, setRows] = useState<ReadonlyArray<FeedStep>>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    setRows([])
    const controller = new AbortController()
    const follow = async () => {
      let cursor: string | undefined
      let first = true
      let delay = 1_000
      while (!controller.signal.aborted) {
        try {
          const asked = Date.now()
          const feed = await api<Feed>(
            "GET",
            `/v1/lifecycle/steps${query({
              after: cursor,
              status: status || undefined,
              limit: "50",
              wait_for: first ? undefined : "change"
            })}`,
            undefined,
            {},
            controller.signal
          )
          first = false
          const moved = feed.next_cursor !== null && feed.next_cursor !== cursor
          if (feed.next_cursor !== null) cursor = feed.next_cursor
          if (feed.data.length > 0) setRows((old) => [...[...feed.data].reverse(), ...old].slice(0, 50))
          // A step of another status ends a filtered wait empty, with the cursor past it: ask again at once.
          else if (!moved && Date.now() - asked < 1_000) await sleep(delay)
          setError(undefined)
          delay = 1_000
        } catch (e) {
          if (controller.signal.aborted) return
          setError(sentence(e))
          await sleep(delay)
          delay = Math.min(delay * 2, 15_000)
        }
      }
    }
    void follow()
    return () => controller.abort()
  }, [status])
  return (
    <section aria-labelledby="feed-title">
      <h2 id="feed-title">Stepping now</h2>
      <p class="hint">
        Every step of the account's requests as it commits, on every instance of the service.
      </p>
      <Field id="feed-status" label="Status after the step">
        <select id="feed-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">Any status</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {words(s)}
            </option>
          ))}
        </select>
      </Field>
      <Refused error={error} />
      {rows.length === 0 ? (
        <p id="feed-empty">No steps yet.</p>
      ) : (
        <Scroll label="Steps of the account's requests">
          <table id="feed">
            <thead>
              <tr>
                <th>When</th>
                <th>Request</th>
                <th>Event</th>
                <th>Status</th>
                <th>Instance</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.deposit_request_id}:${r.version}`} data-id={r.deposit_request_id}>
                  <td>
                    <When at={r.at} />
                  </td>
                  <td>
                    <a href={`#/inspector/${r.deposit_request_id}`} class="mono">
                      {r.deposit_request_id}
                    </a>{" "}
                    v{r.version}
                  </td>
                  <td class="mono">{r.event_type}</td>
                  <td>
                    {r.status_before === null ? null : (
                      <>
                        <Status status={r.status_before} /> →{" "}
                      </>
                    )}
                    <Status status={r.status_after} />
                  </td>
                  <td class="mono">{r.instance}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  )
}

const Emitted = ({ step }: { step: Step }) => {
  const all = [...step.emitted.lifecycle, ...step.emitted.commands.map((c) => `command ${c}`)]
  return all.length === 0 ? <span>nothing</span> : <span class="mono">{all.join(", ")}</span>
}

/** What one step was and did: the event, the guard that passed, what it emitted, the context's changes. */
type Deliveries = Answer<"/v1/deposit-requests/{id}/deliveries", "get">["deliveries"]

/** The events a step's commit stored, each with its webhook deliveries (the other way: a delivery's step link). */
const EmittedEvents = ({ step, deliveries }: { step: Step; deliveries: Deliveries }) =>
  step.emitted.events.length === 0 ? null : (
    <ul class="plain" id="step-events">
      {step.emitted.events.map((e) => {
        const mine = deliveries.filter((d) => d.event_id === e.id)
        return (
          <li key={e.id} data-event-id={e.id}>
            <span class="mono">{e.type}</span> <code>{e.id}</code>:{" "}
            {mine.length === 0
              ? "no webhook delivery yet"
              : mine.map((d, i) => (
                  <span key={d.id}>
                    {i === 0 ? "" : ", "}
                    <a href={`#/webhooks/${d.webhook_id}`} class="delivery-link" data-delivery={d.id}>
                      delivery {d.attempt === 1 ? "" : `attempt ${d.attempt} `}to {d.webhook_id}
                    </a>{" "}
                    ({d.outcome})
                  </span>
                ))}
          </li>
        )
      })}
    </ul>
  )

const StepDetail = ({ step, deliveries }: { step: Step; deliveries: Deliveries }) => {
  const { type, ...payload } = step.event
  return (
    <section aria-labelledby="step-title" id="step-detail" data-version={step.version}>
      <h2 id="step-title">
        Step {step.version}: <span class="mono">{type}</span>
      </h2>
      <dl class="facts">
        <dt>When</dt>
        <dd>
          <When at={step.at} /> on <span class="mono">{step.instance}</span>
        </dd>
        <dt>Status</dt>
        <dd id="step-status">
          {step.status_before === null ? null : (
            <>
              <Status status={step.status_before} /> →{" "}
            </>
          )}
          <Status status={step.status_after} />
        </dd>
        <dt>Transition</dt>
        <dd id="step-transition">
          {step.transition === null
            ? "None taken: no transition of this state takes the event, or no guard passed."
            : `${step.transition.event}${step.transition.guard === null ? "" : ` [${step.transition.guard}]`}`}
        </dd>
        <dt>Guard passed</dt>
        <dd id="step-guard" class="mono">
          {step.transition?.guard ?? "—"}
        </dd>
        <dt>Emitted</dt>
        <dd id="step-emitted">
          <Emitted step={step} />
          <EmittedEvents step={step} deliveries={deliveries} />
        </dd>
        <dt>Event payload</dt>
        <dd>
          <code id="step-payload">{JSON.stringify(payload)}</code>
        </dd>
      </dl>
      <h3>Context changes</h3>
      {step.context_changes.length === 0 ? (
        <p>None.</p>
      ) : (
        <Scroll label="Context changes">
          <table id="context-changes">
            <thead>
              <tr>
                <th>Change</th>
                <th>Path</th>
                <th>Before</th>
                <th>After</th>
              </tr>
            </thead>
            <tbody>
              {step.context_changes.map((c) => (
                <tr key={c.path} data-change={c.change} data-path={c.path}>
                  <td>
                    {c.change === "added" ? "+ added" : c.change === "removed" ? "− removed" : "changed"}
                  </td>
                  <td class="mono">{c.path}</td>
                  <td class="mono">{c.change === "added" ? "" : JSON.stringify(c.before)}</td>
                  <td class="mono">{c.change === "removed" ? "" : JSON.stringify(c.after)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <details>
        <summary>Snapshot before</summary>
        <Scroll label="Snapshot before">
          <pre id="snapshot-before">{json(step.snapshot_before)}</pre>
        </Scroll>
      </details>
      <details>
        <summary>Snapshot after</summary>
        <Scroll label="Snapshot after">
          <pre id="snapshot-after">{json(step.snapshot_after)}</pre>
        </Scroll>
      </details>
    </section>
  )
}

/** `#/inspector/dr_…`: one request, live, with its history to step through. */
const Follow = ({ id, at, machine }: { id: string; at: number | undefined; machine: LifecycleMachine }) => {
  const [steps, setSteps] = useState<ReadonlyArray<Step>>([])
  const [retained, setRetained] = useState<number | null>(null)
  const [loaded, setLoaded] = useState(false)
  const [error, setError] = useState<string>()
  /** The step shown; null follows the newest. */
  const [chosen, setChosen] = useState<number | null>(null)
  const exporting = useAction()
  const copying = useAction()
  const [asTest, setAsTest] = useState<string>()
  // The step the address names (`#/inspector/dr_…/7`, from a search or a delivery), once it has arrived.
  useEffect(() => {
    if (at === undefined) return
    const i = steps.findIndex((s) => s.version === at)
    if (i >= 0) setChosen(i === steps.length - 1 ? null : i)
  }, [at, steps.length > 0 && steps.some((s) => s.version === at)])
  const deliveries = useLoad(
    () =>
      api<Answer<"/v1/deposit-requests/{id}/deliveries", "get">>(
        "GET",
        `/v1/deposit-requests/${encodeURIComponent(id)}/deliveries`
      ),
    [id, steps.length]
  )

  useEffect(() => {
    setSteps([])
    setChosen(null)
    setLoaded(false)
    const controller = new AbortController()
    const follow = async () => {
      let after = 0
      let first = true
      let delay = 1_000
      while (!controller.signal.aborted) {
        try {
          const asked = Date.now()
          const got = await api<StepList>(
            "GET",
            `/v1/deposit-requests/${encodeURIComponent(id)}/steps${query({
              after_version: String(after),
              wait_for: first ? undefined : "change",
              timeout: first ? undefined : "25"
            })}`,
            undefined,
            {},
            controller.signal
          )
          first = false
          const fresh = got.data.filter((s) => s.version > after)
          if (fresh.length > 0) {
            after = Math.max(after, ...fresh.map((s) => s.version))
            setSteps((old) => [...old, ...fresh.filter((s) => !old.some((o) => o.version === s.version))])
          } else if (Date.now() - asked < 1_000) await sleep(delay)
          setRetained(got.retained_from_version)
          setLoaded(true)
          setError(undefined)
          delay = 1_000
        } catch (e) {
          if (controller.signal.aborted) return
          setError(sentence(e))
          setLoaded(true)
          // Not this account's request (or no such one): asking again will not change that.
          if (e instanceof Refusal && e.status === 404) return
          await sleep(delay)
          delay = Math.min(delay * 2, 15_000)
        }
      }
    }
    void follow()
    return () => controller.abort()
  }, [id])

  const last = steps.length - 1
  const index = chosen === null ? last : Math.min(chosen, last)
  const shown = index >= 0 ? steps[index] : undefined
  const go = (to: number | null) => setChosen(to === null || to >= last ? null : Math.max(0, to))

  // ← and → step through the history anywhere on the page but in a field or a scrolling region.
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return
      const t = e.target as HTMLElement | null
      if (t !== null && (t.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName))) return
      // In a scrolling region (the drawing, a snapshot) the arrows scroll it, as a keyboard user expects.
      if (t !== null && t.closest(".scroll") !== null) return
      if (e.key === "ArrowLeft" && index > 0) {
        e.preventDefault()
        go(index - 1)
      } else if (e.key === "ArrowRight" && chosen !== null) {
        e.preventDefault()
        go(index + 1)
      }
    }
    addEventListener("keydown", key)
    return () => removeEventListener("keydown", key)
  }, [index, chosen, last])

  const where = shown === undefined ? "" : activePaths(shown.state_after).join(", ")
  return (
    <>
      <p>
        <a href="#/inspector">Inspector</a> · <a href={`#/requests/${id}`}>The request</a>
      </p>
      <h1 tabIndex={-1}>Inspector: {id}</h1>
      <FindStep />
      <Refused error={error} />
      {!loaded ? <Loading what="the request's steps" /> : null}
      <p role="status" id="inspector-status" data-mode={chosen === null ? "live" : "replay"}>
        {shown === undefined
          ? ""
          : chosen === null
            ? `Live: step ${shown.version}, in ${words(where)}.`
            : `Replaying step ${shown.version} of ${steps[last]?.version ?? ""}, in ${words(where)}.`}
      </p>
      <section aria-labelledby="drawing-title">
        <h2 id="drawing-title">Where it is</h2>
        <Drawing
          machine={machine}
          step={shown}
          label={
            shown === undefined
              ? "The deposit request lifecycle."
              : `The deposit request lifecycle, ${id} in ${words(where)}${shown.transition === null ? "" : `, after ${shown.transition.event}`}.`
          }
        />
        <fieldset class="row history">
          <legend class="visually-hidden">History</legend>
          <button
            type="button"
            class="secondary"
            id="step-back"
            disabled={index <= 0}
            onClick={() => go(index - 1)}
          >
            ← Earlier step
          </button>
          <button
            type="button"
            class="secondary"
            id="step-forward"
            disabled={chosen === null}
            onClick={() => go(index + 1)}
          >
            Later step →
          </button>
          <button
            type="button"
            class="secondary"
            id="step-live"
            disabled={chosen === null}
            onClick={() => go(null)}
          >
            Live
          </button>
          <button
            type="button"
            class="secondary"
            id="step-pause"
            disabled={pauseIndex(steps) < 0}
            onClick={() => go(pauseIndex(steps))}
          >
            Jump to the pause
          </button>
        </fieldset>
        <p class="hint">The ← and → keys step through the history too (inside the drawing they scroll it).</p>
      </section>
      <Timeline steps={steps} index={index} go={go} />
      {shown === undefined ? null : (
        <StepDetail step={shown} deliveries={deliveries.data?.deliveries ?? []} />
      )}
      <section aria-labelledby="steps-title">
        <h2 id="steps-title">Steps</h2>
        {retained !== null && retained > 1 ? (
          <p class="hint">Steps before {retained} are past the history's retention.</p>
        ) : null}
        <ol id="steps" class="steps">
          {steps.map((s, i) => (
            <li key={s.version} data-version={s.version} aria-current={i === index ? "step" : undefined}>
              <button type="button" class="link" onClick={() => go(i)}>
                <span class="mono">v{s.version}</span> <span class="mono">{s.event.type}</span>:{" "}
                {s.status_before === null || s.status_before === s.status_after
                  ? words(s.status_after)
                  : `${words(s.status_before)} → ${words(s.status_after)}`}
                {s.transition?.guard === undefined || s.transition.guard === null
                  ? ""
                  : ` [${s.transition.guard}]`}
              </button>{" "}
              <span class="hint">
                emitted <Emitted step={s} />
              </span>
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="export-title">
        <h2 id="export-title">Export</h2>
        <div class="row">
          <ExportMachine />
          <button
            type="button"
            class="secondary"
            id="export-steps"
            disabled={exporting.busy}
            onClick={() =>
              exporting.run(() =>
                download(`/v1/deposit-requests/${encodeURIComponent(id)}/steps/stately`, `${id}-stately.json`)
              )
            }
          >
            Export the steps for Stately
          </button>
        </div>
        <Notice text={exporting.notice} />
        <Refused error={exporting.error} docUrl={exporting.docUrl} />
        <div class="row">
          <button
            type="button"
            class="secondary"
            id="copy-test"
            disabled={copying.busy || steps.length === 0}
            onClick={() =>
              copying.run(async () => {
                const source = stepsAsTest(id, steps)
                setAsTest(source)
                try {
                  await navigator.clipboard.writeText(source)
                  return "Copied: an @effect/vitest test that replays these steps through the machine."
                } catch {
                  return "The test is below (this browser did not allow copying)."
                }
              })
            }
          >
            Copy as a test
          </button>
        </div>
        <Notice text={copying.notice} />
        {asTest === undefined ? null : (
          <Scroll label="The steps as a test">
            <pre id="as-test">{asTest}</pre>
          </Scroll>
        )}
      </section>
    </>
  )
}

/** The latest step that paused the request (into needs_attention from elsewhere); -1 when none did. */
const pauseIndex = (steps: ReadonlyArray<Step>) =>
  steps.findLastIndex((s) => s.status_after === "needs_attention" && s.status_before !== "needs_attention")

const TIMELINE = { width: 1000, height: 40, pad: 16 } as const

/** The steps on a time axis, each a point to open, with the first and last instants and the span between. */
const Timeline = ({
  steps,
  index,
  go
}: {
  steps: ReadonlyArray<Step>
  index: number
  go: (to: number) => void
}) => {
  if (steps.length === 0) return null
  const times = steps.map((s) => Date.parse(s.at))
  const first = times[0]!
  const span = Math.max(1, times[times.length - 1]! - first)
  const x = (t: number) => TIMELINE.pad + ((t - first) / span) * (TIMELINE.width - 2 * TIMELINE.pad)
  const seconds = (ms: number) =>
    ms < 1_000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Time axis</h2>
      <svg
        class="timeline"
        id="timeline"
        viewBox={`0 0 ${TIMELINE.width} ${TIMELINE.height}`}
        width="100%"
        aria-label={`${steps.length} steps over ${seconds(span)}`}
      >
        <line x1={TIMELINE.pad} y1={20} x2={TIMELINE.width - TIMELINE.pad} y2={20} class="axis" />
        {steps.map((s, i) => (
          // biome-ignore lint/a11y/useSemanticElements: no <button> inside SVG; it takes Enter and Space
          <g
            key={s.version}
            class={`tick${i === index ? " current" : ""}${s.status_after === "needs_attention" ? " paused" : ""}`}
            data-version={s.version}
            role="button"
            {...focusable(true)}
            aria-label={`Step ${s.version}, ${s.event.type}, ${seconds(times[i]! - first)} after the first`}
            aria-current={i === index ? "step" : undefined}
            onClick={() => go(i)}
            onKeyDown={(e) => {
              if (e.key !== "Enter" && e.key !== " ") return
              e.preventDefault()
              go(i)
            }}
          >
            <circle cx={x(times[i]!)} cy={20} r={i === index ? 8 : 6} />
          </g>
        ))}
      </svg>
      <p class="hint" id="timeline-span">
        From <When at={steps[0]!.at} /> to <When at={steps[steps.length - 1]!.at} /> ({seconds(span)}); a step
        that paused the request is ringed.
      </p>
    </section>
  )
}

export const Inspector = ({ id, at }: { id: string | undefined; at?: string | undefined }) => {
  const machine = useMachine()
  if (machine.data === undefined)
    return (
      <>
        <h1 tabIndex={-1}>{id === undefined ? "Inspector" : `Inspector: ${id}`}</h1>
        {machine.error === undefined ? <Loading what="the machine" /> : <Refused error={machine.error} />}
      </>
    )
  if (id === undefined) return <Overview machine={machine.data} />
  if (!id.startsWith("dr_")) return <Resolve q={id} />
  const version = at === undefined || !/^\d{1,9}$/.test(at) ? undefined : Number(at)
  return <Follow id={id} at={version} machine={machine.data} />
}
